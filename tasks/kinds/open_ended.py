"""The ``open_ended`` kind: an annotator talks with a generative model (or compares two) and
judges the answers against the owner's rubric; no rule can decide whether free text is wrong,
so "fooled the model" is the annotator's claim, counted in vMER once validators confirm it.

Stored shapes (``annotation/chat.py`` writes them; no new columns):

- ``Example.input``: ``{"mode": "conversation"|"side_by_side", "prompt": first prompt,
  "turns": [user text, ...]}``.
- ``Example.model_output`` of a conversation: ``{"mode": "conversation", "transcript":
  [{"role": "system"|"user"|"assistant", "content", ...}]}``, each assistant turn with
  ``model_id``, ``model``, ``params``, ``latency_ms``, ``first_token_ms``, token counts.
  Of a comparison: ``{"mode": "side_by_side", "prompt", "system": [system message] or [],
  "order": [model id of A, of B],
  "answers": {"a": {...turn...}, "b": {...}}}`` (the order was drawn at random and is recorded).
- ``Example.target`` (the judgment): a conversation ``{"verdict": "fails"|"holds", "category",
  "explanation"}``; a comparison ``{"preference": "a"|"b"|"tie"|"both_bad", "failing": ["a",
  "b"] (a subset), "category", "explanation"}``. A failure names a category of the owner's
  rubric (``config["failure_categories"]``).
"""

from __future__ import annotations

import string

from dynabench.errors import RuleError
from tasks.error_codes import TargetErrorCode
from tasks.kinds.base import TaskKindSpec, register
from tasks.kinds.judged import TargetsCheckedAsJudgments

VERDICTS = ("fails", "holds")
PREFERENCES = ("a", "b", "tie", "both_bad")
PREFERENCE_LABELS = {"a": "A is better", "b": "B is better", "tie": "Tie (both good)", "both_bad": "Both are bad"}
DEFAULT_MAX_TURNS = 3
EXPLANATION_MAX = 2000


def max_turns(config: dict) -> int:
    """The most user turns of one conversation (``config["max_turns"]``, 3 by default)."""
    return int(config.get("max_turns", DEFAULT_MAX_TURNS))


def categories(config: dict) -> dict[str, str]:
    """``{name: label}`` of the owner's failure categories, in their order."""
    return {c["name"]: c.get("label", c["name"]) for c in config.get("failure_categories", [])}


def _bad(message: str, field: str):
    raise RuleError(TargetErrorCode.INVALID_LABEL, message, field=field)


@register
class OpenEndedSpec(TargetsCheckedAsJudgments, TaskKindSpec):
    """Open-ended answers of generative models, judged by people (see the module docstring).

    The model in the loop is an endpoint model (``tasks/loop/endpoints/``) or a local causal language
    model directory run in-process (``tasks.loop.chat.CausalLMPredictor``, at most ``max_new_tokens``
    tokens), its answers streamed (``tasks/loop/chat.py``). A conversation has up to ``max_turns`` user turns; with two or more
    models in the loop an annotator may instead compare two of them side by side. Validators
    confirm (``correct``) or overturn (``incorrect``) the judgment; confirmed comparisons feed
    the arena leaderboard (``leaderboard/arena.py``) and confirmed failures the generative vMER.
    There is no automatic score: submissions are endpoint models put in the loop by owners.
    """

    name = "open_ended"
    display_name = "Open-ended answers (judged by people)"
    has_labels = False
    conversational = True
    target_field = "judgment"
    prediction_field = "text"
    score_key = "judged"
    correction_field = "corrected_judgment"
    """A validator overturns a judgment by voting ``incorrect``; no corrected judgment is taken."""
    architecture_suffix = "ForCausalLM"
    predictor_class = "tasks.loop.chat.CausalLMPredictor"
    config_properties = {
        "system_prompt": {"type": "string", "maxLength": 5000},
        "max_turns": {"type": "integer", "minimum": 1, "maximum": 20},
        "side_by_side": {"type": "boolean"},
        "failure_categories": {
            "type": "array", "minItems": 1, "maxItems": 30,
            "items": {"type": "object", "required": ["name"], "additionalProperties": False, "properties": {
                "name": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"},
                "label": {"type": "string"}, "description": {"type": "string"}}},
        },
        "judgment_question": {"type": "string", "maxLength": 500},
        "max_new_tokens": {"type": "integer", "minimum": 1, "maximum": 4096},
    }
    model_wrong_rule = "annotator_judgment"
    measures_transfer = False  # the annotator judged the one answer they saw; another model's answer has no judgment
    perf_metrics = ("validated_failure_rate",)
    submissions = ()
    endpoint_answer_rule = "The answer's text, as the model wrote it, is judged by the annotator against the task's rubric."

    def config_errors(self, config):
        errors = []
        if config["model_wrong"]["rule"] != self.model_wrong_rule:
            errors.append(f"config.model_wrong.rule: an open-ended task uses '{self.model_wrong_rule}'")
        if config["perf_metric"] not in self.perf_metrics:
            errors.append(f"config.perf_metric: an open-ended task uses '{self.perf_metrics[0]}'")
        if not config.get("failure_categories"):
            errors.append("config.failure_categories: list at least one failure category (the rubric)")
        if len(config["model_inputs"]) != 1:
            errors.append("config.model_inputs: an open-ended task takes one prompt field")
        return errors

    # --- messages ----------------------------------------------------------------------

    def chat_messages(self, config: dict, context_data: dict, turns: list[dict]) -> list[dict]:
        """The chat messages of a conversation so far: the owner's system prompt (``$field``
        placeholders filled from the context once, never re-read as a template), the context's
        fields, then the ``turns`` (``{"role", "content"}``) as they were."""
        values = {k: str(v) for k, v in (context_data or {}).items()}
        system = string.Template(config.get("system_prompt", "")).safe_substitute(values).strip()
        shown = [f"{f.get('label', f['name'])}: {values[f['name']]}" for f in config["context_fields"] if values.get(f["name"])]
        if shown:
            system = "\n\n".join([s for s in [system, "\n".join(shown)] if s])
        messages = [{"role": "system", "content": system}] if system else []
        return messages + [{"role": t["role"], "content": t["content"]} for t in turns]

    def endpoint_prompt(self, config):
        (prompt,) = config["model_inputs"]
        return {"system": config.get("system_prompt", ""), "user": f"${prompt}"}

    def endpoint_answer(self, config, text, model_input):
        return {"text": text or ""}

    # --- the judgment ------------------------------------------------------------------

    def clean_target(self, config, example_input, target):
        """The annotator's judgment in its stored shape (module docstring); ``RuleError`` says what to fix."""
        target = target if isinstance(target, dict) else {}
        cats = categories(config)
        explanation = target.get("explanation") or ""
        if not isinstance(explanation, str) or len(explanation) > EXPLANATION_MAX:
            _bad(f"The explanation is text of at most {EXPLANATION_MAX} characters.", "explanation")
        explanation = explanation.strip()
        if (example_input or {}).get("mode") == "side_by_side":
            preference = target.get("preference")
            if preference not in PREFERENCES:
                _bad("Pick the better answer, a tie, or both bad.", "preference")
            failing = target.get("failing") or []
            if not isinstance(failing, list) or not set(failing) <= {"a", "b"}:
                _bad("Mark A and/or B as failing, or neither.", "failing")
            failing = sorted(set(failing))
            cleaned = {"preference": preference, "failing": failing}
            failed = bool(failing)
        else:
            verdict = target.get("verdict")
            if verdict not in VERDICTS:
                _bad("Say whether the model's answer fails or holds.", "verdict")
            cleaned = {"verdict": verdict}
            failed = verdict == "fails"
        category = target.get("category") or ""
        if failed:
            if category not in cats:
                _bad(f"Pick the failure category: one of {', '.join(cats.values())}.", "category")
            if not explanation:
                _bad("Explain in a sentence how the answer fails.", "explanation")
        else:
            category = ""
        return {**cleaned, "category": category, "explanation": explanation}

    def form_fields(self, config, *, optional_label=False):
        """The fields of a conversation's judgment (a comparison's page adds its own)."""
        from django import forms

        question = config.get("judgment_question") or "Does the model's answer fail the rubric?"
        return {
            "verdict": forms.ChoiceField(label=question, widget=forms.RadioSelect, required=not optional_label,
                                         choices=[("fails", "It fails"), ("holds", "It holds")]),
            "category": forms.ChoiceField(label="Failure category", required=False,
                                          choices=[("", "—"), *categories(config).items()]),
            "explanation": forms.CharField(label="Why (required when it fails)", required=False, max_length=EXPLANATION_MAX,
                                           widget=forms.Textarea(attrs={"rows": 2})),
        }

    def target_from_form(self, cleaned, *, optional=False):
        if optional and not cleaned.get("verdict"):
            return None
        return {k: cleaned.get(k) or "" for k in ("verdict", "category", "explanation")}

    def form_initial(self, target):
        return {k: target.get(k, "") for k in ("verdict", "category", "explanation")}

    def model_wrong(self, config, target, model_output):
        """The annotator's claim: the answer fails (a comparison: either answer is marked failing)."""
        return target.get("verdict") == "fails" or bool(target.get("failing"))

    def answer_matches(self, config, gold, answer):
        return self.model_wrong(config, gold, {}) == self.model_wrong(config, answer, {})

    # --- display -----------------------------------------------------------------------

    def answer_display(self, config, example_input, target, output):
        """The transcript (or the anonymous pair A/B) and the judgment, in words."""
        cats = categories(config)
        target = target or {}
        shown = {"judgment": True, "mode": output.get("mode", "conversation"),
                 "category": cats.get(target.get("category") or "", ""), "explanation": target.get("explanation", "")}
        if shown["mode"] == "side_by_side":
            failing = set(target.get("failing") or [])
            shown["prompt"] = output.get("prompt", "")
            shown["pair"] = [{"side": side.upper(), "text": (output.get("answers", {}).get(side) or {}).get("content", ""),
                              "failing": side in failing} for side in ("a", "b")]
            shown["verdict"] = PREFERENCE_LABELS.get(target.get("preference"), "")
        else:
            shown["transcript"] = [t for t in output.get("transcript", []) if t.get("role") != "system"]
            shown["verdict"] = {"fails": "The answer fails", "holds": "The answer holds"}.get(target.get("verdict"), "")
        return shown

    # --- what the arena, the generative vMER and the exports read -------------------------

    def battle(self, config, target, output):
        """``(model id of A, model id of B, "a"|"b"|"tie")`` of a comparison ("both bad" is a tie), else None."""
        order = output.get("order") or []
        if output.get("mode") != "side_by_side" or len(order) != 2 or target.get("preference") not in PREFERENCES:
            return None
        outcome = target["preference"] if target["preference"] in ("a", "b") else "tie"
        return int(order[0]), int(order[1]), outcome

    def answering_models(self, config, output):
        """Ids of the models that answered in this example."""
        if output.get("mode") == "side_by_side":
            return [int(m) for m in output.get("order") or []]
        return sorted({int(t["model_id"]) for t in output.get("transcript", []) if t.get("model_id") is not None})

    def answer_counts(self, config, output):
        """``{model id: answers}``: a comparison gives each of its two models one answer; a
        conversation gives its model one answer per assistant turn."""
        if output.get("mode") == "side_by_side":
            return {model_id: 1 for model_id in self.answering_models(config, output)}
        counts: dict[int, int] = {}
        for turn in output.get("transcript", []):
            if turn.get("role") == "assistant" and turn.get("model_id") is not None:
                counts[int(turn["model_id"])] = counts.get(int(turn["model_id"]), 0) + 1
        return counts

    def judged_failures(self, config, target, output):
        """``[(model id, category)]`` the annotator judged failing."""
        if output.get("mode") == "side_by_side":
            order = output.get("order") or []
            return [(int(order["ab".index(side)]), target.get("category", "")) for side in target.get("failing") or [] if len(order) == 2]
        if target.get("verdict") == "fails":
            return [(m, target.get("category", "")) for m in self.answering_models(config, output)]
        return []

    def export_records(self, config, output, target):
        """Records in the layouts preference-tuning libraries read: a conversation as ``{"messages":
        [...], "judgment"}``; a comparison with a winner as ``{"prompt", "chosen", "rejected"}``
        (each a message list; ``prompt`` holds the system prompt both models were given, as the
        conversation's ``messages`` do, then the user's prompt); ties and "both bad" as
        ``{"prompt", "answers", "judgment"}``."""
        if output.get("mode") == "side_by_side":
            system = [{"role": m["role"], "content": m["content"]} for m in output.get("system") or []]
            prompt = system + [{"role": "user", "content": output.get("prompt", "")}]
            answers = {s: (output.get("answers", {}).get(s) or {}).get("content", "") for s in ("a", "b")}
            judgment = {k: target.get(k) for k in ("preference", "failing", "category", "explanation")}
            if target.get("preference") in ("a", "b"):
                win = target["preference"]
                lose = "b" if win == "a" else "a"
                return [{"prompt": prompt, "chosen": [{"role": "assistant", "content": answers[win]}],
                         "rejected": [{"role": "assistant", "content": answers[lose]}], "judgment": judgment}]
            return [{"prompt": prompt, "answers": [answers["a"], answers["b"]], "judgment": judgment}]
        messages = [{"role": t["role"], "content": t["content"]} for t in output.get("transcript", [])]
        return [{"messages": messages, "judgment": {k: target.get(k) for k in ("verdict", "category", "explanation")}}]

    # --- no automatic scores ---------------------------------------------------------------

    def parse_prediction(self, config, value):
        return None, ("open-ended tasks take no predictions file", "")

    def score(self, config, items, outputs):
        raise RuleError("not_scored", "Open-ended answers are judged by people, not scored against a dataset.")

    def consistency(self, config, original, perturbed):
        raise RuleError("not_scored", "Open-ended answers have no consistency score.")

    # --- model head: causal language models (no training recipe) ----------------------------

    def head_class(self):
        from transformers import AutoModelForCausalLM

        return AutoModelForCausalLM

    def head_mapping_names(self):
        from transformers.models.auto import modeling_auto

        return modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    def head_kwargs(self, labels):
        return {}

    def check_model_config(self, hf_config, task):
        """A causal language model has no labels to match."""
        return None

    def training_defaults(self, config):
        return {}

    def training_features(self, tokenizer, examples, *, config, labels, max_length, doc_stride):
        raise RuleError("not_trainable", "The platform has no training recipe for open-ended tasks; export the judgments instead.")
