"""Every registered task kind implements the whole spec and fits the rest of the platform."""

import inspect

import pytest

from tasks.kinds.config import PERF_METRICS, TASK_CONFIG_SCHEMA, config_schema
from tasks.kinds import KINDS, TaskKindSpec, get_spec
from tasks.models import Task, TaskKind

ATTRIBUTES = ["name", "display_name", "target_field", "prediction_field", "score_key", "correction_field",
              "architecture_suffix", "predictor_class", "model_wrong_rule", "perf_metrics"]
METHODS = [name for name, member in vars(TaskKindSpec).items()
           if inspect.isfunction(member) and "raise NotImplementedError" in inspect.getsource(member)]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_sets_its_attributes_and_implements_every_method(kind):
    spec = get_spec(kind)
    assert spec.name == kind
    for attribute in ATTRIBUTES:
        assert getattr(spec, attribute), f"{type(spec).__name__}.{attribute} is not set"
    missing = [name for name in METHODS if getattr(type(spec), name) is getattr(TaskKindSpec, name)]
    assert missing == [], f"{type(spec).__name__} does not implement {missing}"
    assert set(spec.perf_metrics) <= set(PERF_METRICS)


def test_the_base_class_leaves_the_kind_specific_methods_to_the_kinds():
    assert {"clean_target", "model_wrong", "score", "config_errors", "head_class"} <= set(METHODS)


def test_task_kind_choices_and_task_spec_come_from_the_registry():
    assert TaskKind.values == list(KINDS)
    assert Task(kind="extractive_qa").spec is KINDS["extractive_qa"]
    with pytest.raises(KeyError, match="unknown task kind 'speech'"):
        get_spec("speech")


def test_a_kind_adds_only_its_own_config_keys_to_the_schema():
    assert "labels" in config_schema("classification")["properties"]
    assert "labels" not in config_schema("extractive_qa")["properties"]
    assert "labels" not in TASK_CONFIG_SCHEMA["properties"]
