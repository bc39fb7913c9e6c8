"""The declared schema of ``Task.config`` and its validation.

A task config says everything the platform needs to run a task:

- ``labels``: the label set (classification; the keys only one kind has are in its spec's
  ``config_properties``, ``tasks/kinds/``), e.g. ``["entailment", "neutral", "contradiction"]``;
  ``label_aliases`` maps other spellings found in data files (``"e"``) to a label.
- ``context_fields``: the fields of ``Context.data`` shown to the annotator (``premise``, ``passage``, ``prompt``).
- ``input_fields``: the fields the annotator writes (``hypothesis``, ``question``, ``text``), with caps.
- ``model_inputs``: the names, in order, fed to the model: one text, a text pair, or
  ``[question, passage]`` for extractive QA.
- ``model_wrong``: ``{"rule": "label_differs"}`` or ``{"rule": "squad_f1_below", "threshold": 0.4}``.
- ``perf_metric`` (``accuracy``, ``macro_f1``, ``squad_f1``), ``delta_metrics``, ``dynascore_weights``.
- ``validations_needed`` (default 3), ``validation_early_agreement`` (the first N votes agreeing
  settle an example early), ``validation_max_votes`` (the vote budget, default ``2 *
  validations_needed - 1``), ``gold_rate`` (share of the review queue served from gold items),
  ``gold_accuracy_threshold`` and ``gold_min_answers`` (below that accuracy on at least that many
  gold checks, a validator's votes stop counting), ``validate_non_fooling``, ``daily_example_cap``,
  ``context_strategy`` (``least_used``, ``uniform``, ``least_fooled``), ``split_ratios``, ``split_seed``,
  ``min_scoring_items`` (the fewest items a round's dev or test set may hold when it closes).
- ``license``: the licence of the task's data (a URL or an SPDX id), given in the Croissant metadata.
"""

from functools import lru_cache

from jsonschema import Draft202012Validator

from tasks.kinds import KINDS

DELTA_METRICS = ["throughput", "memory", "robustness", "fairness"]
PERF_METRICS = list(dict.fromkeys(metric for spec in KINDS.values() for metric in spec.perf_metrics))
"""Every kind's performance metrics, each once (in the order the kinds name them)."""

_field = {
    "type": "object",
    "required": ["name"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"},
        "label": {"type": "string"},
        "review_label": {"type": "string", "description": "The heading validators see (default: from label)."},
        "help": {"type": "string"},
        "max_length": {"type": "integer", "minimum": 1, "maximum": 100000},
        "required": {"type": "boolean"},
        "widget": {"enum": ["text", "textarea"]},
        "type": {"enum": ["text", "image", "audio"], "description": "image: the field holds an image's sha256 (tasks.data.images); audio: a clip's sha256 (tasks.data.audio)."},
        "prefill_from": {"type": "string", "description": "A context field copied in as a starting point."},
    },
}

TASK_CONFIG_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["context_fields", "input_fields", "model_inputs", "model_wrong", "perf_metric"],
    "properties": {
        "context_fields": {"type": "array", "items": _field},
        "input_fields": {"type": "array", "items": _field, "minItems": 1},
        "model_inputs": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
        "model_wrong": {
            "type": "object",
            "required": ["rule"],
            "additionalProperties": False,
            "properties": {
                "rule": {"enum": [spec.model_wrong_rule for spec in KINDS.values()]},
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
        "validation_early_agreement": {"type": "integer", "minimum": 1, "maximum": 20},
        "validation_max_votes": {"type": "integer", "minimum": 1, "maximum": 50},
        "gold_rate": {"type": "number", "minimum": 0, "maximum": 1},
        "gold_accuracy_threshold": {"type": "number", "minimum": 0, "maximum": 1},
        "gold_min_answers": {"type": "integer", "minimum": 1, "maximum": 1000},
        "validate_non_fooling": {"type": "boolean"},
        "daily_example_cap": {"type": "integer", "minimum": 0},
        "min_scoring_items": {"type": "integer", "minimum": 1, "maximum": 100000},
        "context_strategy": {"enum": ["least_used", "uniform", "least_fooled"]},
        "explanation_fields": {"type": "array", "items": {"type": "string"}},
        "split_ratios": {
            "type": "object",
            "additionalProperties": False,
            "required": ["train", "dev", "test"],
            "properties": {s: {"type": "number", "minimum": 0, "maximum": 1} for s in ["train", "dev", "test"]},
        },
        "split_seed": {"type": "integer"},
        "license": {"type": "string", "maxLength": 500, "description": "The data's licence (a URL or SPDX id), read by tasks/data/croissant.py."},
    },
}



def config_schema(kind: str) -> dict:
    """Return the JSON Schema of a config of ``kind``: the common keys plus the kind's own (its spec's
    ``config_properties``). An unknown kind gets the common keys only."""
    spec = KINDS.get(kind)
    extra = spec.config_properties if spec is not None else {}
    return {**TASK_CONFIG_SCHEMA, "properties": {**TASK_CONFIG_SCHEMA["properties"], **extra}}


@lru_cache(maxsize=None)
def _validator(kind: str) -> Draft202012Validator:
    return Draft202012Validator(config_schema(kind))


def _path(error) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "(top level)"


def validate_task_config(config, *, kind: str) -> list[str]:
    """Return a list of messages, each naming the config field at fault; empty when valid.

    Checks the JSON Schema above (with the kind's own keys, ``config_schema``), then the rules
    between fields: ``model_inputs`` must name known fields, ``split_ratios`` must sum to 1, and
    the kind's rules (its spec's ``config_errors``: classification needs ``labels``; QA must use
    ``squad_f1`` and the ``squad_f1_below`` rule).
    """
    if not isinstance(config, dict):
        return ["config: must be a JSON object"]
    errors = [f"config.{_path(e)}: {e.message}" for e in sorted(_validator(kind).iter_errors(config), key=str)]
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
    spec = KINDS.get(kind)
    if spec is None:
        errors.append(f"kind: unknown task kind '{kind}'")
    else:
        errors.extend(spec.config_errors(config))
    needed = config.get("validations_needed", 3)
    if config.get("validation_max_votes") is not None and config["validation_max_votes"] < needed:
        errors.append(f"config.validation_max_votes: must be at least validations_needed ({needed})")
    if config.get("validation_early_agreement") is not None and config["validation_early_agreement"] > needed:
        errors.append(f"config.validation_early_agreement: must be at most validations_needed ({needed})")
    ratios = config.get("split_ratios")
    if ratios and abs(sum(ratios.values()) - 1.0) > 1e-6:
        errors.append(f"config.split_ratios: must sum to 1 (they sum to {sum(ratios.values()):g})")
    return errors
