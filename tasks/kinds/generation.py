"""The ``generation`` kind: the target is one or more reference texts; sacreBLEU BLEU, chrF++
and spBLEU (``tasks/metrics/translation.py``); the model is wrong when its sentence chrF++ is
below the owner's threshold (0.4 by default)."""

from __future__ import annotations

import json

import numpy as np

from dynabench.errors import RuleError
from tasks.error_codes import TargetErrorCode
from tasks.kinds.base import ItemScores, TargetError, TaskKindSpec, register


DEFAULT_CHRF_THRESHOLD = 0.4
"""Sentence chrF++ (0..1) below which a translation counts as wrong when the config does not say."""


def chrf_threshold(config: dict) -> float:
    """Return the task's sentence-chrF++ threshold (0..1) below which a generation model counts as wrong."""
    return float(config.get("model_wrong", {}).get("threshold", DEFAULT_CHRF_THRESHOLD))


def _references(value) -> list[str] | None:
    """The reference texts of a raw target value (a string, or a list of strings), or None when malformed."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(r, str) and r.strip() for r in value):
        return None
    return [r.strip() for r in value]


@register
class GenerationSpec(TaskKindSpec):
    """Generation (machine translation, FLORES-style): an input text and one or more reference texts.

    ``config["model_inputs"]`` is ``[source field]``; an optional ``language_pair_field`` names
    an input or context field whose value is the item's language pair (``eng_Latn-fra_Latn``):
    imports copy it into the item's tag, so per-tag metrics are per language pair, and a
    predictions line that names a pair must name the item's. Target ``{"references": [text,
    ...]}``; model output ``{"translation": text}``. Metrics from sacreBLEU
    (``tasks/metrics/translation.py``): corpus BLEU, chrF++ and spBLEU in [0, 1], each with its
    signature string; per-item score ``chrfpp`` (sentence chrF++). The model is wrong when the
    sentence chrF++ of its translation against the annotator's reference is below
    ``model_wrong.threshold`` (0.4 by default). Models are Hugging Face seq2seq directories
    (``...ForConditionalGeneration``) run with ``generate``.
    """

    name = "generation"
    display_name = "Generation (translation)"
    has_labels = False
    target_field = "references"
    prediction_field = "translation"
    score_key = "chrfpp"
    correction_field = "corrected_reference"
    architecture_suffix = "ForConditionalGeneration"
    predictor_class = "tasks.loop.registry.GenerationPredictor"
    config_properties = {
        "language_pair_field": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"},
        "max_new_tokens": {"type": "integer", "minimum": 1, "maximum": 1024},
    }
    model_wrong_rule = "chrf_below"
    perf_metrics = ("bleu", "chrfpp", "spbleu")

    def config_errors(self, config):
        errors = []
        if len(config["model_inputs"]) != 1:
            errors.append("config.model_inputs: a generation task takes one source field")
        if config["model_wrong"]["rule"] != self.model_wrong_rule:
            errors.append(f"config.model_wrong.rule: a generation task uses '{self.model_wrong_rule}'")
        if config["perf_metric"] not in self.perf_metrics:
            errors.append(f"config.perf_metric: a generation task uses one of {', '.join(self.perf_metrics)}")
        pair = config.get("language_pair_field")
        names = {f["name"] for f in config["context_fields"]} | {f["name"] for f in config["input_fields"]}
        if pair is not None and pair not in names:
            errors.append(f"config.language_pair_field: '{pair}' is not a context or input field ({sorted(names)})")
        return errors

    def checked_item_fields(self, config):
        """The language pair field, when the task has one."""
        return [config["language_pair_field"]] if config.get("language_pair_field") else []

    def clean_target(self, config, example_input, target):
        """``{"references": [text]}``: the annotator's reference translation, non-empty, trimmed."""
        target = target if isinstance(target, dict) else {}
        references = _references(target.get("references"))
        if references is None:
            raise RuleError(
                TargetErrorCode.INVALID_REFERENCE, "Write the reference translation of your source text.", field="reference"
            )
        return {"references": references}

    def import_target(self, config, raw, inputs, *, source):
        """A reference text, a list of them, or either as a JSON string (CSV)."""
        if isinstance(raw, str) and raw.lstrip().startswith("["):
            try:
                raw = json.loads(raw)
            except json.JSONDecodeError:
                raise TargetError(f"field '{source}' is not a JSON list of references") from None
        references = _references(raw)
        if references is None:
            raise TargetError(f"field '{source}': expected a reference text or a non-empty list of reference texts")
        return {"references": references}

    def target_from_row(self, config, row, inputs):
        references = _references(row.get("references"))
        if references is None:
            return None, "no reference text"
        return {"references": references}, None

    def form_fields(self, config, *, optional_label=False):
        from django import forms

        return {"reference": forms.CharField(
            required=False, strip=True, max_length=5000, widget=forms.Textarea(attrs={"rows": 3}),
            label="Reference translation (optional)" if optional_label else "Reference translation",
        )}

    def target_from_form(self, cleaned, *, optional=False):
        reference = cleaned.get("reference") or ""
        if optional and not reference.strip():
            return None
        return {"references": [reference]}

    def form_initial(self, target):
        return {"reference": (target.get("references") or [""])[0]}

    def model_wrong(self, config, target, model_output):
        """Sentence chrF++ of ``model_output["translation"]`` against the references ``< chrf_threshold(config)``."""
        from tasks.metrics.translation import sentence_chrfpp

        return sentence_chrfpp(str(model_output.get("translation", "")), target["references"]) < chrf_threshold(config)

    def answer_matches(self, config, gold, answer):
        """The answer's reference reaches the chrF++ threshold against the gold references."""
        from tasks.metrics.translation import sentence_chrfpp

        text = (answer.get("references") or [""])[0]
        return sentence_chrfpp(text, gold.get("references") or []) >= chrf_threshold(config)

    def answer_display(self, config, example_input, target, output):
        from tasks.metrics.translation import sentence_chrfpp

        return {
            "translation": str(output.get("translation", "")),
            "reference": (target.get("references") or [""])[0] if target else None,
            "chrf": sentence_chrfpp(str(output.get("translation", "")), target["references"]) if target else None,
        }

    def parse_prediction(self, config, value):
        if not isinstance(value, str):
            return None, ("the translation is not a string", type(value).__name__)
        return value, None

    def score(self, config, items, outputs):
        """Corpus BLEU, chrF++ and spBLEU (sacreBLEU) of the translations, over all rows or a subset.

        Raises ``RuleError`` (``bad_item``) for an item without references, and
        (``spbleu_unavailable``) when the task ranks by spBLEU and it cannot be computed here.
        """
        from tasks.metrics.translation import corpus_scores, sentence_chrfpp_many, spbleu_unavailable

        references = []
        for item in items:
            refs = _references((item["target"] or {}).get("references"))
            if refs is None:
                raise RuleError("bad_item", f"Item {item['uid']} of the dataset has no reference text ({item['target']!r}).")
            references.append(refs)
        if config.get("perf_metric") == "spbleu" and spbleu_unavailable():
            raise RuleError("spbleu_unavailable", f"The task ranks by spBLEU, which is {spbleu_unavailable()}.")
        hypotheses = [str(o.get("translation") or "") for o in outputs]
        per_item = sentence_chrfpp_many(hypotheses, references)
        overall, signatures = corpus_scores(hypotheses, references)

        def metrics(rows):
            if rows is None:
                return {**overall, "n": len(hypotheses)}
            scores, _ = corpus_scores([hypotheses[i] for i in rows], [references[i] for i in rows])
            return {**scores, "n": len(rows)}

        return ItemScores(
            per_item=per_item, item_results=np.array(per_item, dtype=np.float32), _metrics=metrics, signatures=signatures,
        )

    def consistency(self, config, original, perturbed):
        """Corpus chrF++ of the perturbed translations with the original translations as references."""
        from tasks.metrics.translation import corpus_scores

        scores, _ = corpus_scores([p.get("translation") or "" for p in perturbed], [[o.get("translation") or ""] for o in original])
        return scores["chrfpp"]

    endpoint_answer_rule = "The answer's text, stripped of surrounding white space, is the translation."

    def endpoint_prompt(self, config):
        (source,) = config["model_inputs"]
        return {"system": "Translate the text the user sends. Answer with the translation only.", "user": f"${source}"}

    def endpoint_answer(self, config, text, model_input):
        return {"translation": (text or "").strip()}

    def head_class(self):
        from transformers import AutoModelForSeq2SeqLM

        return AutoModelForSeq2SeqLM

    def head_mapping_names(self):
        from transformers.models.auto import modeling_auto

        return modeling_auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES

    def head_kwargs(self, labels):
        return {}

    def check_model_config(self, hf_config, task):
        """A decoder has no labels to match."""
        return None

    def training_defaults(self, config):
        return {"epochs": 4, "batch_size": 16, "learning_rate": 3e-4, "max_length": 128, "freeze_embeddings": False}

    def training_features(self, tokenizer, examples, *, config, labels, max_length, doc_stride):
        """One feature per (example, reference): the source's token ids and the reference's as ``labels``."""
        (source,) = config["model_inputs"]
        pairs = [(ex.input[source], ref) for ex in examples for ref in ex.target["references"]]
        encoded = tokenizer(
            [s for s, _ in pairs], text_target=[r for _, r in pairs], truncation=True, max_length=max_length,
        )
        return [{key: encoded[key][i] for key in encoded.keys()} for i in range(len(pairs))]

    def data_collator(self, tokenizer):
        """Pads inputs and ``labels`` (with -100, ignored by the loss): ``DataCollatorForSeq2Seq``."""
        from transformers import DataCollatorForSeq2Seq

        return DataCollatorForSeq2Seq(tokenizer, return_tensors="pt")
