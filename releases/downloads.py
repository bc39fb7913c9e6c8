"""Serving a release's stored files: streamed in blocks, one byte range (``Range: bytes=a-b``,
``bytes=a-``, ``bytes=-n``) answered 206 so interrupted downloads resume, ``ETag`` the file's sha256."""

from __future__ import annotations

import re

from django.core.files.storage import default_storage
from django.http import HttpResponse, StreamingHttpResponse

BLOCK = 1 << 20
RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
TYPES = {"jsonl": "application/jsonlines", "parquet": "application/vnd.apache.parquet", "md": "text/markdown; charset=utf-8",
         "json": "application/ld+json", "cff": "text/yaml; charset=utf-8", "bib": "text/x-bibtex; charset=utf-8"}


def _blocks(handle, start: int, length: int):
    try:
        handle.seek(start)
        left = length
        while left > 0:
            block = handle.read(min(BLOCK, left))
            if not block:
                break
            left -= len(block)
            yield block
    finally:
        handle.close()


def file_response(name: str, entry: dict, range_header: str | None):
    """The response for stored file ``name`` described by manifest ``entry`` (``{"name", "size",
    "sha256", "format"}``): 200 with the whole file, 206 with the range asked, or 416 when the
    range is outside the file. Raises ``FileNotFoundError`` when storage does not hold it."""
    size = entry["size"]
    start, end = 0, size - 1
    status = 200
    if range_header:
        match = RANGE.match(range_header.strip())
        if match and (match.group(1) or match.group(2)):
            first, last = match.groups()
            if first:
                start, end = int(first), min(int(last), size - 1) if last else size - 1
            else:
                start, end = max(size - int(last), 0), size - 1
            if start >= size or start > end:
                response = HttpResponse(status=416)
                response["Content-Range"] = f"bytes */{size}"
                return response
            status = 206
    handle = default_storage.open(name, "rb")
    response = StreamingHttpResponse(_blocks(handle, start, end - start + 1), status=status,
                                     content_type=TYPES.get(entry.get("format", ""), "application/octet-stream"))
    response["Content-Length"] = str(end - start + 1)
    response["Accept-Ranges"] = "bytes"
    response["ETag"] = f'"{entry["sha256"]}"'
    response["Content-Disposition"] = f'attachment; filename="{entry["name"].rsplit("/", 1)[-1]}"'
    if status == 206:
        response["Content-Range"] = f"bytes {start}-{end}/{size}"
    return response
