"""What the annotator wrote, as one text (``TaskKindSpec`` subclasses ``WrittenText``): diversity and
near-duplicates (``annotation/diversity/``) embed it; a kind overrides it when its written text is elsewhere."""

from __future__ import annotations


class WrittenText:
    """The text an annotator wrote for an example, never the context they were shown."""

    def written_text(self, config: dict, example_input: dict) -> str:
        """Return the text the annotator wrote for an example: the values of ``config["input_fields"]``
        that are text (not an image's or audio's reference), in the config's order, joined by a
        newline; ``""`` when there is none. Diversity and near-duplicates (``annotation/diversity/``)
        embed this text, never the context the annotator was shown.

        E.g. NLI ``{"premise": "...", "hypothesis": "A man sleeps."}`` → ``"A man sleeps."``."""
        parts = []
        for field in config.get("input_fields", []):
            value = (example_input or {}).get(field["name"])
            if field.get("type", "text") == "text" and isinstance(value, str) and value.strip():
                parts.append(value.strip())
        return "\n".join(parts)
