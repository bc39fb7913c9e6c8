"""Issue 19, finding 6: an upload was extracted inside the web request, which spent its time writing
gigabytes of weights. Now the request checks the archive without its weights (members, config,
labels, tokenizer, the quota), stores it and answers; a job unpacks the files the model uses. The
quota counts the archives still waiting to be unpacked, and is checked under a lock on the user's
row, so two concurrent uploads cannot both pass it.

On the old code the request wrote the weights (the first test found the model folder right after
the request and the damaged weights refused at once), and nothing counted a pending archive."""

import io
import threading
import time
import zipfile

import pytest
from django.db import connection, connections, transaction

from dynabench.errors import RuleError
from leaderboard.services import storage_used_bytes, submit_model_archive
from leaderboard.tests.conftest import zip_directory
from tasks.loop import artefacts
from tasks.models import MLModel
from tests.api.conftest import client_for, sentiment_datasets  # noqa: F401  (two scoring datasets of sentiment)
from tests.upload_support import unpack_now

MiB = 1024 * 1024


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir()
    return settings.MEDIA_ROOT


def with_bad_crc(data: bytes, name: str) -> bytes:
    """The zip ``data`` with the recorded CRC-32 of member ``name`` changed (its bytes stay intact)."""
    data = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        info = archive.getinfo(name)
    wrong = ((info.CRC ^ 0xFFFFFFFF) & 0xFFFFFFFF).to_bytes(4, "little")
    data[info.header_offset + 14 : info.header_offset + 18] = wrong  # in the local file header
    encoded = name.encode()
    central = bytes(data).index(b"PK\x01\x02")
    while central >= 0:  # and in the member's central directory entry
        if data[central + 46 : central + 46 + len(encoded)] == encoded:
            data[central + 16 : central + 20] = wrong
        central = bytes(data).find(b"PK\x01\x02", central + 4)
    return bytes(data)


def model_bytes(directory) -> int:
    return sum(f.stat().st_size for f in directory.rglob("*") if f.is_file())


def test_the_request_writes_no_model_files_and_the_job_writes_only_the_kept_ones(researcher, sentiment_datasets, sentiment_task,
                                                                                tiny_classifier_dir, media_root):
    archive = zip_directory(tiny_classifier_dir, extra={"model/logs/events.jsonl": bytes(8 * MiB)})

    model = submit_model_archive(user=researcher, task=sentiment_task, upload=archive, name="in-a-job")

    assert (model.status, model.path) == ("unpacking", "")
    assert list((media_root / "models").iterdir()) == []  # no weights, no staging: only the stored archive
    assert [p.relative_to(media_root).parts[0] for p in media_root.rglob("*") if p.is_file()] == ["uploads"]

    model = unpack_now(model)

    assert model.status == "queued", model.failure_reason
    assert sorted(p.name for p in (media_root / "models" / str(model.pk)).iterdir()) == sorted(p.name for p in tiny_classifier_dir.iterdir())
    assert not list(media_root.rglob("events.jsonl"))  # the unused file is never written
    assert not artefacts.storage().listdir("uploads")[1]


def test_damaged_weights_pass_the_request_and_fail_the_model_in_the_job_leaving_nothing(researcher, sentiment_task, tiny_classifier_dir, media_root):
    archive = with_bad_crc(zip_directory(tiny_classifier_dir), "model/model.safetensors")

    model = submit_model_archive(user=researcher, task=sentiment_task, upload=archive, name="damaged")
    assert model.status == "unpacking"  # the request never read the weights
    model = unpack_now(model)

    assert model.status == "failed"
    assert "'model/model.safetensors' is damaged" in model.failure_reason and "Bad CRC-32" in model.failure_reason
    assert (model.path, model.checksum, model.archive) == ("", "", "")
    assert list((media_root / "models").iterdir()) == []
    assert not artefacts.storage().listdir("uploads")[1] and not artefacts.storage().exists("artefacts")
    assert storage_used_bytes(researcher) == 0


def test_the_quota_counts_archives_still_waiting_to_be_unpacked(researcher, sentiment_task, tiny_classifier_dir, settings):
    settings.MODEL_STORAGE_QUOTA_BYTES = int(model_bytes(tiny_classifier_dir) * 1.5)
    archive = zip_directory(tiny_classifier_dir)
    first = submit_model_archive(user=researcher, task=sentiment_task, upload=archive, name="first")
    assert storage_used_bytes(researcher) == model_bytes(tiny_classifier_dir)  # before any file is unpacked

    with pytest.raises(RuleError) as refused:
        submit_model_archive(user=researcher, task=sentiment_task, upload=archive, name="second")

    assert refused.value.code == "storage_quota" and refused.value.status_code == 413
    assert "or are unpacking" in refused.value.message
    unpack_now(first)
    assert storage_used_bytes(researcher) == model_bytes(tiny_classifier_dir)  # counted once, now as files
    assert list(MLModel.objects.values_list("name", flat=True)) == ["first"]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a row lock; SQLite lets one writing transaction run at a time")
@pytest.mark.django_db(transaction=True)
def test_a_concurrent_second_upload_over_the_quota_waits_for_the_first_and_is_refused_413(
    researcher, sentiment_task, tiny_classifier_dir, settings, media_root,
):
    settings.MODEL_STORAGE_QUOTA_BYTES = int(model_bytes(tiny_classifier_dir) * 1.5)
    archive = zip_directory(tiny_classifier_dir)
    first_created, let_first_commit, answers = threading.Event(), threading.Event(), []

    def first_upload():  # holds its transaction open after creating its model, as a slow commit would
        try:
            with transaction.atomic():
                submit_model_archive(user=researcher, task=sentiment_task, upload=archive, name="first")
                first_created.set()
                let_first_commit.wait(300)
        finally:
            first_created.set()
            connections.close_all()

    def second_upload():
        try:
            upload = io.BytesIO(archive)
            upload.name = "model.zip"
            answers.append(client_for(researcher).post(
                "/api/v1/models", {"task": "sentiment", "name": "second", "archive": upload}, format="multipart"))
        finally:
            connections.close_all()

    first = threading.Thread(target=first_upload)
    first.start()
    assert first_created.wait(300)
    second = threading.Thread(target=second_upload)
    second.start()
    deadline = time.monotonic() + 300  # until the second waits; a ceiling that only catches a hang
    with connection.cursor() as cursor:  # until the second upload waits for the lock on the user's row
        while time.monotonic() < deadline and second.is_alive():
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
            if cursor.fetchone()[0]:
                break
            time.sleep(0.05)
    let_first_commit.set()
    first.join(300)
    second.join(300)

    assert answers and answers[0].status_code == 413, answers and answers[0].content[:300]
    assert answers[0].json()["code"] == "storage_quota"
    assert list(MLModel.objects.values_list("name", "status")) == [("first", "unpacking")]
    assert len(artefacts.storage().listdir("uploads")[1]) == 1  # the refused upload's archive is deleted
