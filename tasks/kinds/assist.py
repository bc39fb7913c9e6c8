"""What a task kind asks a writing assistant, and how it reads the suggestion: the defaults every kind
inherits (``TaskKindSpec`` subclasses ``AssistantPrompts``); a kind overrides them when its examples
need other words.

A generative annotation assistant (Bartolo et al., "Models in the loop: Aiding crowdworkers with
generative annotation assistants", NAACL 2022) proposes a whole example for the context shown; the
annotator edits or discards it. The same request, asked N times, gives a generator's candidates.
Only the context's visible fields and the task's instructions are written into the request: no
target, no hidden label, no other example.
"""

from __future__ import annotations

import json
import re

#: The most characters of the task's instructions copied into a request.
INSTRUCTIONS_MAX = 2000


class SuggestionError(ValueError):
    """The assistant's text holds nothing the example form can use; ``str()`` says why."""


class AssistantPrompts:
    """The default assistant prompt and suggestion parser of a task kind (a mixin of ``TaskKindSpec``)."""

    def assistant_fields(self, config: dict) -> dict[str, str]:
        """``{key: what it must hold}`` of the JSON object the assistant is asked for: the annotator's
        input fields, then ``label`` (kinds with labels: one of the task's labels) or ``answer``
        (kinds with a passage: a span copied from it)."""
        fields = {f["name"]: f.get("help") or f.get("label") or f["name"] for f in config.get("input_fields", [])}
        if getattr(self, "has_labels", False) and config.get("labels"):
            fields["label"] = "one of: " + ", ".join(config["labels"])
        elif self.passage_field(config) is not None:
            fields["answer"] = "the answer, copied word for word from the passage"
        return fields

    def assistant_messages(self, config: dict, *, context_data: dict, instructions: str = "", model_name: str = "",
                           attempt: int = 0) -> list[dict]:
        """The chat messages asking for one example for ``context_data``: the system message holds the
        task's ``instructions`` (at most ``INSTRUCTIONS_MAX`` characters) and the goal (an example the model
        in the loop, ``model_name``, gets wrong); the user message the context's text fields of
        ``config["context_fields"]`` (never an image's or audio's reference, never a target) and the JSON
        keys wanted. ``attempt`` (0, 1, ...) numbers repeated requests, so a generator asked N times is
        asked N different questions (and its response cache answers each once)."""
        shown = [f for f in config.get("context_fields", []) if f.get("type") in (None, "text")]
        context = "\n".join(f"{f.get('label', f['name'])}: {context_data.get(f['name'], '')}" for f in shown)
        wanted = "\n".join(f'- "{key}": {what}' for key, what in self.assistant_fields(config).items())
        target = f" the model in the loop ({model_name})" if model_name else " the model in the loop"
        system = (
            "You help people write examples for a dataset. Write one new, correct example that"
            f"{target} is likely to get wrong.\n\nTask instructions:\n{(instructions or '').strip()[:INSTRUCTIONS_MAX]}"
        ).strip()
        user = f"{context}\n\nAnswer with one JSON object with these keys:\n{wanted}"
        if attempt:
            user += f"\n\n(Candidate {attempt + 1}: make it different from the earlier ones.)"
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def assistant_suggestion(self, config: dict, text: str, *, context_data: dict) -> dict:
        """Return ``{"input": {field: text}, "form": {form field: value}}`` from the assistant's answer
        ``text``: the first JSON object in it, else (a model that ignored the format) the whole text as
        the first input field that is not prefilled from the context. ``form`` holds the target's form
        fields when the answer names them: ``label`` if it is one of the task's labels (or an alias),
        ``answer_text``/``answer_start`` if the answer is a span of the passage. Raise
        ``SuggestionError`` when nothing usable is left."""
        names = [f["name"] for f in config.get("input_fields", [])]
        data = _first_json_object(text)
        if data is None:
            free = [f["name"] for f in config.get("input_fields", []) if not f.get("prefill_from")] or names
            data = {free[0]: text} if free and text.strip() else {}
        values = {name: str(data[name]).strip() for name in names if isinstance(data.get(name), (str, int, float))}
        for field in config.get("input_fields", []):
            source = field.get("prefill_from")
            if source and not values.get(field["name"]):
                values[field["name"]] = str(context_data.get(source, ""))
        if not any(values.get(name) for name in names):
            raise SuggestionError("The assistant's answer held no text for the example's fields.")
        form = {}
        label = data.get("label")
        if isinstance(label, str) and getattr(self, "has_labels", False):
            label = label.strip()
            label = label if label in config.get("labels", []) else config.get("label_aliases", {}).get(label)
            if label:
                form["label"] = label
        passage = self.passage_of(config, values, context_data) if self.passage_field(config) else None
        answer = data.get("answer")
        if passage and isinstance(answer, str) and answer.strip() and answer.strip() in passage:
            form.update(answer_text=answer.strip(), answer_start=passage.index(answer.strip()))
        return {"input": {name: values.get(name, "") for name in names}, "form": form}


def _first_json_object(text: str) -> dict | None:
    """The first ``{...}`` of ``text`` that parses as a JSON object (a fenced block's too), or None."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text or ""):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None
