"""The declared schema of ``Task.config`` and its validation.

A task config says everything the platform needs to run a task:

- ``labels``: the label set (classification), e.g. ``["entailment", "neutral", "contradiction"]``;
  ``label_aliases`` maps other spellings found in data files (``"e"``) to a label.
- ``context_fields``: the fields of ``Context.data`` shown to the annotator (``premise``, ``passage``, ``prompt``).
- ``input_fields``: the fields the annotator writes (``hypothesis``, ``question``, ``text``), with caps.
- ``model_inputs``: the names, in order, fed to the model: one text, a text pair, or
  ``[question, passage]`` for extractive QA.
- ``model_wrong``: ``{"rule": "label_differs"}`` or ``{"rule": "squad_f1_below", "threshold": 0.4}``.
- ``perf_metric`` (``accuracy``, ``macro_f1``, ``squad_f1``), ``delta_metrics``, ``dynascore_weights``.
- ``validations_needed`` (default 3), ``validate_non_fooling``, ``daily_example_cap``,
  ``context_strategy`` (``least_used``, ``uniform``, ``least_fooled``), ``split_ratios``, ``split_seed``.
"""

from jsonschema import Draft202012Validator

DELTA_METRICS = ["throughput", "memory", "robustness", "fairness"]
PERF_METRICS = ["accuracy", "macro_f1", "squad_f1"]

_field = {
    "type": "object",
    "required": ["name"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"},
        "label": {"type": "string"},
        "help": {"type": "string"},
        "max_length": {"type": "integer", "minimum": 1, "maximum": 100000},
        "required": {"type": "boolean"},
        "widget": {"enum": ["text", "textarea"]},
        "prefill_from": {"type": "string", "description": "A context field copied in as a starting point."},
    },
}

TASK_CONFIG_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["context_fields", "input_fields", "model_inputs", "model_wrong", "perf_metric"],
    "properties": {
        "labels": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 2, "uniqueItems": True},
        "label_aliases": {"type": "object", "additionalProperties": {"type": "string"}},
        "label_descriptions": {"type": "object", "additionalProperties": {"type": "string"}},
        "context_fields": {"type": "array", "items": _field},
        "input_fields": {"type": "array", "items": _field, "minItems": 1},
        "model_inputs": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
        "model_wrong": {
            "type": "object",
            "required": ["rule"],
            "additionalProperties": False,
            "properties": {
                "rule": {"enum": ["label_differs", "squad_f1_below"]},
                "threshold": {"type": "number", "minimum": 0, "maximum": 1},
            },
        },
        "perf_metric": {"enum": PERF_METRICS},
        "delta_metrics": {"type": "array", "items": {"enum": DELTA_METRICS}, "uniqueItems": True},
        "dynascore_weights": {
            "type": "object",
            "additionalProperties": False,
            "properties": {m: {"type": "number", "minimum": 0, "maximum": 5} for m in ["performance", *DELTA_METRICS]},
        },
        "validations_needed": {"type": "integer", "minimum": 1, "maximum": 20},
        "validate_non_fooling": {"type": "boolean"},
        "daily_example_cap": {"type": "integer", "minimum": 0},
        "context_strategy": {"enum": ["least_used", "uniform", "least_fooled"]},
        "explanation_fields": {"type": "array", "items": {"type": "string"}},
        "split_ratios": {
            "type": "object",
            "additionalProperties": False,
            "required": ["train", "dev", "test"],
            "properties": {s: {"type": "number", "minimum": 0, "maximum": 1} for s in ["train", "dev", "test"]},
        },
        "split_seed": {"type": "integer"},
    },
}

_validator = Draft202012Validator(TASK_CONFIG_SCHEMA)


def _path(error) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "(top level)"


def validate_task_config(config, *, kind: str) -> list[str]:
    """Return a list of messages, each naming the config field at fault; empty when valid.

    Checks the JSON Schema above, then the rules between fields: classification needs
    ``labels``; ``model_inputs`` must name known fields; QA must use ``squad_f1`` and the
    ``squad_f1_below`` rule; ``split_ratios`` must sum to 1.
    """
    if not isinstance(config, dict):
        return ["config: must be a JSON object"]
    errors = [f"config.{_path(e)}: {e.message}" for e in sorted(_validator.iter_errors(config), key=str)]
    if errors:
        return errors
    names = {f["name"] for f in config["context_fields"]} | {f["name"] for f in config["input_fields"]}
    for name in config["model_inputs"]:
        if name not in names:
            errors.append(f"config.model_inputs: '{name}' is not a context or input field ({sorted(names)})")
    for field in config["input_fields"]:
        source = field.get("prefill_from")
        if source and source not in {f["name"] for f in config["context_fields"]}:
            errors.append(f"config.input_fields.{field['name']}.prefill_from: '{source}' is not a context field")
    if kind == "classification":
        if "labels" not in config:
            errors.append("config.labels: a classification task needs a label set")
        for alias, label in config.get("label_aliases", {}).items():
            if label not in config.get("labels", []):
                errors.append(f"config.label_aliases.{alias}: '{label}' is not one of the labels")
        if config["model_wrong"]["rule"] != "label_differs":
            errors.append("config.model_wrong.rule: a classification task uses 'label_differs'")
        if config["perf_metric"] == "squad_f1":
            errors.append("config.perf_metric: 'squad_f1' is for extractive QA tasks")
    elif kind == "extractive_qa":
        if len(config["model_inputs"]) != 2:
            errors.append("config.model_inputs: extractive QA needs [question field, passage field]")
        if config["model_wrong"]["rule"] != "squad_f1_below":
            errors.append("config.model_wrong.rule: an extractive QA task uses 'squad_f1_below'")
        if config["perf_metric"] != "squad_f1":
            errors.append("config.perf_metric: an extractive QA task uses 'squad_f1'")
    else:
        errors.append(f"kind: unknown task kind '{kind}'")
    ratios = config.get("split_ratios")
    if ratios and abs(sum(ratios.values()) - 1.0) > 1e-6:
        errors.append(f"config.split_ratios: must sum to 1 (they sum to {sum(ratios.values()):g})")
    return errors


def normalise_label(config: dict, value) -> str | None:
    """Return the task label for ``value`` (a label or one of its aliases), or None if unknown."""
    if value is None:
        return None
    value = str(value).strip()
    labels = config.get("labels", [])
    if value in labels:
        return value
    return config.get("label_aliases", {}).get(value)
