"""Models through the API: submit an archive, follow its evaluation per dataset, publish, anonymise."""

import io
import tarfile

import pytest
from rest_framework.test import APIClient

from tasks.models import MLModel
from tests.api.conftest import client_for, run_worker, tar_gz
from tests.upload_support import unpack_now


def _submit(user, directory, **extra):
    body = {"task": "sentiment", "name": "tiny-bert", "description": "A tiny model.", "archive": tar_gz(directory), **extra}
    return client_for(user).post("/api/v1/models", body, format="multipart")


@pytest.mark.django_db(transaction=True)
def test_a_submitted_archive_is_accepted_unpacked_then_evaluated_on_every_dataset(researcher, sentiment_datasets, tiny_classifier_dir):
    response = _submit(researcher, tiny_classifier_dir)

    assert response.status_code == 202, response.json()
    model_id = response.json()["id"]
    assert response.json()["status"] == "unpacking"
    run_worker()  # the unpacking job, then the evaluation jobs it queues
    detail = client_for(researcher).get(f"/api/v1/models/{model_id}").json()
    assert detail["status"] == "evaluated"
    # the hidden test set is evaluated and counts, like the public dev set
    assert {e["dataset"]: e["status"] for e in detail["evaluations"]} == {"sent-r1-dev": "done", "sent-r1-test": "done"}
    assert all(0 <= e["performance"] <= 1 for e in detail["evaluations"])
    assert [r["round"] for r in detail["rounds"]] == [1]
    mean = sum(e["performance"] for e in detail["evaluations"]) / 2
    assert detail["rounds"][0]["performance"] == pytest.approx(mean)
    assert detail["rank"] == 1 and detail["dynascore"] is not None


def test_a_tar_with_pickle_weights_fails_in_the_job_and_keeps_nothing(researcher, sentiment_datasets, tiny_classifier_dir):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name in ("config.json", "pytorch_model.bin"):
            data = (tiny_classifier_dir / "config.json").read_bytes() if name == "config.json" else b"\x80\x04pickle"
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    buffer.name = "bad.tar.gz"

    response = client_for(researcher).post("/api/v1/models", {"task": "sentiment", "name": "bad", "archive": buffer}, format="multipart")

    assert response.status_code == 202  # a tar's members are read (decompressed) by the job, not the request
    model = unpack_now(MLModel.objects.get(pk=response.json()["id"]))
    assert model.status == "failed" and "Pickle-based files are never loaded" in model.failure_reason
    detail = client_for(researcher).get(f"/api/v1/models/{model.pk}").json()
    assert (detail["status"], detail["failure_reason"]) == ("failed", model.failure_reason)
    assert (model.path, model.archive) == ("", "")


def test_it_refuses_a_json_body(researcher, sentiment_datasets):
    response = client_for(researcher).post("/api/v1/models", {"task": "sentiment", "name": "x"}, format="json")

    assert response.status_code == 415
    assert not MLModel.objects.exists()


def test_the_owner_unpublishes_and_anonymises_a_model(researcher, validator, sentiment_datasets, tiny_classifier_dir):
    model_id = _submit(researcher, tiny_classifier_dir).json()["id"]

    assert client_for(researcher).post(f"/api/v1/models/{model_id}/anonymise", {"anonymous": True}, format="json").status_code == 200
    assert APIClient().get(f"/api/v1/models/{model_id}").json()["owner"] is None
    assert client_for(researcher).post(f"/api/v1/models/{model_id}/publish", {"published": False}, format="json").status_code == 200

    model = MLModel.objects.get(pk=model_id)
    assert (model.published, model.anonymous) == (False, True)
    assert APIClient().get(f"/api/v1/models/{model_id}").status_code == 404
    assert client_for(validator).get(f"/api/v1/models/{model_id}").status_code == 404


def test_another_user_may_not_publish_my_model(researcher, validator, sentiment_datasets, tiny_classifier_dir):
    model_id = _submit(researcher, tiny_classifier_dir, published=False).json()["id"]
    MLModel.objects.filter(pk=model_id).update(published=True)

    response = client_for(validator).post(f"/api/v1/models/{model_id}/publish", {"published": False}, format="json")

    assert response.status_code == 403
    assert response.json()["code"] == "not_owner"
    assert MLModel.objects.get(pk=model_id).published is True
