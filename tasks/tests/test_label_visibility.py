"""Every dataset has a label visibility: test splits and scoring sets hidden, train/dev public; only the
task's owners and admins see hidden labels (tasks.selectors.can_see_labels); owners can publish them."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from dynabench.errors import NotAllowed, RuleError
from tasks.models import Dataset, DatasetItem, default_label_visibility
from tasks.selectors import can_see_labels
from tasks.services import publish_labels

BEFORE = [("tasks", "0002_console")]


@pytest.mark.parametrize(("split", "access", "expected"), [
    ("test", "scoring", "hidden"), ("test", "standard", "hidden"), ("dev", "scoring", "hidden"),
    ("", "scoring", "hidden"), ("dev", "standard", "public"), ("train", "standard", "public"), ("", "standard", "public"),
])
def test_new_datasets_get_the_visibility_of_their_split_and_access(split, access, expected):
    assert default_label_visibility(split=split, access=access) == expected


def test_only_owners_and_admins_see_hidden_labels(sentiment_task, owner, admin_user, annotator, validator, researcher, outsider):
    hidden = Dataset.objects.create(task=sentiment_task, name="t", split="test")
    public = Dataset.objects.create(task=sentiment_task, name="d", split="train", access="standard", label_visibility="public")
    assert hidden.labels_hidden and not public.labels_hidden
    for user in (AnonymousUser(), None, annotator, validator, researcher, outsider):
        assert can_see_labels(user, hidden) is False
        assert can_see_labels(user, public) is True
    assert can_see_labels(owner, hidden) and can_see_labels(admin_user, hidden)


def test_an_owner_publishes_labels_and_it_is_recorded(sentiment_task, owner, researcher):
    dataset = Dataset.objects.create(task=sentiment_task, name="t", split="test")
    with pytest.raises(RuleError) as empty:
        publish_labels(dataset=dataset, acting_user=owner)
    assert empty.value.code == "no_labels_to_publish"
    DatasetItem.objects.create(dataset=dataset, uid="a", input={"text": "x"}, target={"label": "positive"})
    with pytest.raises(NotAllowed):
        publish_labels(dataset=dataset, acting_user=researcher)

    published = publish_labels(dataset=dataset, acting_user=owner)

    assert (published.label_visibility, published.labels_published_by, published.labels_published_at is not None) == ("public", owner, True)
    assert can_see_labels(researcher, published)
    with pytest.raises(RuleError) as twice:
        publish_labels(dataset=published, acting_user=owner)
    assert twice.value.code == "labels_already_public"


@pytest.mark.django_db(transaction=True)
def test_the_migration_hides_test_and_scoring_sets_and_records_provenance(sentiment_task):
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    old, old_item = apps.get_model("tasks", "Dataset"), apps.get_model("tasks", "DatasetItem")
    rows = {
        "hidden-set": dict(access="hidden", split=""), "test-standard": dict(access="standard", split="test"),
        "dev-scoring": dict(access="scoring", split="dev"), "train": dict(access="standard", split="train"),
    }
    for name, fields in rows.items():
        dataset = old.objects.create(task_id=sentiment_task.pk, name=name, checksum="f" * 64, source="/data/x.jsonl", **fields)
        old_item.objects.create(dataset=dataset, uid="u1", input={"text": "a"}, target={"label": "positive"})

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    got = {d.name: d for d in Dataset.objects.filter(task=sentiment_task)}
    assert {n: (d.access, d.label_visibility) for n, d in got.items()} == {
        "hidden-set": ("scoring", "hidden"), "test-standard": ("standard", "hidden"),
        "dev-scoring": ("scoring", "hidden"), "train": ("standard", "public"),
    }
    from tasks.services import dataset_content_checksum

    train = got["train"]
    assert (train.item_count, train.source_checksum, train.checksum) == (1, "f" * 64, dataset_content_checksum(train)[0])
