"""The real DynaSent data imported as two closed rounds becomes release 1.0.0 (dev sets public,
test sets hidden); relabelling one example gives 1.1.0 whose changelog names its uid, and a third
round gives 2.0.0."""

import json

from django.core.files.storage import default_storage

from releases.build import build
from releases.models import Release
from releases.services import request_release
from tasks.models import Dataset, DatasetItem, Round


def _release(task, owner) -> Release:
    return build(request_release(task=task, acting_user=owner, queue=False).pk)


def test_two_closed_rounds_become_release_1_0_0(dynasent_task, owner):
    release = _release(dynasent_task, owner)

    assert release.status == "published", release.failure_reason
    assert release.version == "1.0.0" and release.progress == 1.0
    assert release.example_count == 3600 + 720
    assert len(release.sha256) == 64
    names = {f["name"] for f in release.manifest["files"]}
    assert {"data/round1-dev.jsonl", "data/round1-dev.parquet", "data/round2-dev.jsonl", "data/round2-dev.parquet",
            "README.md", "croissant.json", "CITATION.cff", "CITATION.bib"} == names
    assert {f["name"] for f in release.hidden_manifest["files"]} == {"data/round1-test.jsonl", "data/round2-test.jsonl"}
    assert release.changelog["previous"] is None and release.changelog["added"]["count"] == 4320
    with default_storage.open(release.storage_prefix + "data/round2-dev.jsonl") as handle:
        first = json.loads(handle.readline())
    assert set(first) == {"uid", "round", "split", "tag", "text", "label"} and first["round"] == 2


def test_a_relabel_gives_1_1_0_naming_the_uid(dynasent_task, owner):
    first = _release(dynasent_task, owner)
    item = DatasetItem.objects.get(dataset__task=dynasent_task, uid="r2-0018536")
    assert item.target == {"label": "neutral"}
    item.target = {"label": "positive"}
    item.save()

    second = _release(dynasent_task, owner)

    assert second.status == "published", second.failure_reason
    assert second.version == "1.1.0"
    assert second.changelog["previous"] == "1.0.0"
    assert second.changelog["relabelled"] == {"count": 1, "uids": ["r2-0018536"]}
    assert second.changelog["added"]["count"] == second.changelog["removed"]["count"] == 0
    assert second.sha256 != first.sha256
    with default_storage.open(second.storage_prefix + "README.md") as handle:
        assert "r2-0018536" in handle.read().decode()


def test_nothing_changed_is_refused_and_the_failed_build_stores_nothing(dynasent_task, owner):
    _release(dynasent_task, owner)

    again = _release(dynasent_task, owner)

    assert again.status == "failed" and "Nothing changed since 1.0.0" in again.failure_reason
    assert again.version == ""
    _, stored = default_storage.listdir(again.storage_prefix + "data") if default_storage.exists(again.storage_prefix + "data") else ([], [])
    assert stored == []


def test_a_third_closed_round_gives_2_0_0(dynasent_task, owner):
    _release(dynasent_task, owner)
    round_three = Round.objects.create(task=dynasent_task, number=3, status=Round.Status.CLOSED)
    dataset = Dataset.objects.create(task=dynasent_task, round=round_three, name="r3-dev", split="dev", access="standard",
                                     label_visibility="public")
    DatasetItem.objects.create(dataset=dataset, uid="r3-1", input={"text": "Lovely."}, target={"label": "positive"})

    third = _release(dynasent_task, owner)

    assert third.version == "2.0.0" and third.changelog["new_rounds"] == [3]
    assert third.changelog["added"] == {"count": 1, "uids": ["r3-1"]}
