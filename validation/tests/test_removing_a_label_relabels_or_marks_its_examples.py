"""Removing a label keeps the meaning of the examples that carry it: the owner relabels them
(``old=new``, which also becomes an alias) or marks them (``old=``, kept out of every dataset);
without a decision the removal is refused, naming the label."""

import pytest

from dynabench.errors import FieldErrors
from tasks.models import Task
from tasks.services import update_task_settings
from validation.selectors import validated_queryset
from validation.tests.conftest import make_example


def _remove_neutral(task, owner, **kwargs):
    return update_task_settings(task=task, acting_user=owner, version=Task.objects.get(pk=task.pk).version,
                                labels=["positive", "negative"], **kwargs)


def test_without_a_decision_the_removal_is_refused(owner, annotator, sentiment_task):
    make_example(sentiment_task, annotator, label="neutral")

    with pytest.raises(FieldErrors) as refused:
        _remove_neutral(sentiment_task, owner)

    assert "Examples carry 'neutral'" in refused.value.errors["labels"][0]
    assert "neutral" in Task.objects.get(pk=sentiment_task.pk).labels


def test_relabelling_keeps_the_old_label_in_the_metadata_and_as_an_alias(owner, annotator, sentiment_task):
    example = make_example(sentiment_task, annotator, label="neutral")

    task = _remove_neutral(sentiment_task, owner, removed_labels={"neutral": "negative"})

    example.refresh_from_db()
    assert example.target == {"label": "negative"} and example.metadata["label_before_removal"] == "neutral"
    assert task.config["label_aliases"]["neutral"] == "negative"


def test_marked_examples_leave_the_validated_set(owner, annotator, sentiment_task):
    marked = make_example(sentiment_task, annotator, label="neutral", validation_state="verified_correct")
    kept = make_example(sentiment_task, annotator, label="positive", validation_state="verified_correct")

    _remove_neutral(sentiment_task, owner, removed_labels={"neutral": ""})

    marked.refresh_from_db()
    assert marked.metadata["removed_label"] == "neutral" and marked.target == {"label": "neutral"}
    assert list(validated_queryset(task=sentiment_task)) == [kept]
