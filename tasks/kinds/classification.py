"""The ``classification`` kind: the target is one of the task's labels; accuracy and macro-F1;
the model is wrong when its label differs from the annotator's."""

from __future__ import annotations


import numpy as np

from dynabench.errors import RuleError
from tasks.kinds.display import label_bars
from tasks.error_codes import TargetErrorCode
from tasks.loop.model_checks import match_labels
from tasks.kinds.base import ItemScores, OutOfTaskTarget, TaskKindSpec, first_label_in, normalise_label, register


def _classification_metrics(gold: list[str], predicted: list[str | None]) -> dict:
    from sklearn.metrics import accuracy_score, f1_score

    pred = [p if p is not None else "" for p in predicted]
    return {
        "accuracy": float(accuracy_score(gold, pred)),
        "macro_f1": float(f1_score(gold, pred, average="macro", zero_division=0)),
        "n": len(gold),
    }


LABEL_PROPERTIES = {
    "labels": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 2, "uniqueItems": True},
    "label_aliases": {"type": "object", "additionalProperties": {"type": "string"}},
    "label_descriptions": {"type": "object", "additionalProperties": {"type": "string"}},
}


@register
class ClassificationSpec(TaskKindSpec):
    """Classification (NLI, sentiment, hate speech): the annotator picks one of the task's labels.

    Target ``{"label": <label>}``; model output ``{"label", "probs": {label: p}}``. The model
    is wrong when its label differs from the annotator's. Metrics: accuracy and macro-F1
    (scikit-learn); per-item score ``correct``.
    """

    name = "classification"
    display_name = "Classification"
    has_labels = True
    target_field = "label"
    release_task_category = "text-classification"
    prediction_field = "label"
    score_key = "correct"
    correction_field = "corrected_label"
    architecture_suffix = "ForSequenceClassification"
    predictor_class = "tasks.loop.registry.ClassificationPredictor"
    config_properties = LABEL_PROPERTIES
    model_wrong_rule = "label_differs"
    perf_metrics = ("accuracy", "macro_f1")

    def config_errors(self, config):
        errors = []
        if "labels" not in config:
            errors.append("config.labels: a classification task needs a label set")
        for alias, label in config.get("label_aliases", {}).items():
            if label not in config.get("labels", []):
                errors.append(f"config.label_aliases.{alias}: '{label}' is not one of the labels")
        if config["model_wrong"]["rule"] != self.model_wrong_rule:
            errors.append(f"config.model_wrong.rule: a classification task uses '{self.model_wrong_rule}'")
        if config["perf_metric"] not in self.perf_metrics:
            errors.append(f"config.perf_metric: a classification task uses one of {', '.join(self.perf_metrics)}")
        return errors

    def release_columns(self, config):
        """Each model input as text, then ``label``: one of the task's labels (a ``ClassLabel``)."""
        inputs = [c for c in super().release_columns(config) if c["source"] == "input"]
        return [*inputs, {"name": "label", "source": "target", "key": "label", "type": "label", "names": list(config.get("labels", []))}]

    def _choices(self, config) -> list[tuple[str, str]]:
        descriptions = config.get("label_descriptions", {})
        return [(label, f"{label} — {descriptions[label]}" if label in descriptions else label) for label in config.get("labels", [])]

    def clean_target(self, config, example_input, target):
        """``{"label": <one of the labels>}``; aliases are accepted and normalised."""
        target = target if isinstance(target, dict) else {}
        raw = target.get("label")
        choices = ", ".join(config.get("labels", []))
        if raw in (None, ""):
            raise RuleError(TargetErrorCode.REQUIRED, f"Pick a label: {choices}.", field="label")
        label = normalise_label(config, raw)
        if label is None:
            raise RuleError(TargetErrorCode.INVALID_LABEL, f"'{raw}' is not a label of this task; pick one of {choices}.", field="label")
        return {"label": label}

    def import_target(self, config, raw, inputs, *, source):
        label = normalise_label(config, raw)
        if label is None:
            aliases = config.get("label_aliases", {})
            known = ", ".join(config.get("labels", [])) + (f" (or {', '.join(sorted(aliases))})" if aliases else "")
            raise OutOfTaskTarget(
                f"unknown label '{raw}' in field '{source}'; expected {known}",
                skip_reason="no label" if raw in (None, "") else f"label {raw!r} not in task labels",
            )
        return {"label": label}

    def target_from_row(self, config, row, inputs):
        label = normalise_label(config, row.get("label"))
        if label is None:
            return None, f"label {row.get('label')!r} not in task labels"
        return {"label": label}, None

    def form_fields(self, config, *, optional_label=False):
        from django import forms

        return {"label": forms.CharField(
            required=False, widget=forms.RadioSelect(choices=self._choices(config)),
            label="Your label (optional)" if optional_label else "Your label",
        )}

    def target_from_form(self, cleaned, *, optional=False):
        label = cleaned.get("label") or ""
        if optional and not label:
            return None
        return {"label": label}

    def form_initial(self, target):
        return {"label": target.get("label")}

    def model_wrong(self, config, target, model_output):
        """``model_output["label"] != target["label"]``, except for a label the model cannot output:
        when the output's ``probs`` (one per label the model knows) have no entry for the annotator's
        label, the model was not fooled but never had the choice, so the example is not counted as
        fooling it (a label added to the task after the model was trained gets no reward)."""
        probs = model_output.get("probs")
        if isinstance(probs, dict) and probs and target["label"] not in probs:
            return False
        return model_output.get("label") != target["label"]

    def labels_out_of_reach(self, config, hf_config):
        """The task labels that no output of the model's ``id2label`` names (directly, case-insensitively,
        or through the task's ``label_aliases``)."""
        id2label = hf_config.get("id2label") if isinstance(hf_config, dict) else None
        names = [str(v) for v in (id2label or {}).values()] if isinstance(id2label, dict) else []
        lowered = {label.lower(): label for label in config.get("labels", [])}
        for alias, label in config.get("label_aliases", {}).items():
            lowered.setdefault(str(alias).strip().lower(), label)
        reachable = {lowered.get(name.strip().lower()) for name in names}
        return [label for label in config.get("labels", []) if label not in reachable]

    def answer_matches(self, config, gold, answer):
        """The same label."""
        return answer.get("label") == gold.get("label")

    def answer_display(self, config, example_input, target, output):
        return {"bars": label_bars(config.get("labels", []), output, yours=(target or {}).get("label"))}

    def parse_prediction(self, config, value):
        label = normalise_label(config, value)
        if label is None:
            return None, (f"invalid label (expected one of {', '.join(config.get('labels', []))})", repr(value))
        return label, None

    def score(self, config, items, outputs):
        """Accuracy and macro-F1 of the predicted labels; raises ``RuleError`` (``bad_item``) for an item without a valid gold label."""
        gold = []
        for item in items:
            label = normalise_label(config, (item["target"] or {}).get("label"))
            if label is None:
                raise RuleError("bad_item", f"Item {item['uid']} of the dataset has no valid gold label ({item['target']!r}).")
            gold.append(label)
        predicted = [o.get("label") for o in outputs]
        codes = {label: i for i, label in enumerate(config.get("labels", []))}
        item_results = np.array([[codes[g] for g in gold], [codes.get(p, -1) for p in predicted]], dtype=np.int16)

        def metrics(rows):
            if rows is None:
                return _classification_metrics(gold, predicted)
            return _classification_metrics([gold[i] for i in rows], [predicted[i] for i in rows])

        return ItemScores(per_item=[g == p for g, p in zip(gold, predicted)], item_results=item_results, _metrics=metrics)

    def consistency(self, config, original, perturbed):
        # An endpoint's answer may name no label (None): it agrees only with another answer naming none.
        metrics = _classification_metrics([o.get("label") or "" for o in original], [p.get("label") for p in perturbed])
        return metrics[config["perf_metric"]]

    endpoint_answer_rule = (
        "The task label (or one of its aliases) named earliest in the answer, as a whole word, case-insensitive; "
        "an answer naming none has no label and counts as wrong."
    )

    def endpoint_prompt(self, config):
        return {
            "system": "You label texts. Answer with exactly one of these labels and nothing else: $labels.",
            "user": "\n".join(f"{name}: ${name}" for name in config["model_inputs"]),
        }

    def endpoint_answer(self, config, text, model_input):
        """``{"label", "probs"}`` with the label ``first_label_in`` the text (probability 1; none: no label)."""
        label = first_label_in(config, text)
        return {"label": label, "probs": {name: float(name == label) for name in config.get("labels", [])}}

    def head_class(self):
        from transformers import AutoModelForSequenceClassification

        return AutoModelForSequenceClassification

    def head_mapping_names(self):
        from transformers.models.auto import modeling_auto

        return modeling_auto.MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES

    def head_kwargs(self, labels):
        return {"num_labels": len(labels), "id2label": dict(enumerate(labels)), "label2id": {label: i for i, label in enumerate(labels)}}

    def check_model_config(self, hf_config, task):
        """The model's ``id2label`` must name exactly the task's labels (``tasks.loop.model_checks.match_labels``)."""
        return match_labels(hf_config.get("id2label") or {}, task)

    def training_defaults(self, config):
        return {"epochs": 8, "batch_size": 16, "learning_rate": 1e-4, "max_length": 96 if len(config["model_inputs"]) == 2 else 64}

    def training_features(self, tokenizer, examples, *, config, labels, max_length, doc_stride):
        """One feature per example: the model inputs (one text or a pair) and ``labels`` (the label index)."""
        label2id = {label: i for i, label in enumerate(labels)}
        columns = [[ex.input[name] for ex in examples] for name in config["model_inputs"]]
        encoded = tokenizer(*columns, truncation=True, max_length=max_length)
        features = []
        for i, ex in enumerate(examples):
            feature = {key: encoded[key][i] for key in encoded.keys()}
            feature["labels"] = label2id[ex.target["label"]]
            features.append(feature)
        return features
