"""A model whose labels do not match the task's is refused with a message listing both label sets."""

import pytest

from dynabench.errors import RuleError
from tasks.loop.model_checks import check_model_directory
from tasks.loop.registry import cache_info, get_predictor
from tests.tiny_models import build_tiny_classifier


@pytest.mark.parametrize(
    "model_labels",
    [
        ["entailment", "neutral", "contradiction"],  # another task's labels
        ["LABEL_0", "LABEL_1", "LABEL_2"],  # generic names
        ["positive", "negative"],  # one label short
        ["positive", "positive", "neutral"],  # a label twice
    ],
)
def test_it_refuses_a_model_whose_labels_differ_from_the_task(tmp_path, register_model, sentiment_task, model_labels):
    model = register_model(build_tiny_classifier(tmp_path, model_labels), sentiment_task)

    with pytest.raises(RuleError) as refusal:
        get_predictor(model)

    assert refusal.value.code == "model_label_mismatch"
    assert str(model_labels) in refusal.value.message
    assert str(["positive", "negative", "neutral"]) in refusal.value.message
    assert cache_info()["loads"] == 0


def test_the_directory_check_refuses_mismatched_labels_without_loading(tmp_path, nli_task):
    path = build_tiny_classifier(tmp_path, ["positive", "negative", "neutral"])

    with pytest.raises(RuleError, match=r"do not match the task's labels \['entailment', 'neutral', 'contradiction'\]"):
        check_model_directory(path, task=nli_task)
