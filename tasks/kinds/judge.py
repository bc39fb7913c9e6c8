"""What a task kind asks an AI validator (a judge), and how it reads the judge's verdict: the defaults
every kind inherits (``TaskKindSpec`` subclasses ``JudgePrompts``); a kind overrides them when its
examples need other words.

The judge sees what a human validator sees: the context's visible text fields, the annotator's input
fields, the annotator's label or answer, and the model in the loop's answer. It is asked for one JSON
object ``{"verdict": "correct" | "incorrect" | "flagged", "reason": "...", "confidence": 0..1}``, the
single-answer grading set-up of an LLM-as-a-judge (Zheng et al., "Judging LLM-as-a-Judge with MT-Bench
and Chatbot Arena", NeurIPS 2023 Datasets and Benchmarks). An answer that holds no such object is
``VerdictError``: the caller records it as unparsed, it never counts.
"""

from __future__ import annotations

import dataclasses
import json
import re

from tasks.kinds.assist import INSTRUCTIONS_MAX

#: The verdicts a judge may give (the labels of ``validation.models.Validation.Label``).
VERDICTS = ("correct", "incorrect", "flagged")
#: The most characters of the judge's reason kept.
REASON_MAX = 500
#: The most characters of an answer searched for the verdict (a verdict is short; this bounds the search).
PARSE_MAX = 20000
#: The most characters of one field's text written into the request.
FIELD_MAX = 2000


class VerdictError(ValueError):
    """The judge's text holds no usable verdict; ``str()`` says why."""


@dataclasses.dataclass(frozen=True)
class JudgeVerdict:
    """One parsed verdict: ``label`` (one of ``VERDICTS``), ``reason`` (at most ``REASON_MAX``
    characters) and ``confidence`` (0 to 1, None when the judge gave none or a non-number)."""

    label: str
    reason: str
    confidence: float | None


def _verdict_object(text: str) -> dict | None:
    """The first ``{...}`` of ``text`` that parses as a JSON object holding ``verdict`` (a fenced block's
    too), else the first JSON object, else None."""
    decoder = json.JSONDecoder()
    first = None
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            if "verdict" in value:
                return value
            first = first if first is not None else value
    return first


def _shown(value) -> str:
    """A target's or an answer's value as text: a string as is, a span's ``text``, a list's items joined."""
    if isinstance(value, dict):
        return _shown(value.get("text", value.get("label", json.dumps(value, sort_keys=True))))
    if isinstance(value, (list, tuple)):
        return " | ".join(_shown(v) for v in value)
    return "" if value is None else str(value)


class JudgePrompts:
    """The default judge prompt and verdict parser of a task kind (a mixin of ``TaskKindSpec``)."""

    def judge_messages(self, config: dict, *, context_data: dict, example_input: dict, target: dict | None,
                       model_output: dict | None, instructions: str = "") -> list[dict]:
        """The chat messages asking a judge for one verdict on an example.

        The system message holds the task's ``instructions`` (at most ``INSTRUCTIONS_MAX`` characters)
        and what each verdict means; the user message the context's text fields of
        ``config["context_fields"]`` (never an image's or audio's reference), the annotator's input
        fields (``config["input_fields"]``), the annotator's target (``target[self.target_field]``), the
        model's answer (``model_output[self.prediction_field]``) and the JSON wanted. Each text is cut
        at ``FIELD_MAX`` characters."""
        context = [f for f in config.get("context_fields", []) if f.get("type") in (None, "text")]
        lines = [f"{f.get('label', f['name'])}: {str(context_data.get(f['name'], ''))[:FIELD_MAX]}" for f in context]
        lines += [f"{f.get('label', f['name'])}: {str(example_input.get(f['name'], ''))[:FIELD_MAX]}"
                  for f in config.get("input_fields", [])]
        lines.append(f"The annotator's answer: {_shown((target or {}).get(self.target_field))[:FIELD_MAX]}")
        lines.append(f"The model's answer: {_shown((model_output or {}).get(self.prediction_field))[:FIELD_MAX]}")
        system = (
            "You validate examples written for a dataset. An annotator wrote an example and gave its answer; a model "
            "answered it too. Say whether the annotator's answer is right for the example.\n"
            "- correct: the example is well formed and the annotator's answer is right\n"
            "- incorrect: the annotator's answer is wrong\n"
            "- flagged: the example breaks the task's rules (offensive without purpose, nonsense, personal data)\n\n"
            f"Task instructions:\n{(instructions or '').strip()[:INSTRUCTIONS_MAX]}"
        ).strip()
        user = ("\n".join(lines) + '\n\nAnswer with one JSON object: {"verdict": "correct" or "incorrect" or "flagged", '
                '"reason": one short sentence, "confidence": a number from 0 to 1}')
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def judge_verdict(self, config: dict, text: str) -> JudgeVerdict:
        """Read the judge's answer ``text`` (its first ``PARSE_MAX`` characters): the first JSON object in it
        (a fenced block's too) holding ``verdict``, which must be one of ``VERDICTS`` (case and spaces ignored). Raise ``VerdictError`` when there is
        none. ``reason`` is cut at ``REASON_MAX`` characters; ``confidence`` is clipped to [0, 1]."""
        data = _verdict_object((text or "")[:PARSE_MAX])
        if data is None:
            raise VerdictError("The judge's answer holds no JSON object with a verdict.")
        verdict = data.get("verdict")
        verdict = verdict.strip().lower() if isinstance(verdict, str) else None
        if verdict not in VERDICTS:
            raise VerdictError(f"The judge's verdict {data.get('verdict')!r} is none of {', '.join(VERDICTS)}.")
        reason = data.get("reason")
        confidence = data.get("confidence")
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or confidence != confidence:
            confidence = None
        else:
            confidence = min(1.0, max(0.0, float(confidence)))
        return JudgeVerdict(label=verdict, reason=(reason if isinstance(reason, str) else "").strip()[:REASON_MAX],
                            confidence=confidence)
