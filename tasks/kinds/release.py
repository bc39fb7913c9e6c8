"""What a task kind's dataset releases hold (``releases/``): the defaults every kind inherits
(``TaskKindSpec`` subclasses ``ReleaseSchema``); a kind overrides them when its targets have a better type."""

from __future__ import annotations


class ReleaseSchema:
    """The columns of a kind's released JSONL and Parquet files, and its Hugging Face task category."""

    release_task_category: str = ""
    """The Hugging Face hub's ``task_categories`` value a release's dataset card gives (``releases/card.py``); empty: none."""

    def release_columns(self, config: dict) -> list[dict]:
        """The columns a release carries after ``uid``, ``round``, ``split`` and ``tag`` (``releases/files.py``),
        one ``{"name", "source", "key", "type"}`` per column: ``source`` is the ``DatasetItem`` field read
        (``input`` or ``target``), ``key`` the key in it, ``type`` one of ``string`` (text), ``label`` (one of
        ``"names"``, a Hugging Face ``ClassLabel``: its index in Parquet, its name in JSONL) or ``json`` (any
        value, as JSON text). Default: each model input as text, then the target's ``target_field`` as JSON text.
        A model input that is a media context field (an image's or a clip's sha256) is written as the path of
        its file in the release (``releases/media.py``)."""
        inputs = list(config.get("model_inputs", []))
        key = getattr(self, "target_field", "") or "target"
        columns = [{"name": name, "source": "input", "key": name, "type": "string"} for name in inputs]
        return [*columns, {"name": key if key not in inputs else f"target_{key}", "source": "target", "key": key, "type": "json"}]
