"""A broken task config is refused on save with a message naming the field, and nothing changes."""

import pytest
from django.core.exceptions import ValidationError

from tasks.models import Task


@pytest.mark.parametrize(
    "change, message",
    [
        ({"perf_metric": "perplexity"}, "config.perf_metric: 'perplexity' is not one of"),
        ({"perf_metric": "bleu"}, "config.perf_metric: a classification task uses one of accuracy, macro_f1"),
        ({"labels": ["only-one"]}, "config.labels: ['only-one'] is too short"),
        ({"model_inputs": ["premise", "claim"]}, "config.model_inputs: 'claim' is not a context or input field"),
        ({"label_aliases": {"e": "entails"}}, "config.label_aliases.e: 'entails' is not one of the labels"),
        ({"split_ratios": {"train": 0.8, "dev": 0.1, "test": 0.2}}, "config.split_ratios: must sum to 1"),
        ({"dynascore_weights": {"performance": 9}}, "config.dynascore_weights.performance: 9 is greater than the maximum of 5"),
        ({"colour": "blue"}, "config.(top level): Additional properties are not allowed ('colour' was unexpected)"),
    ],
)
def test_it_names_the_field_at_fault_and_keeps_the_stored_config(nli_task, change, message):
    nli_task.config = {**nli_task.config, **change}

    with pytest.raises(ValidationError) as caught:
        nli_task.save()

    assert any(m.startswith(message) for m in caught.value.message_dict["config"])
    assert Task.objects.get(pk=nli_task.pk).config["perf_metric"] == "accuracy"
    assert "colour" not in Task.objects.get(pk=nli_task.pk).config
