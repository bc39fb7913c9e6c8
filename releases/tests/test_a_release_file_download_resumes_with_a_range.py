"""A release's files are streamed with ``Accept-Ranges``; ``Range: bytes=N-`` answers 206 with the
rest of the file (an interrupted download resumes), a range past the end 416; only names in the
manifest are served."""

from django.core.files.storage import default_storage
from django.urls import reverse

from releases.tests.support import released


def test_a_range_gives_the_rest_of_the_file(client, dynasent_task, owner):
    release = released(dynasent_task, owner)
    name = "data/round2-dev.parquet"
    url = reverse("releases:file", args=["dynasent", "1.0.0", name])
    with default_storage.open(release.storage_prefix + name, "rb") as handle:
        whole = handle.read()

    full = client.get(url)
    rest = client.get(url, HTTP_RANGE="bytes=1000-")
    past = client.get(url, HTTP_RANGE=f"bytes={len(whole)}-")

    assert full.status_code == 200 and full["Accept-Ranges"] == "bytes" and b"".join(full.streaming_content) == whole
    assert rest.status_code == 206 and rest["Content-Range"] == f"bytes 1000-{len(whole) - 1}/{len(whole)}"
    assert b"".join(rest.streaming_content) == whole[1000:]
    assert past.status_code == 416
    assert client.get(reverse("releases:file", args=["dynasent", "1.0.0", "data/round2-test.jsonl"])).status_code == 404
