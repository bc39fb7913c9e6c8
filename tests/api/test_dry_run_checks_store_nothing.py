"""``POST /api/v1/models/predictions/check`` and ``POST /api/v1/models/check``: a submission's own checks,
answered as a submission would answer them, with nothing stored (no model, no file, no job) and
no allowance spent."""

import io
import json
import tarfile
from pathlib import Path

import django_rq
import pytest

from tasks.models import MLModel
from tests.api.conftest import client_for, tar_gz
from tests.upload_support import unpack_now


def _jsonl(rows) -> io.BytesIO:
    upload = io.BytesIO("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows).encode())
    upload.name = "predictions.jsonl"
    return upload


def _stored_files(settings) -> list[Path]:
    return [p for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file()]


def _queued_jobs() -> int:
    return sum(django_rq.get_queue(name).count for name in ("default", "evaluation"))


def test_a_bad_predictions_file_gets_the_submissions_line_numbered_problems_and_nothing_is_stored(researcher, sentiment_datasets, settings):
    rows = [{"uid": f"sent-r1-dev-{i}", "label": "positive"} for i in range(3)]
    rows += ["{not json", {"uid": "sent-r1-test-0", "label": "maybe"}, {"uid": "nobody", "label": "positive"}]
    client = client_for(researcher)
    jobs_before = _queued_jobs()

    checked = client.post("/api/v1/models/predictions/check", {"task": "sentiment", "predictions": _jsonl(rows)}, format="multipart")
    submitted = client.post("/api/v1/models/predictions", {"task": "sentiment", "name": "real", "predictions": _jsonl(rows)}, format="multipart")

    assert checked.status_code == submitted.status_code == 400
    assert checked.json() == submitted.json()
    assert "line 4" in checked.json()["detail"] and "line 5" in checked.json()["detail"] and "line 6" in checked.json()["detail"]
    assert MLModel.objects.filter(owner=researcher).count() == 0
    assert _stored_files(settings) == []
    assert _queued_jobs() == jobs_before


def test_a_good_predictions_file_is_counted_per_dataset_and_spends_no_allowance(researcher, sentiment_datasets, settings):
    rows = [{"uid": f"{name}-{i}", "label": "neutral"} for name in ("sent-r1-dev", "sent-r1-test") for i in range(3)]
    client = client_for(researcher)
    before = client.get("/api/v1/models/allowance").json()["used"]

    answer = client.post("/api/v1/models/predictions/check", {"task": "sentiment", "predictions": _jsonl(rows)}, format="multipart")

    assert answer.status_code == 200
    assert answer.json() == {"ok": True, "predictions": 6, "datasets": {"sent-r1-dev": 3, "sent-r1-test": 3}}
    assert client.get("/api/v1/models/allowance").json()["used"] == before
    assert MLModel.objects.count() == 0 and _stored_files(settings) == []


def test_a_dry_run_refuses_whom_a_submission_refuses(annotator, sentiment_datasets):
    rows = [{"uid": f"sent-r1-dev-{i}", "label": "neutral"} for i in range(3)]

    anonymous = client_for(None).post("/api/v1/models/predictions/check", {"task": "sentiment", "predictions": _jsonl(rows)}, format="multipart")
    not_researcher = client_for(annotator).post("/api/v1/models/predictions/check", {"task": "sentiment", "predictions": _jsonl(rows)}, format="multipart")

    assert anonymous.status_code == 401
    assert not_researcher.status_code == 403 and not_researcher.json()["code"] == "not_researcher"


def test_a_model_archive_with_its_weights_left_home_passes_the_cheap_checks(researcher, sentiment_datasets, tiny_classifier_dir, settings):
    directory = Path(tiny_classifier_dir)
    buffer = io.BytesIO()
    sizes = {}
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for file in sorted(p for p in directory.rglob("*") if p.is_file()):
            name = str(file.relative_to(directory))
            if name.endswith(".safetensors"):
                sizes[name] = file.stat().st_size
                archive.addfile(tarfile.TarInfo(name))  # an empty entry: the size travels in weights_sizes
            else:
                archive.add(file, arcname=name)
    buffer.seek(0)
    buffer.name = "model.tar.gz"
    client = client_for(researcher)

    answer = client.post("/api/v1/models/check", {"task": "sentiment", "archive": buffer, "weights_sizes": json.dumps(sizes)}, format="multipart")

    assert answer.status_code == 200, answer.json()
    assert "model.safetensors" in answer.json()["files"]
    assert answer.json()["kept_bytes"] >= sum(sizes.values())
    assert MLModel.objects.count() == 0 and _stored_files(settings) == []


def test_a_model_archive_with_a_pickle_gets_the_submissions_refusal(researcher, sentiment_datasets, tiny_classifier_dir, settings):
    def archive():
        buffer = tar_gz(tiny_classifier_dir)
        data = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="r:gz") as source, tarfile.open(fileobj=data, mode="w:gz") as out:
            for member in source.getmembers():
                out.addfile(member, source.extractfile(member))
            extra = tarfile.TarInfo("pytorch_model.bin")
            extra.size = 4
            out.addfile(extra, io.BytesIO(b"PK\x03\x04"))
        data.seek(0)
        data.name = "model.tar.gz"
        return data

    client = client_for(researcher)
    checked = client.post("/api/v1/models/check", {"task": "sentiment", "archive": archive()}, format="multipart")
    assert checked.status_code == 400 and checked.json()["code"] == "pickle_weights"
    assert MLModel.objects.count() == 0 and _stored_files(settings) == []

    # The real submission takes a tar.gz at once (202) and its unpacking job refuses it for the same reason.
    submitted = client.post("/api/v1/models", {"task": "sentiment", "name": "real", "archive": archive()}, format="multipart")
    assert submitted.status_code == 202
    model = unpack_now(MLModel.objects.get(pk=submitted.json()["id"]))
    assert model.status == "failed" and model.failure_reason == checked.json()["detail"]
