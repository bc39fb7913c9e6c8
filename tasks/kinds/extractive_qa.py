"""The ``extractive_qa`` kind: the target is a span of the passage; SQuAD exact match and word
F1 (Rajpurkar et al., EMNLP 2016, the official v1.1 evaluation script); the model is wrong when
its answer's word F1 against the annotator's span is below the task's threshold (0.4 by default)."""

from __future__ import annotations


import numpy as np

from dynabench.errors import RuleError
from dynabench.jsonbounds import JSONRefused, loads_bounded
from tasks.kinds.display import passage_segments
from tasks.error_codes import TargetErrorCode
from tasks.metrics.squad import best_over_ground_truths, squad_exact_match, squad_f1
from tasks.kinds.base import ItemScores, TargetError, TaskKindSpec, register, span_at


DEFAULT_QA_THRESHOLD = 0.4
"""SQuAD word F1 below which an extractive QA model counts as wrong when the config does not say."""


def qa_threshold(config: dict) -> float:
    """Return the task's SQuAD-F1 threshold below which a QA model counts as wrong."""
    return float(config.get("model_wrong", {}).get("threshold", DEFAULT_QA_THRESHOLD))


def qa_answer_f1(*, target: dict, model_output: dict) -> float:
    """Return the best SQuAD word F1 in [0, 1] of the model's answer against the target's answers.

    ``target`` is ``{"answers": [{"text", "answer_start"}, ...]}``; ``model_output`` is ``{"answer": str, ...}``.
    """
    truths = [a["text"] for a in target.get("answers", [])]
    return best_over_ground_truths(squad_f1, str(model_output.get("answer", "")), truths)


def qa_features(tokenizer, examples, *, question_field, passage_field, max_length, doc_stride):
    """Return SQuAD-style training features: one per window of each (question, passage).

    Each feature has ``input_ids``/``attention_mask``(/``token_type_ids``) and
    ``start_positions``/``end_positions``: the answer's first and last token in the window,
    or the ``[CLS]`` index when the window does not contain the whole answer.
    """
    encoded = tokenizer(
        [ex.input[question_field].strip() for ex in examples],
        [ex.input[passage_field] for ex in examples],
        truncation="only_second", max_length=max_length, stride=doc_stride,
        return_overflowing_tokens=True, return_offsets_mapping=True,
    )
    features = []
    for i, offsets in enumerate(encoded["offset_mapping"]):
        input_ids = encoded["input_ids"][i]
        cls_index = input_ids.index(tokenizer.cls_token_id) if tokenizer.cls_token_id in input_ids else 0
        sequence_ids = encoded.sequence_ids(i)
        answer = examples[encoded["overflow_to_sample_mapping"][i]].target["answers"][0]
        start_char = answer["answer_start"]
        end_char = start_char + len(answer["text"])
        context = [j for j, s in enumerate(sequence_ids) if s == 1]
        start_token = end_token = cls_index
        if context and offsets[context[0]][0] <= start_char and offsets[context[-1]][1] >= end_char:
            start_token = next(j for j in context if offsets[j][1] > start_char)
            end_token = next(j for j in reversed(context) if offsets[j][0] < end_char)
        feature = {key: encoded[key][i] for key in ("input_ids", "attention_mask", "token_type_ids") if key in encoded}
        feature["start_positions"], feature["end_positions"] = start_token, end_token
        features.append(feature)
    return features


def _character_position(value) -> int | None:
    """``value`` as a character position (a whole number ≥ 0, given as an int, a whole float or digits),
    or None. Never converts a huge integer to a float (``OverflowError``) nor parses more digits than a
    64-bit position has."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        value = int(value) if value.is_integer() else None
    elif isinstance(value, str):
        digits = value.strip()
        value = int(digits) if digits.isdigit() and digits.isascii() and len(digits) <= 19 else None
    elif not isinstance(value, int):
        return None
    return value if value is not None and value >= 0 else None


@register
class ExtractiveQASpec(TaskKindSpec):
    """Extractive question answering (SQuAD-style): the answer is a span of the passage.

    ``config["model_inputs"]`` is ``[question field, passage field]``. Target
    ``{"answers": [{"text", "answer_start"}]}`` (character offset into the passage); model
    output ``{"answer", "start", "end", "score"}``. The model is wrong when the SQuAD word F1
    of its answer (best over the annotator's answers) is below ``model_wrong.threshold``
    (0.4 by default). Metrics: SQuAD F1 and exact match (``tasks.metrics.squad``); per-item score
    ``squad_f1``.
    """

    name = "extractive_qa"
    display_name = "Extractive question answering"
    has_labels = False
    target_field = "answers"
    release_task_category = "question-answering"
    prediction_field = "answer"
    score_key = "squad_f1"
    correction_field = "corrected_answer"
    architecture_suffix = "ForQuestionAnswering"
    predictor_class = "tasks.loop.registry.ExtractiveQAPredictor"
    config_properties = {}
    model_wrong_rule = "squad_f1_below"
    perf_metrics = ("squad_f1",)

    def config_errors(self, config):
        errors = []
        if len(config["model_inputs"]) != 2:
            errors.append("config.model_inputs: extractive QA needs [question field, passage field]")
        if config["model_wrong"]["rule"] != self.model_wrong_rule:
            errors.append(f"config.model_wrong.rule: an extractive QA task uses '{self.model_wrong_rule}'")
        if config["perf_metric"] != "squad_f1":
            errors.append("config.perf_metric: an extractive QA task uses 'squad_f1'")
        return errors

    def passage_field(self, config):
        """The second of ``model_inputs`` (the first is the question)."""
        return config["model_inputs"][1]

    def perturbable_fields(self, config):
        """The question only: the passage's character offsets must stay valid."""
        return list(config["model_inputs"])[:1]

    def clean_target(self, config, example_input, target):
        """Exactly one answer that is a span of the passage:
        ``passage[answer_start:answer_start + len(text)] == text`` (surrounding whitespace of
        the selection is trimmed and the start moved accordingly)."""
        target = target if isinstance(target, dict) else {}
        passage = example_input.get(self.passage_field(config), "")
        answers = target.get("answers")
        if not isinstance(answers, list) or len(answers) != 1 or not isinstance(answers[0], dict):
            raise RuleError(TargetErrorCode.INVALID_ANSWER, "Give exactly one answer, selected in the passage.", field="answer")
        text, start = answers[0].get("text"), answers[0].get("answer_start")
        if not isinstance(text, str) or not text.strip():
            raise RuleError(
                TargetErrorCode.REQUIRED, "Select the answer in the passage (mouse, or Shift + arrow keys).", field="answer"
            )
        start = _character_position(start)
        if start is None:
            raise RuleError(TargetErrorCode.INVALID_ANSWER, "The answer's start must be a character position.", field="answer")
        if start > len(passage):
            raise RuleError(
                TargetErrorCode.ANSWER_NOT_IN_PASSAGE,
                f"The answer's start ({start if start < 10**12 else 'a huge number'}) is past the end of the passage "
                f"({len(passage)} characters). Select the answer in the passage again.",
                field="answer",
            )
        start += len(text) - len(text.lstrip())
        text = text.strip()
        if not span_at(passage, text=text, start=start):
            raise RuleError(
                TargetErrorCode.ANSWER_NOT_IN_PASSAGE,
                f"“{text[:80]}” is not the passage's text at position {start}. Select the answer in the passage again.",
                field="answer",
            )
        return {"answers": [{"text": text, "answer_start": start}]}

    def import_target(self, config, raw, inputs, *, source):
        """SQuAD answers: a list of ``{"text", "answer_start"}``, or ``{"text": [..], "answer_start": [..]}``,
        or either as a JSON string (CSV). Each answer must be found at ``answer_start`` in the passage."""
        passage_field = self.passage_field(config)
        if isinstance(raw, str):
            try:
                raw = loads_bounded(raw)
            except JSONRefused as error:  # too deep, a number past 64 bits, NUL
                raise TargetError(f"field '{source}' is refused: {error}") from None
            except ValueError:
                raise TargetError(f"field '{source}' is not JSON answers") from None
        if isinstance(raw, dict) and isinstance(raw.get("text"), list):
            starts = raw.get("answer_start", [])
            if not isinstance(starts, list) or len(starts) != len(raw["text"]):
                raise TargetError("answers: 'text' and 'answer_start' lists differ in length")
            raw = [{"text": t, "answer_start": s} for t, s in zip(raw["text"], starts)]
        if not isinstance(raw, list) or not raw:
            raise TargetError("answers: expected a non-empty list of {text, answer_start}")
        passage = inputs[passage_field]
        answers = []
        for answer in raw:
            if not isinstance(answer, dict):
                raise TargetError("answers: each answer must be an object with text and answer_start")
            text, start = answer.get("text"), answer.get("answer_start")
            if not isinstance(text, str) or not text.strip():
                raise TargetError("answers: empty answer text")
            if isinstance(start, bool) or not isinstance(start, int) or start < 0:
                raise TargetError(f"answers: answer_start must be a whole number ≥ 0, found {str(start)[:40]!r}")
            if start > len(passage):
                raise TargetError(f"answers: answer_start {start} is past the end of the {passage_field} ({len(passage)} characters)")
            if not span_at(passage, text=text, start=start):
                raise TargetError(f"answers: '{text}' is not at character {start} of the {passage_field}")
            answers.append({"text": text, "answer_start": start})
        return {"answers": answers}

    def target_from_row(self, config, row, inputs):
        passage = inputs[self.passage_field(config)]
        answers = [a for a in row.get("answers") or [] if isinstance(a, dict)]
        if not answers:
            return None, "no answer"
        for answer in answers:
            if not span_at(passage, text=answer.get("text"), start=answer.get("answer_start")):
                return None, "answer is not at answer_start in the passage"
        return {"answers": [{"text": a["text"], "answer_start": a["answer_start"]} for a in answers]}, None

    def form_fields(self, config, *, optional_label=False):
        from django import forms

        return {
            "answer_text": forms.CharField(required=False, strip=False, widget=forms.HiddenInput),
            "answer_start": forms.IntegerField(required=False, min_value=0, widget=forms.HiddenInput),
        }

    def target_from_form(self, cleaned, *, optional=False):
        text = cleaned.get("answer_text") or ""
        if optional and not text.strip():
            return None
        return {"answers": [{"text": text, "answer_start": cleaned.get("answer_start")}]}

    def form_initial(self, target):
        answer = target["answers"][0]
        return {"answer_text": answer["text"], "answer_start": answer["answer_start"]}

    def model_wrong(self, config, target, model_output):
        """``qa_answer_f1(...) < qa_threshold(config)``."""
        return qa_answer_f1(target=target, model_output=model_output) < qa_threshold(config)

    def quiz_form_fields(self, config):
        """The answer span typed (copied from the passage) rather than selected with the mouse."""
        from django import forms

        return {"answer_text": forms.CharField(required=False, label="Your answer: copy it from the passage")}

    def quiz_target(self, config, item_input, cleaned):
        """The typed span, placed at its first occurrence in the passage."""
        text = (cleaned.get("answer_text") or "").strip()
        if not text:
            return None
        passage = self.passage_of(config, item_input) or ""
        return {"answers": [{"text": text, "answer_start": passage.find(text)}]}

    def answer_matches(self, config, gold, answer):
        """The answer's SQuAD word F1 against the gold answers reaches the task's threshold (the
        bar a model must clear, ``qa_threshold``)."""
        text = answer["answers"][0]["text"] if answer.get("answers") else ""
        return qa_answer_f1(target=gold, model_output={"answer": text}) >= qa_threshold(config)

    def answer_display(self, config, example_input, target, output):
        passage = example_input.get(self.passage_field(config), "")
        yours = target["answers"][0] if target else None
        model_span = (output["start"], output["end"]) if "start" in output and "end" in output else None
        your_span = (yours["answer_start"], yours["answer_start"] + len(yours["text"])) if yours else None
        return {
            "segments": passage_segments(passage, model_span=model_span, your_span=your_span),
            "f1": qa_answer_f1(target=target, model_output=output) if target else None,
        }

    def parse_prediction(self, config, value):
        if not isinstance(value, str):
            return None, ("the answer is not a string", "")
        return value, None

    def score(self, config, items, outputs):
        """SQuAD F1 and exact match of each answer, best over the item's accepted answers."""
        f1_scores, em_scores = [], []
        for output, item in zip(outputs, items):
            answer = output.get("answer") or ""
            truths = [a.get("text", "") for a in (item["target"] or {}).get("answers", [])]
            f1_scores.append(best_over_ground_truths(squad_f1, answer, truths))
            em_scores.append(best_over_ground_truths(squad_exact_match, answer, truths))
        f1, em = np.array(f1_scores, dtype=float), np.array(em_scores, dtype=float)

        def metrics(rows):
            f, e = (f1, em) if rows is None else (f1[rows], em[rows])
            return {"squad_f1": float(f.mean()) if len(f) else 0.0, "exact_match": float(e.mean()) if len(e) else 0.0, "n": int(len(f))}

        return ItemScores(per_item=list(f1), item_results=f1.astype(np.float32), _metrics=metrics)

    def consistency(self, config, original, perturbed):
        scores = [squad_f1(p.get("answer") or "", o.get("answer") or "") for o, p in zip(original, perturbed)]
        return float(np.mean(scores))

    endpoint_answer_rule = (
        "The answer's text, stripped of white space, quotes and a final full stop, found in the passage (exactly, "
        "else ignoring case) gives the span; an answer not in the passage keeps its text with no span."
    )

    def endpoint_prompt(self, config):
        question, passage = config["model_inputs"][:2]
        return {
            "system": "Answer the question with a span copied exactly from the passage, and nothing else.",
            "user": f"passage: ${passage}\nquestion: ${question}",
        }

    def endpoint_answer(self, config, text, model_input):
        """``{"answer", "start", "end", "score"}``: the span of the passage the text names (no span: no offsets)."""
        answer = (text or "").strip().strip("\"'“”").strip()
        answer = answer[:-1].rstrip() if answer.endswith(".") else answer
        passage = model_input.get(self.passage_field(config), "") or ""
        start = passage.find(answer) if answer else -1
        if start < 0 and answer:
            start = passage.lower().find(answer.lower())
        if start < 0:
            return {"answer": answer, "score": None}
        return {"answer": passage[start:start + len(answer)], "start": start, "end": start + len(answer), "score": None}

    def head_class(self):
        from transformers import AutoModelForQuestionAnswering

        return AutoModelForQuestionAnswering

    def head_mapping_names(self):
        from transformers.models.auto import modeling_auto

        return modeling_auto.MODEL_FOR_QUESTION_ANSWERING_MAPPING_NAMES

    def head_kwargs(self, labels):
        return {"num_labels": 2}

    def check_model_config(self, hf_config, task):
        """A start/end head has no labels to match."""
        return None

    def training_defaults(self, config):
        return {"epochs": 10, "batch_size": 16, "learning_rate": 1.5e-4, "max_length": 192, "doc_stride": 64}

    def training_features(self, tokenizer, examples, *, config, labels, max_length, doc_stride):
        question_field, passage_field = config["model_inputs"]
        return qa_features(
            tokenizer, examples, question_field=question_field, passage_field=passage_field,
            max_length=max_length, doc_stride=doc_stride,
        )
