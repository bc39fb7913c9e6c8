"""The ``visual_question_answering`` kind: the context is an image (``tasks.data.images``), the annotator
writes a question about it and its answer; the model answers the question. The model is an
in-process Hugging Face VQA model (``AutoModelForVisualQuestionAnswering`` with its processor, an
answer classifier such as ViLT; safetensors only, never remote code), run in batches of images by
``tasks.loop.vision.VisualQuestionAnsweringPredictor``, or an endpoint model that takes images in the
OpenAI-compatible chat format (an ``image_url`` content part holding a ``data:`` URL).

The fooled rule and the metric are the VQA accuracy (``tasks.metrics.vqa.vqa_accuracy``: Antol et
al., "VQA: Visual Question Answering", ICCV 2015, Section 4, ``min(#humans who gave the answer / 3,
1)`` averaged over the leave-one-out subsets, as the official script computes it: the version of
today by default, or its 2016 version with ``"vqa_version": "2016"``; the version is in the
metric's signature on every evaluation run).
"""

from __future__ import annotations

import base64
import io
import json

import numpy as np

from dynabench.errors import RuleError
from tasks.data.image_files import read_stored
from tasks.error_codes import TargetErrorCode
from tasks.kinds.base import ItemScores, TargetError, TaskKindSpec, register
from tasks.kinds.image_classification import image_fields
from tasks.loop.model_checks import ModelCheckCode
from tasks.metrics.vqa import VERSIONS, normalise_answer, vqa_accuracy, vqa_signature, vqa_version

DEFAULT_VQA_THRESHOLD = 0.3
"""VQA accuracy below which the model counts as fooled when the config does not say: 0.3 is the
accuracy of an answer one of VQA's ten people gave; an answer matching a lone annotator's scores 1/3."""
MAX_ANSWER_CHARS = 200
DEFAULT_VQA_ANSWERS = 10


def vqa_threshold(config: dict) -> float:
    """The task's VQA accuracy below which the model is wrong (``model_wrong.threshold``, default 0.3)."""
    return float(config.get("model_wrong", {}).get("threshold", DEFAULT_VQA_THRESHOLD))


def _answers(value) -> list[str] | None:
    """Human answers from a stored or imported value: a text, a list of texts, or a list of VQA
    records ``{"answer": text, ...}``; None when there is no non-empty answer."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return None
    out = []
    for answer in value:
        if isinstance(answer, dict):
            answer = answer.get("answer")
        if not isinstance(answer, str) or not answer.strip():
            return None
        out.append(answer.strip()[:MAX_ANSWER_CHARS])
    return out or None


@register
class VisualQuestionAnsweringSpec(TaskKindSpec):
    """Visual question answering: an image context, a question written by the annotator, a short answer.

    Config: one context field of ``"type": "image"`` and one input field (the question);
    ``model_inputs`` is ``[image field, question field]``; ``model_wrong`` ``{"rule":
    "vqa_accuracy_below", "threshold": 0.3}``; ``perf_metric`` ``vqa_accuracy``; optionally
    ``vqa_version`` (``"2021"``, the default, or ``"2016"``: ``tasks.metrics.vqa``) and
    ``vqa_answers`` (how many answers an example keeps: the annotator's, then validators' own;
    default 10). Target
    ``{"answers": [text, ...]}``: every person's answer (the annotator's on the platform; an
    imported dataset may carry VQA's ten). Model output ``{"answer": text, "score": float | None}``.
    The model is wrong when the VQA accuracy of its answer against the target is below the
    threshold. Per-item score ``vqa_accuracy``; predictions files ``{"uid", "answer"}``.
    """

    name = "visual_question_answering"
    display_name = "Visual question answering"
    has_labels = False
    target_field = "answers"
    prediction_field = "answer"
    score_key = "vqa_accuracy"
    correction_field = "corrected_vqa_answer"
    architecture_suffix = "ForQuestionAnswering"
    predictor_class = "tasks.loop.vision.VisualQuestionAnsweringPredictor"
    processor_files = ("processor_config.json", "preprocessor_config.json")
    processor_summary = "its processor (<code>preprocessor_config.json</code>) and fast tokenizer (<code>tokenizer.json</code>)"
    config_properties = {"vqa_version": {"enum": list(VERSIONS)}, "vqa_answers": {"type": "integer", "minimum": 1, "maximum": 50}}
    model_wrong_rule = "vqa_accuracy_below"
    perf_metrics = ("vqa_accuracy",)

    def config_errors(self, config):
        errors = []
        images = image_fields(config)
        inputs = config.get("model_inputs") or []
        questions = [f["name"] for f in config.get("input_fields", [])]
        if len(images) != 1 or len(inputs) != 2 or inputs[0] != images[0] or inputs[1] not in questions:
            errors.append(
                "config.model_inputs: a visual question answering task names [its one context field of type 'image', "
                "the input field holding the question]"
            )
        if config["model_wrong"]["rule"] != self.model_wrong_rule:
            errors.append(f"config.model_wrong.rule: a visual question answering task uses '{self.model_wrong_rule}'")
        if config["perf_metric"] != "vqa_accuracy":
            errors.append("config.perf_metric: a visual question answering task uses 'vqa_accuracy'")
        return errors

    def perturbable_fields(self, config):
        """The question only: text perturbations do not apply to the image."""
        return list(config["model_inputs"])[1:]

    # --- the target ----------------------------------------------------------------------

    def clean_target(self, config, example_input, target):
        """``{"answers": [text]}``: the annotator's answer, non-empty, at most 200 characters, trimmed."""
        target = target if isinstance(target, dict) else {}
        answers = _answers(target.get("answers"))
        if answers is None or len(answers) != 1:
            raise RuleError(TargetErrorCode.INVALID_ANSWER, "Write the answer to your question (a word or a few).", field="answer")
        if not normalise_answer(answers[0]):
            raise RuleError(
                TargetErrorCode.INVALID_ANSWER, "The answer is only punctuation or articles; write the answer itself.", field="answer",
            )
        return {"answers": answers}

    def import_target(self, config, raw, inputs, *, source):
        """A text, a list of texts or VQA's ``[{"answer": ...}, ...]``, or either as a JSON string (CSV)."""
        if isinstance(raw, str) and raw.lstrip().startswith("["):
            try:
                raw = json.loads(raw)
            except json.JSONDecodeError:
                raise TargetError(f"field '{source}' is not a JSON list of answers") from None
        answers = _answers(raw)
        if answers is None:
            raise TargetError(f"field '{source}': expected an answer text or a non-empty list of answers")
        return {"answers": answers}

    def target_from_row(self, config, row, inputs):
        answers = _answers(row.get("answers"))
        if answers is None:
            return None, "no answer"
        return {"answers": answers}, None

    def form_fields(self, config, *, optional_label=False):
        from django import forms

        return {"answer": forms.CharField(
            required=False, strip=True, max_length=MAX_ANSWER_CHARS,
            label="Your answer (optional)" if optional_label else "Your answer (a word or a few)",
        )}

    def target_from_form(self, cleaned, *, optional=False):
        answer = cleaned.get("answer") or ""
        if optional and not answer.strip():
            return None
        return {"answers": [answer]}

    def answers_wanted(self, config):
        """The answers an example keeps, the annotator's first, then validators' own
        (``config["vqa_answers"]``, default ``DEFAULT_VQA_ANSWERS``: VQA's ten per question)."""
        return int(config.get("vqa_answers", DEFAULT_VQA_ANSWERS))

    def form_initial(self, target):
        return {"answer": (target.get("answers") or [""])[0]}

    # --- the model-wrong rule -------------------------------------------------------------

    def model_wrong(self, config, target, model_output):
        """``vqa_accuracy(model answer, target answers) < vqa_threshold(config)``."""
        return vqa_accuracy(model_output.get("answer"), target.get("answers") or [], version=vqa_version(config)) < vqa_threshold(config)

    def answer_matches(self, config, gold, answer):
        """The person's answer reaches the threshold against the gold answers, as a model's must."""
        return vqa_accuracy((answer.get("answers") or [""])[0], gold.get("answers") or [], version=vqa_version(config)) >= vqa_threshold(config)

    def answer_display(self, config, example_input, target, output):
        answers = (target or {}).get("answers")
        return {
            "vqa_answer": str(output.get("answer") or ""),
            "your_answer": answers[0] if answers else None,
            "vqa_accuracy": vqa_accuracy(output.get("answer"), answers, version=vqa_version(config)) if answers else None,
        }

    # --- evaluation -----------------------------------------------------------------------

    def parse_prediction(self, config, value):
        if not isinstance(value, str):
            return None, ("the answer is not a string", type(value).__name__)
        return value, None

    def score(self, config, items, outputs):
        """VQA accuracy of each answer against the item's answers, and their mean; raises ``RuleError``
        (``bad_item``) for an item without answers. The signature names the official script's
        version (``tasks.metrics.vqa.vqa_signature``)."""
        version = vqa_version(config)
        per_item = []
        for output, item in zip(outputs, items):
            answers = _answers((item["target"] or {}).get("answers"))
            if answers is None:
                raise RuleError("bad_item", f"Item {item['uid']} of the dataset has no answers ({item['target']!r}).")
            per_item.append(vqa_accuracy(output.get("answer"), answers, version=version))
        values = np.array(per_item, dtype=float)

        def metrics(rows):
            chosen = values if rows is None else values[rows]
            return {"vqa_accuracy": float(chosen.mean()) if len(chosen) else 0.0, "n": int(len(chosen))}

        return ItemScores(per_item=per_item, item_results=values.astype(np.float32), _metrics=metrics,
                          signatures={"vqa_accuracy": vqa_signature(version)})

    def consistency(self, config, original, perturbed):
        """Share of perturbed answers equal to the original answers after VQA normalisation."""
        same = [normalise_answer(o.get("answer")) == normalise_answer(p.get("answer")) for o, p in zip(original, perturbed)]
        return float(np.mean(same)) if same else 0.0

    # --- models behind endpoints ------------------------------------------------------------

    endpoint_apis = ("chat",)
    endpoint_answer_rule = (
        "The answer's text, stripped of white space, quotes and a final full stop, is the answer; it is compared "
        "after the VQA normalisation (lowercase, punctuation, articles, number words)."
    )

    def endpoint_prompt(self, config):
        question = config["model_inputs"][-1]  # the question (the image goes as a content part)
        return {"system": "Answer the question about the image with a single word or a short phrase.", "user": f"${question}"}

    def endpoint_messages(self, config, model_input, prompt=None):
        """The text messages of ``TaskKindSpec.endpoint_messages`` (the image field left out), with the
        image appended to the user message as an ``image_url`` content part holding a ``data:`` URL of the
        stored image's bytes (or of a Pillow image, as PNG)."""
        image_field, question = config["model_inputs"][:2]
        text_only = {**config, "model_inputs": [question]}
        messages = super().endpoint_messages(text_only, model_input, prompt)
        user = messages[-1]
        user["content"] = [
            {"type": "text", "text": user["content"]},
            {"type": "image_url", "image_url": {"url": _data_url(model_input.get(image_field))}},
        ]
        return messages

    def endpoint_answer(self, config, text, model_input):
        answer = (text or "").strip().strip("\"'“”").strip()
        answer = answer[:-1].rstrip() if answer.endswith(".") else answer
        return {"answer": answer[:MAX_ANSWER_CHARS], "score": None}

    # --- model head -------------------------------------------------------------------------

    def head_class(self):
        from transformers import AutoModelForVisualQuestionAnswering

        return AutoModelForVisualQuestionAnswering

    def head_mapping_names(self):
        """The VQA heads that classify over an answer vocabulary (``id2label``): ViLT. BLIP's generate
        their answers and are not run here."""
        from transformers.models.auto import modeling_auto

        names = modeling_auto.MODEL_FOR_VISUAL_QUESTION_ANSWERING_MAPPING_NAMES
        return {k: v for k, v in names.items() if k == "vilt"}

    def head_kwargs(self, labels):
        return {"num_labels": len(labels), "id2label": dict(enumerate(labels)), "label2id": {label: i for i, label in enumerate(labels)}}

    def check_model_config(self, hf_config, task):
        """The answer vocabulary (``id2label``) must be there; it is the model's, not the task's, so it is
        returned as is, in index order."""
        id2label = hf_config.get("id2label") or {}
        try:
            answers = [str(id2label[k]) for k in sorted(id2label, key=int)]
        except (TypeError, ValueError):
            answers = []
        if not answers:
            raise RuleError(
                ModelCheckCode.LABEL_MISMATCH, "config.json has no id2label: a VQA model needs its answer vocabulary.", field="model",
            )
        return answers

    def load_processor(self, path):
        """The directory's processor (image processor plus fast tokenizer, ``AutoProcessor``), never remote code."""
        from transformers import AutoProcessor

        processor = AutoProcessor.from_pretrained(path, local_files_only=True, trust_remote_code=False)
        tokenizer = getattr(processor, "tokenizer", None)
        if tokenizer is None or not getattr(tokenizer, "is_fast", False):
            raise RuleError(ModelCheckCode.NO_TOKENIZER, "The VQA model needs a fast tokenizer (tokenizer.json) beside its image processor.",
                            field="model")
        return processor

    def training_defaults(self, config):
        return {"epochs": 4, "batch_size": 16, "learning_rate": 5e-5, "max_length": 40}

    def training_features(self, tokenizer, examples, *, config, labels, max_length, doc_stride):
        """Training a VQA model on collected examples is not offered (yet)."""
        raise RuleError(ModelCheckCode.BAD_INPUT, "Training is not available for visual question answering tasks.")


def _data_url(value) -> str:
    """A ``data:`` URL of an image given by its sha256 (read from the storage) or as a Pillow image."""
    if hasattr(value, "save"):
        out = io.BytesIO()
        value.save(out, format="PNG")
        return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()
    try:
        data, content_type = read_stored(str(value or ""))
    except FileNotFoundError:
        raise RuleError(ModelCheckCode.BAD_INPUT, f"Input: no stored image {str(value)[:64]}.") from None
    return f"data:{content_type};base64," + base64.b64encode(data).decode()
