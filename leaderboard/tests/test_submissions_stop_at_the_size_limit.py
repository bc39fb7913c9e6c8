"""Model archives and predictions files over their limits (``MODEL_ARCHIVE_MAX_BYTES``,
``PREDICTIONS_MAX_BYTES``) are refused while they arrive (``dynabench.upload_limits``): a 413
naming the limit with the body read no further than about the limit, on the submit page, the
models API and the predictions API; nothing is stored. Before, the whole body was received
and written to a temporary file first."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

from tasks.models import MLModel
from tests.upload_support import CountingPayload

LIMIT = 256 * 1024
READ_AHEAD = 4 * 64 * 1024  # Django's parser reads the body in 64 KiB chunks


@pytest.fixture(autouse=True)
def small_limits(settings, tmp_path):
    settings.MODEL_ARCHIVE_MAX_BYTES = settings.PREDICTIONS_MAX_BYTES = LIMIT
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "incoming")
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0
    (tmp_path / "incoming").mkdir()
    return tmp_path / "incoming"


@pytest.mark.parametrize("path, field", [
    ("/tasks/sentiment/submit/", "archive"),
    ("/api/v1/models", "archive"),
    ("/api/v1/models/predictions", "predictions"),
])
def test_a_submission_over_the_limit_is_refused_before_the_rest_of_it_is_read(client, researcher, sentiment_task, small_limits, path, field):
    client.force_login(researcher)
    big = SimpleUploadedFile("big.bin", b"\0" * (4 * LIMIT))
    body = encode_multipart(BOUNDARY, {"task": "sentiment", "name": "too-big", field: big})
    payload = CountingPayload(body)

    response = client.generic("POST", path, body, content_type=MULTIPART_CONTENT, **{"wsgi.input": payload})

    assert response.status_code == 413
    assert f"the limit is {LIMIT:,} bytes (256 KiB)" in response.content.decode()
    assert payload.bytes_read < LIMIT + READ_AHEAD < len(body)
    assert not MLModel.objects.filter(name="too-big").exists()
    assert list(small_limits.iterdir()) == []
