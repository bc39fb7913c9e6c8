"""``manage.py seed`` gives every default task a public dev set and a hidden test set held out of its
seed data, and no default model is trained on any of their items."""

import json
from pathlib import Path

from django.core.management import call_command

from tasks.models import Dataset, MLModel
from tasks.data.seed import DEFAULT_TASK_CODES
from tasks.data.seed_split import SEED_DATA_DIR
from tasks.loop.training.default_models import DEFAULT_MODELS


def _rows(code):
    with open(SEED_DATA_DIR / f"{code}.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_each_task_gets_a_dev_and_a_test_set_of_its_held_out_seed_rows(db):
    call_command("seed")

    for code in DEFAULT_TASK_CODES:
        rows = _rows(code)
        for split in ("dev", "test"):
            dataset = Dataset.objects.get(task__code=code, name=f"{code}-seed-{split}")
            assert (dataset.split, dataset.access, dataset.weight, dataset.round) == (split, Dataset.Access.SCORING, 1.0, None)
            held_out = {row["uid"]: row for row in rows if row["split"] == split}
            items = {item.uid: item for item in dataset.items.all()}
            assert set(items) == set(held_out)
            for uid, item in items.items():
                target = {"answers": held_out[uid]["answers"]} if code == "qa" else {"label": held_out[uid]["label"]}
                assert item.target == target and item.tag == held_out[uid]["tag"]
    assert Dataset.objects.count() == 8


def test_seeding_again_changes_nothing(db):
    call_command("seed")
    before = list(Dataset.objects.order_by("pk").values_list("pk", "name", "checksum"))
    items = sorted(Dataset.objects.values_list("items__pk", flat=True))

    call_command("seed")

    assert list(Dataset.objects.order_by("pk").values_list("pk", "name", "checksum")) == before
    assert sorted(Dataset.objects.values_list("items__pk", flat=True)) == items


def test_no_default_model_trained_on_a_dev_or_test_item(db, tiny_encoder, models_dir):
    call_command("seed")
    call_command("ensure_default_models", "--inline", "--epochs", "1")

    for code in DEFAULT_TASK_CODES:
        items = [item for d in Dataset.objects.filter(task__code=code) for item in d.items.all()]
        held_out_uids = {item.uid for item in items}
        held_out_inputs = {json.dumps(item.input, sort_keys=True) for item in items}
        rows = {row["uid"]: row for row in _rows(code)}
        for entry in DEFAULT_MODELS:
            model = MLModel.objects.get(task__code=code, name=entry.name)
            trained_on = [json.loads(line)["uid"] for line in (Path(model.path) / "training_examples.jsonl").read_text().splitlines()]
            assert trained_on and set(trained_on).isdisjoint(held_out_uids), (code, entry.name)
            assert model.training_info["examples"] == len(trained_on)
            # Nor the same text under another uid.
            fields = list(items[0].input)
            trained_inputs = {json.dumps({f: rows[uid][f] for f in fields}, sort_keys=True) for uid in trained_on}
            assert trained_inputs.isdisjoint(held_out_inputs), (code, entry.name)


def test_seeding_keeps_an_owner_s_task_whose_labels_no_longer_fit_the_seed_rows(db):
    from tasks.models import Task

    call_command("seed", "--demo", stdout=open("/dev/null", "w"))
    Dataset.objects.filter(task__code="sentiment").delete()
    task = Task.objects.get(code="sentiment")
    task.config = {**task.config, "labels": ["positive", "negative"]}
    task.save()

    call_command("seed")

    assert not Dataset.objects.filter(task__code="sentiment").exists()
    assert Dataset.objects.filter(task__code="nli").count() == 2


def test_the_dev_labels_are_public_and_the_test_labels_stay_on_the_server(db, researcher):
    from rest_framework.test import APIClient

    from tasks.selectors import can_see_labels

    call_command("seed")
    client = APIClient()
    client.force_authenticate(researcher)
    for code in DEFAULT_TASK_CODES:
        dev = Dataset.objects.get(task__code=code, name=f"{code}-seed-dev")
        test = Dataset.objects.get(task__code=code, name=f"{code}-seed-test")
        assert (dev.label_visibility, test.label_visibility) == ("public", "hidden")
        assert can_see_labels(researcher, dev) and not can_see_labels(researcher, test)

        dev_items = client.get(f"/api/v1/datasets/{dev.pk}/items", {"page_size": 500}).json()["results"]
        test_items = client.get(f"/api/v1/datasets/{test.pk}/items", {"page_size": 500}).json()["results"]

        assert len(dev_items) == dev.items.count() and all(item["target"] for item in dev_items)
        assert len(test_items) == test.items.count()
        assert all(item.get("target") is None for item in test_items)
