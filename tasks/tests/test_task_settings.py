"""An owner changes a task's settings: checked against the kind's schema with field errors, and
a save made from a form loaded before another owner's save is refused (optimistic concurrency)."""

import pytest

from dynabench.errors import FieldErrors, NotAllowed, RuleError
from tasks.models import Task
from tasks.services import task_settings, update_task_settings


def test_an_owner_changes_instructions_labels_and_caps(owner, sentiment_task):
    version = sentiment_task.version

    task = update_task_settings(
        task=sentiment_task, acting_user=owner, version=version, instructions="Write **one** sentence.",
        labels=["positive", "negative"], validations_needed=2, daily_example_cap=50, content_warning="Mild language.",
    )

    stored = Task.objects.get(pk=task.pk)
    assert stored.instructions == "Write **one** sentence." and stored.content_warning == "Mild language."
    assert stored.labels == ["positive", "negative"] and stored.validations_needed == 2
    assert stored.config["daily_example_cap"] == 50 and stored.version == version + 1
    assert set(stored.config["label_descriptions"]) == {"positive", "negative"}
    assert task_settings(stored)["version"] == version + 1


def test_field_errors_name_each_field_and_write_nothing(owner, sentiment_task):
    before = Task.objects.get(pk=sentiment_task.pk)

    with pytest.raises(FieldErrors) as refused:
        update_task_settings(
            task=sentiment_task, acting_user=owner, version=before.version, name=" ",
            labels=["positive", "positive"], validations_needed=0,
        )

    assert set(refused.value.errors) == {"name", "labels", "validations_needed"}
    with pytest.raises(FieldErrors) as refused:
        update_task_settings(task=sentiment_task, acting_user=owner, version=before.version, validations_needed=0, daily_example_cap=-1)
    assert set(refused.value.errors) == {"validations_needed", "daily_example_cap"}
    assert "minimum" in refused.value.errors["validations_needed"][0]
    after = Task.objects.get(pk=sentiment_task.pk)
    assert (after.name, after.config, after.version) == (before.name, before.config, before.version)


def test_a_qa_task_takes_no_labels(owner, qa_task):
    with pytest.raises(FieldErrors) as refused:
        update_task_settings(task=qa_task, acting_user=owner, version=qa_task.version, labels=["yes"])
    assert list(refused.value.errors) == ["labels"]


def test_the_later_of_two_saves_from_the_same_version_is_refused(owner, admin_user, sentiment_task):
    loaded = sentiment_task.version
    update_task_settings(task=sentiment_task, acting_user=admin_user, version=loaded, instructions="The admin's text.")

    with pytest.raises(RuleError) as refused:
        update_task_settings(task=sentiment_task, acting_user=owner, version=loaded, instructions="The owner's text.")

    assert refused.value.code == "stale_settings" and refused.value.status_code == 409
    assert "Reload the page" in refused.value.message
    assert Task.objects.get(pk=sentiment_task.pk).instructions == "The admin's text."


def test_only_owners_change_settings(annotator, sentiment_task):
    with pytest.raises(NotAllowed):
        update_task_settings(task=sentiment_task, acting_user=annotator, version=sentiment_task.version, name="Mine")
