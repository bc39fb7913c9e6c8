"""Finding 8 (leaderboard): malformed uploads answered with a 500. An archive holding the same path twice,
a file with entries under it, or a member whose CRC does not match, and a predictions file with a line
nested deeper than Python's parser recurses, each raised an uncaught exception in the upload path
(FileExistsError, NotADirectoryError, BadZipFile, RecursionError). Now each is a 400 naming the problem,
and nothing is stored.

On the old code all four API tests answered 500. A damaged member is found only by decompressing it,
which the request no longer does (issue 28): the upload is taken (202) and the unpacking job fails the
model with the reason."""

import io
import zipfile

import pytest

from leaderboard.tests.conftest import zip_directory
from tasks.models import MLModel
from tests.api.conftest import client_for, sentiment_datasets  # noqa: F401  (two scoring datasets of sentiment)
from tests.upload_support import unpack_now

pytestmark = pytest.mark.django_db(transaction=True)


def _upload_archive(user, data: bytes):
    upload = io.BytesIO(data)
    upload.name = "model.zip"
    return client_for(user).post("/api/v1/models", {"task": "sentiment", "name": "malformed", "archive": upload}, format="multipart")


def _with_extra(model_dir, entries) -> bytes:
    buffer = io.BytesIO(zip_directory(model_dir))
    with zipfile.ZipFile(buffer, "a") as archive:
        for name, data in entries:
            archive.writestr(name, data)
    return buffer.getvalue()


def _bad_crc(model_dir) -> bytes:
    """The tiny model's zip with the recorded CRC-32 of config.json changed (its bytes stay intact)."""
    data = bytearray(zip_directory(model_dir))
    name = b"model/config.json"
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        info = archive.getinfo(name.decode())
    wrong = ((info.CRC ^ 0xFFFFFFFF) & 0xFFFFFFFF).to_bytes(4, "little")
    data[info.header_offset + 14 : info.header_offset + 18] = wrong  # CRC-32 in the local file header
    central = bytes(data).index(b"PK\x01\x02")
    while central >= 0:  # and in that file's central directory entry
        if data[central + 46 : central + 46 + len(name)] == name:
            data[central + 16 : central + 20] = wrong
        central = bytes(data).find(b"PK\x01\x02", central + 4)
    return bytes(data)


@pytest.mark.parametrize(
    "case, build, phrase",
    [
        ("duplicate member", lambda d: _with_extra(d, [("model/config.json", "{}")]), "same path more than once"),
        ("file under a file", lambda d: _with_extra(d, [("model/config.json/tokenizer.json", "{}")]), "both a file and a folder"),
    ],
)
def test_a_malformed_archive_is_a_400_naming_the_problem(case, build, phrase, researcher, sentiment_datasets, tiny_classifier_dir):
    response = _upload_archive(researcher, build(tiny_classifier_dir))

    assert response.status_code == 400, (case, response.status_code, response.content[:300])
    assert phrase in response.json()["detail"]
    assert not MLModel.objects.exists()


def test_a_member_with_a_bad_crc_fails_the_model_in_the_job_naming_the_problem(researcher, sentiment_datasets, tiny_classifier_dir):
    response = _upload_archive(researcher, _bad_crc(tiny_classifier_dir))
    assert response.status_code == 202, response.content[:300]

    model = unpack_now(MLModel.objects.get(pk=response.json()["id"]))

    assert model.status == "failed"
    assert "'model/config.json' is damaged" in model.failure_reason
    assert client_for(researcher).get(f"/api/v1/models/{model.pk}").json()["failure_reason"] == model.failure_reason


def test_a_deeply_nested_predictions_line_is_a_400_naming_the_line(researcher, sentiment_datasets):
    upload = io.BytesIO(b'{"uid": "a", "label": "positive"}\n' + b'{"uid": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n")
    upload.name = "predictions.jsonl"

    response = client_for(researcher).post(
        "/api/v1/models/predictions", {"task": "sentiment", "name": "nested", "predictions": upload}, format="multipart"
    )

    assert response.status_code == 400, response.content[:300]
    assert "line 2" in response.json()["detail"] and "levels deep" in response.json()["detail"]
    assert not MLModel.objects.exists()
