"""What a task kind means, in one place: one spec class per kind, reached as ``task.spec``.

Every other module asks the spec (``task.spec.<method>``) instead of branching on
``task.kind``; ``tasks/tests/test_no_kind_branches.py`` keeps it so. A spec owns, for its kind:

- the annotator's target: its field in ``Example.target`` / ``DatasetItem.target``
  (``target_field``), its form fields, its cleaning and validation (``clean_target``,
  ``import_target``, ``target_from_row``);
- the model input built from an example or a dataset item (``model_input``), and the QA
  passage taken in one way (``passage_field``: the second of ``model_inputs``);
- the fooled-the-model rule (``model_wrong``; DESIGN.md, "Model wrong");
- its metrics, the per-item score key and the predictions-file field (``score``,
  ``consistency``, ``score_key``, ``prediction_field``, ``parse_prediction``);
- the model head (``head_class``, ``architecture_suffix``, ``predictor_class``) used by the
  registry, training and the submission checks, and the training features;
- how an example and the model's answer are shown (``display_name``, ``has_labels``,
  ``answer_display``);
- its part of the task config's JSON Schema (``config_properties``) and the rules between
  config fields (``config_errors``).

Adding a kind is one subclass of ``TaskKindSpec`` registered with ``@register`` (see
``docs/adding-a-task-kind.md``). The specs are stateless: one instance per kind, shared.
"""

from __future__ import annotations

import json
import dataclasses
from dataclasses import dataclass

import numpy as np

from dynabench.errors import RuleError
from tasks.display import label_bars, passage_segments
from tasks.error_codes import TargetErrorCode
from tasks.metrics import best_over_ground_truths, squad_exact_match, squad_f1
from tasks.model_checks import match_labels

DEFAULT_QA_THRESHOLD = 0.4
"""SQuAD word F1 below which an extractive QA model counts as wrong when the config does not say."""


class TargetError(ValueError):
    """A target read from a file (import, training data) does not fit the task; ``str()`` says why."""


class OutOfTaskTarget(TargetError):
    """A well-formed target that is not one of the task's (a label the task does not have).

    A training file may hold more classes than the task (DynaSent's ``mixed``): training skips
    such rows and counts them under ``skip_reason``; an import refuses them.
    """

    def __init__(self, message: str, *, skip_reason: str):
        super().__init__(message)
        self.skip_reason = skip_reason


def normalise_label(config: dict, value) -> str | None:
    """Return the task label for ``value`` (a label or one of its aliases), or None if unknown."""
    if value is None:
        return None
    value = str(value).strip()
    labels = config.get("labels", [])
    if value in labels:
        return value
    return config.get("label_aliases", {}).get(value)


def span_at(passage: str, *, text, start) -> bool:
    """Return True when ``text`` is non-empty and exactly ``passage[start:start + len(text)]``.

    The one span check of the platform (annotation, validation corrections, imports, training
    data). ``start`` must be a whole number ≥ 0 (not a bool); anything else is False.
    """
    return (
        isinstance(text, str) and bool(text) and isinstance(start, int) and not isinstance(start, bool)
        and start >= 0 and passage[start:start + len(text)] == text
    )


@dataclass
class ItemScores:
    """Per-item scores of a model on a dataset, as the spec computes them.

    ``per_item``: one score per item, written to the predictions file under the spec's
    ``score_key`` (a bool for classification, SQuAD F1 in [0, 1] for QA). ``item_results``:
    the array stored on an evaluation run for paired bootstrap intervals (2 × n label codes,
    gold then predicted, or n F1 values). ``metrics(rows)``: the metrics dict of
    the rows given (all rows when None), with ``n``.
    """

    per_item: list
    item_results: np.ndarray
    _metrics: object
    signatures: dict = dataclasses.field(default_factory=dict)
    """``{metric: signature string}`` of metrics computed by a library that has one (sacreBLEU),
    stored on the evaluation run (``EvaluationRun.metric_signatures``); empty otherwise."""

    def metrics(self, rows: list[int] | None = None) -> dict:
        return self._metrics(rows)


class TaskKindSpec:
    """Base class of a task kind. Subclasses set the class attributes and implement the methods.

    Methods take the task's ``config`` (a dict, ``Task.config``) rather than the ``Task``, so
    they work without the database.
    """

    name: str = ""
    """The stored ``Task.kind`` value."""
    display_name: str = ""
    has_labels: bool = False
    """True when the annotator picks a label (templates show label choices); False: a span."""
    target_field: str = ""
    """The key of the target in ``Example.target``, ``DatasetItem.target`` and import files."""
    prediction_field: str = ""
    """The key of the model's answer in its output and in a predictions file line."""
    score_key: str = ""
    """The key of the per-item score in an evaluation's predictions file."""
    correction_field: str = ""
    """The validator's correction field in ``Validation.metadata``."""
    architecture_suffix: str = ""
    """The transformers architecture suffix a submitted model must have."""
    predictor_class: str = ""
    """Dotted path of the registry's predictor class (has a ``for_task`` constructor)."""
    config_properties: dict = {}
    """JSON Schema properties of the config keys only this kind has."""
    model_wrong_rule: str = ""
    """The ``config["model_wrong"]["rule"]`` a task of this kind must name."""
    perf_metrics: tuple[str, ...] = ()
    """The metrics ``score`` returns that a config may name as ``perf_metric``."""
    submissions: tuple[str, ...] = ("model", "predictions")
    """What participants submit to the leaderboard: ``model`` (a Hugging Face directory),
    ``predictions`` (a predictions file) and/or ``selection`` (a list of pool uids that the
    platform trains its fixed recipe on, ``DataCentricSpec``)."""

    def checked_item_fields(self, config: dict) -> list[str]:
        """Fields of a dataset item's input that a predictions-file line may repeat and must then
        match (a generation item's language pair); default none."""
        return []

    # --- config ---------------------------------------------------------------------------

    def config_errors(self, config: dict) -> list[str]:
        """Return messages (each naming the config field at fault) for rules between fields of this kind."""
        raise NotImplementedError

    # --- model input -----------------------------------------------------------------------

    def passage_field(self, config: dict) -> str | None:
        """The field holding the passage the answer is a span of, or None (no passage)."""
        return None

    def passage_of(self, config: dict, example_input: dict, context_data: dict | None = None) -> str | None:
        """Return the passage of an example (its input, else its context), or None when the kind has none."""
        name = self.passage_field(config)
        if name is None:
            return None
        return example_input.get(name) or (context_data or {}).get(name) or ""

    def model_input(self, config: dict, record: dict | None) -> dict:
        """Return ``{field: text}`` for each of ``config["model_inputs"]`` from an example's or an item's input."""
        record = record or {}
        return {name: record.get(name, "") for name in config["model_inputs"]}

    def perturbable_fields(self, config: dict) -> list[str]:
        """The model inputs that robustness and fairness perturbations may rewrite."""
        return list(config["model_inputs"])

    # --- the target ------------------------------------------------------------------------

    def clean_target(self, config: dict, example_input: dict, target) -> dict:
        """Return the annotator's target in its stored shape, or raise ``RuleError`` saying what to fix."""
        raise NotImplementedError

    def import_target(self, config: dict, raw, inputs: dict, *, source: str) -> dict:
        """Return the stored target from a file's raw value (``source`` names the file field); raise ``TargetError``."""
        raise NotImplementedError

    def target_from_row(self, config: dict, row: dict, inputs: dict) -> tuple[dict | None, str | None]:
        """Return ``(target, None)`` from a stored row (``Example.target`` keys), or ``(None, reason)`` when it no longer fits."""
        raise NotImplementedError

    def form_fields(self, config: dict, *, optional_label: bool = False) -> dict:
        """Return the Django form fields for the target (name → field)."""
        raise NotImplementedError

    def target_from_form(self, cleaned: dict, *, optional: bool = False) -> dict | None:
        """Return the target from a form's ``cleaned_data`` (None when ``optional`` and empty)."""
        raise NotImplementedError

    def form_initial(self, target: dict) -> dict:
        """Return a form's initial values that redisplay ``target``."""
        raise NotImplementedError

    # --- the model-wrong rule ----------------------------------------------------------------

    def model_wrong(self, config: dict, target: dict, model_output: dict) -> bool:
        """Return True when ``model_output`` is wrong for ``target`` (the example fooled the model)."""
        raise NotImplementedError

    def answer_matches(self, config: dict, gold: dict, answer: dict) -> bool:
        """Return True when a person's ``answer`` (a cleaned target, ``clean_target``'s shape) agrees
        with the ``gold`` target: a qualification quiz item answered right."""
        raise NotImplementedError

    def quiz_form_fields(self, config: dict) -> dict:
        """The Django form fields of one quiz answer (default: the create form's target fields)."""
        return self.form_fields(config)

    def quiz_target(self, config: dict, item_input: dict, cleaned: dict) -> dict | None:
        """The raw target of one quiz answer from the quiz form's ``cleaned`` values (default:
        ``target_from_form``); ``clean_target`` checks it afterwards."""
        return self.target_from_form(cleaned, optional=True)

    # --- display ------------------------------------------------------------------------------

    def answer_display(self, config: dict, example_input: dict, target: dict | None, output: dict) -> dict:
        """Template context that draws the model's answer next to the annotator's (if any)."""
        raise NotImplementedError

    # --- evaluation ---------------------------------------------------------------------------

    def parse_prediction(self, config: dict, value) -> tuple[object, tuple[str, str] | None]:
        """Return ``(value, None)`` for a predictions-file value (normalised), or ``(None, (problem, detail))``:
        the problem heading the file's report groups lines under, and what to show after the line number
        (empty: nothing)."""
        raise NotImplementedError

    def score(self, config: dict, items: list[dict], outputs: list[dict]) -> ItemScores:
        """Score model ``outputs`` against dataset ``items`` (dicts with ``uid`` and ``target``)."""
        raise NotImplementedError

    def consistency(self, config: dict, original: list[dict], perturbed: list[dict]) -> float:
        """The perf metric of ``perturbed`` outputs measured against the ``original`` outputs, in [0, 1]."""
        raise NotImplementedError

    # --- model head and training -------------------------------------------------------------

    def head_class(self):
        """The transformers Auto class of this kind's model head."""
        raise NotImplementedError

    def head_mapping_names(self) -> dict:
        """transformers' ``model_type → architecture`` names for this head."""
        raise NotImplementedError

    def head_kwargs(self, labels: list[str]) -> dict:
        """Keyword arguments for ``head_class().from_pretrained`` when a fresh head is put on an encoder."""
        raise NotImplementedError

    def check_model_config(self, hf_config: dict, task) -> list[str] | None:
        """Check a model's ``config.json`` against the task beyond its architecture; return the
        task label of each model output (None when the head has no labels). Raises ``RuleError``."""
        raise NotImplementedError

    def training_defaults(self, config: dict) -> dict:
        """Hyperparameter defaults (``tasks.training.Hyperparameters`` fields) for this kind."""
        raise NotImplementedError

    def training_features(self, tokenizer, examples, *, config: dict, labels: list[str], max_length: int, doc_stride: int) -> list[dict]:
        """Return tokenised training features (with their training targets) of ``examples``."""
        raise NotImplementedError

    def data_collator(self, tokenizer):
        """The collator that pads a batch of ``training_features`` (default: ``DataCollatorWithPadding``)."""
        from transformers import DataCollatorWithPadding

        return DataCollatorWithPadding(tokenizer, return_tensors="pt")

    def training_pool(self, config: dict) -> str | None:
        """The name of the dataset participants select training items from (never evaluated), or None."""
        return None

    def selection_budget(self, config: dict) -> int | None:
        """The most pool items one selection may hold, or None (the kind takes no selections)."""
        return None


KINDS: dict[str, TaskKindSpec] = {}


def register(spec_class: type[TaskKindSpec]) -> type[TaskKindSpec]:
    """Class decorator: register one instance of ``spec_class`` under its ``name``."""
    KINDS[spec_class.name] = spec_class()
    return spec_class


def get_spec(kind: str) -> TaskKindSpec:
    """Return the spec of ``kind``; raise ``KeyError`` naming the known kinds for an unknown one."""
    try:
        return KINDS[kind]
    except KeyError:
        raise KeyError(f"unknown task kind {kind!r} (known: {', '.join(KINDS)})") from None


def kind_choices() -> list[tuple[str, str]]:
    """``[(name, display name)]`` of every registered kind, for ``Task.kind``."""
    return [(spec.name, spec.display_name) for spec in KINDS.values()]


def _classification_metrics(gold: list[str], predicted: list[str | None]) -> dict:
    from sklearn.metrics import accuracy_score, f1_score

    pred = [p if p is not None else "" for p in predicted]
    return {
        "accuracy": float(accuracy_score(gold, pred)),
        "macro_f1": float(f1_score(gold, pred, average="macro", zero_division=0)),
        "n": len(gold),
    }


_LABEL_PROPERTIES = {
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
    prediction_field = "label"
    score_key = "correct"
    correction_field = "corrected_label"
    architecture_suffix = "ForSequenceClassification"
    predictor_class = "tasks.registry.ClassificationPredictor"
    config_properties = _LABEL_PROPERTIES
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
        """``model_output["label"] != target["label"]``."""
        return model_output.get("label") != target["label"]

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
        metrics = _classification_metrics([o["label"] for o in original], [p["label"] for p in perturbed])
        return metrics[config["perf_metric"]]

    def head_class(self):
        from transformers import AutoModelForSequenceClassification

        return AutoModelForSequenceClassification

    def head_mapping_names(self):
        from transformers.models.auto import modeling_auto

        return modeling_auto.MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES

    def head_kwargs(self, labels):
        return {"num_labels": len(labels), "id2label": dict(enumerate(labels)), "label2id": {label: i for i, label in enumerate(labels)}}

    def check_model_config(self, hf_config, task):
        """The model's ``id2label`` must name exactly the task's labels (``tasks.model_checks.match_labels``)."""
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


@register
class ExtractiveQASpec(TaskKindSpec):
    """Extractive question answering (SQuAD-style): the answer is a span of the passage.

    ``config["model_inputs"]`` is ``[question field, passage field]``. Target
    ``{"answers": [{"text", "answer_start"}]}`` (character offset into the passage); model
    output ``{"answer", "start", "end", "score"}``. The model is wrong when the SQuAD word F1
    of its answer (best over the annotator's answers) is below ``model_wrong.threshold``
    (0.4 by default). Metrics: SQuAD F1 and exact match (``tasks.metrics``); per-item score
    ``squad_f1``.
    """

    name = "extractive_qa"
    display_name = "Extractive question answering"
    has_labels = False
    target_field = "answers"
    prediction_field = "answer"
    score_key = "squad_f1"
    correction_field = "corrected_answer"
    architecture_suffix = "ForQuestionAnswering"
    predictor_class = "tasks.registry.ExtractiveQAPredictor"
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
        try:
            if isinstance(start, bool) or float(start) != int(start):
                raise ValueError
            start = int(start)
        except (TypeError, ValueError):
            raise RuleError(TargetErrorCode.INVALID_ANSWER, "The answer's start must be a character position.", field="answer")
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
                raw = json.loads(raw)
            except json.JSONDecodeError:
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
                raise TargetError(f"answers: answer_start must be a whole number ≥ 0, found {start!r}")
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
    (``tasks/translation_metrics.py``): corpus BLEU, chrF++ and spBLEU in [0, 1], each with its
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
    predictor_class = "tasks.registry.GenerationPredictor"
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
        from tasks.translation_metrics import sentence_chrfpp

        return sentence_chrfpp(str(model_output.get("translation", "")), target["references"]) < chrf_threshold(config)

    def answer_matches(self, config, gold, answer):
        """The answer's reference reaches the chrF++ threshold against the gold references."""
        from tasks.translation_metrics import sentence_chrfpp

        text = (answer.get("references") or [""])[0]
        return sentence_chrfpp(text, gold.get("references") or []) >= chrf_threshold(config)

    def answer_display(self, config, example_input, target, output):
        from tasks.translation_metrics import sentence_chrfpp

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
        from tasks.translation_metrics import corpus_scores, sentence_chrfpp_many, spbleu_unavailable

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
        from tasks.translation_metrics import corpus_scores

        scores, _ = corpus_scores([p.get("translation") or "" for p in perturbed], [[o.get("translation") or ""] for o in original])
        return scores["chrfpp"]

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


_DATA_CENTRIC_PROPERTIES = {
    "data_centric": {
        "type": "object",
        "required": ["pool", "budget"],
        "additionalProperties": False,
        "properties": {
            "pool": {"type": "string", "minLength": 1, "description": "Name of the dataset holding the candidate pool."},
            "budget": {"type": "integer", "minimum": 1, "description": "At most this many pool items per selection."},
            "seed": {"type": "integer", "description": "Training seed of the fixed recipe (default 13)."},
            "recipe": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "epochs": {"type": "integer", "minimum": 1, "maximum": 100},
                    "batch_size": {"type": "integer", "minimum": 1, "maximum": 512},
                    "learning_rate": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                    "max_length": {"type": "integer", "minimum": 8, "maximum": 512},
                },
            },
        },
    },
}


@register
class DataCentricSpec(ClassificationSpec):
    """Data-centric classification (DataPerf-style): participants submit a training set, not a model.

    The owner names a candidate pool (a dataset of the task, ``config["data_centric"]["pool"]``,
    never evaluated), a budget (at most ``budget`` items per selection) and the fixed recipe
    (the retraining job's settings, ``recipe``, with ``seed``; the base encoder is the
    platform's, ``tasks.training.default_encoder``). A participant submits a list of pool uids
    (``check_selection``); an RQ job trains the recipe on exactly those items
    (``tasks.training.train_selection``) and the model is scored like any other on the task's
    scoring (hidden) datasets, so the leaderboard ranks selections. Targets, metrics and the
    model head are classification's.
    """

    name = "data_centric"
    display_name = "Data-centric (training-set selection)"
    config_properties = {**_LABEL_PROPERTIES, **_DATA_CENTRIC_PROPERTIES}
    submissions = ("selection",)

    def config_errors(self, config):
        errors = super().config_errors(config)
        if "data_centric" not in config:
            errors.append("config.data_centric: a data-centric task needs its pool dataset and budget")
        return errors

    def training_pool(self, config):
        """The candidate pool's dataset name (never evaluated)."""
        return config["data_centric"]["pool"]

    def training_defaults(self, config):
        """The owner's fixed recipe over classification's defaults, with the task's seed."""
        settings = config.get("data_centric", {})
        return {**super().training_defaults(config), **settings.get("recipe", {}), "seed": int(settings.get("seed", 13))}

    def selection_budget(self, config):
        return int(config["data_centric"]["budget"])

    def check_selection(self, config, uids, pool_uids) -> list[str]:
        """Return the selection (uids of the pool, in the order given) or raise ``RuleError``
        (``bad_selection``, field ``uids``) naming the first offender: not a list of strings, an
        empty list, a duplicate, more uids than the budget, a uid not in the pool."""
        budget = self.selection_budget(config)

        def refuse(message):
            raise RuleError(TargetErrorCode.BAD_SELECTION, message, field="uids")

        if not isinstance(uids, list) or not uids:
            refuse("A selection is a non-empty list of pool uids.")
        if len(uids) > budget:
            refuse(f"The selection has {len(uids)} uids, over the budget of {budget}; the first over it is {uids[budget]!r}.")
        seen = set()
        for position, uid in enumerate(uids, start=1):
            if not isinstance(uid, str) or not uid:
                refuse(f"Entry {position} of the selection is not a uid string: {uid!r}.")
            if uid in seen:
                refuse(f"Entry {position} repeats the uid {uid!r}.")
            if uid not in pool_uids:
                refuse(f"Entry {position}: {uid!r} is not in the pool '{config['data_centric']['pool']}'.")
            seen.add(uid)
        return list(uids)
