"""The client streams a multipart upload from its file in chunks (``MultipartBody``): the body Django
parses is the file, and the progress callback climbs to the body's total."""

import io

from django.http.multipartparser import MultiPartParser
from django.core.files.uploadhandler import MemoryFileUploadHandler

from dynabench_client import MultipartBody


def test_the_streamed_body_parses_back_and_reports_progress(rf):
    payload = bytes(range(256)) * 1000
    seen = []
    body = MultipartBody({"task": "nli", "name": "r\u00e9sum\u00e9"}, {"predictions": ("p.jsonl", io.BytesIO(payload), "application/jsonl")},
                         progress=lambda done, total: seen.append((done, total)))

    chunks = []
    while chunk := body.read(8192):
        chunks.append(chunk)
    raw = b"".join(chunks)
    request = rf.post("/", data=raw, content_type=body.content_type)
    post, files = MultiPartParser(request.META, io.BytesIO(raw), [MemoryFileUploadHandler()], "utf-8").parse()

    assert len(raw) == len(body) == body.total
    assert post["task"] == "nli" and post["name"] == "r\u00e9sum\u00e9"
    assert files["predictions"].read() == payload
    assert seen[-1] == (body.total, body.total) and len(seen) == len(chunks)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
