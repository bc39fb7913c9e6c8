"""Export of people's judgments of generative answers (``tasks/kinds/open_ended.py``) in the
layouts that training libraries load directly, anonymised like every export.

Two layouts, one JSONL file each (one schema per file, so ``datasets.load_dataset("json", ...)``
reads it without a schema of its own):

- ``messages``: one record per judged conversation, ``{"messages": [{"role", "content"}, ...],
  "judgment": {"verdict", "category", "explanation"}, ...}`` (the chat layout of TRL's SFT
  trainer and of chat templates);
- ``preferences``: one record per side-by-side comparison with a winner, ``{"prompt": [system
  message (when the task has a system prompt), user message], "chosen": [assistant message], "rejected": [assistant message], "judgment": {...},
  ...}`` (the conversational preference layout of TRL's DPO/reward trainers). Ties and "both bad"
  have no chosen answer and are left out of this layout (they count in the arena as ties).

Only validated judgments are exported (``validation.selectors.validated_examples``: confirmed by
the validators' consensus or an owner; overturned ones are not data). Every record also carries
``id`` (the example), ``task``, ``round``, ``annotator`` (``sha256(round.secret + user id)[:16]``,
``calculations.anonymise``, as ``export_rows``), ``models`` (names of the models that answered,
"anonymous" for an anonymous model), and ``split`` once the round is closed.
"""

from __future__ import annotations

import json
from typing import Iterator

from tasks.models import MLModel
from validation.calculations import anonymise
from validation.selectors import validated_examples

LAYOUTS = {"messages": "messages", "preferences": "chosen"}
"""Layout name → the key a record of that layout has."""


def judgment_records(task, *, layout: str, rounds=None) -> Iterator[dict]:
    """The records of ``layout`` (``messages`` or ``preferences``) of ``task``'s validated judgments
    (of ``rounds`` when given), in round then id order. Raises ``ValueError`` on an unknown layout."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout is one of {', '.join(LAYOUTS)}, not {layout!r}")
    key, spec, config = LAYOUTS[layout], task.spec, task.config
    chosen = validated_examples(task=task)
    if rounds is not None:
        wanted = {r.pk for r in rounds}
        chosen = [v for v in chosen if v.example.round_id in wanted]
    ids = {m for v in chosen for m in spec.answering_models(config, v.example.model_output)}
    names = {m.pk: ("anonymous" if m.anonymous else m.name) for m in MLModel.objects.filter(pk__in=ids)}
    for v in chosen:
        e = v.example
        for record in spec.export_records(config, e.model_output, v.target) or []:
            if key not in record:
                continue
            yield {
                "id": e.pk, "task": task.code, "round": e.round.number, "annotator": anonymise(e.round.secret, e.author_id),
                **record,
                "models": [names.get(m, "deleted") for m in spec.answering_models(config, e.model_output)],
                "split": e.split,
            }


def judgment_lines(task, *, layout: str, rounds=None) -> Iterator[bytes]:
    """``judgment_records`` as UTF-8 JSON Lines."""
    for record in judgment_records(task, layout=layout, rounds=rounds):
        yield (json.dumps(record, ensure_ascii=False) + "\n").encode()
