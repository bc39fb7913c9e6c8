"""``GET /api/v1/tasks/{code}/releases`` lists a task's published releases (anyone: public data
only) and ``.../releases/{version}`` gives one with its files, sizes, sha256 and download URLs;
releases still building or failed are not listed."""

from releases.models import Release
from releases.tests.support import released
from tests.api.conftest import client_for


def test_anyone_lists_the_published_releases_and_reads_one(dynasent_task, owner):
    release = released(dynasent_task, owner)
    Release.objects.create(task=dynasent_task, status=Release.Status.FAILED, failure_reason="disk full")
    api = client_for(None)

    listing = api.get("/api/v1/tasks/dynasent/releases")
    one = api.get("/api/v1/tasks/dynasent/releases/1.0.0")

    assert listing.status_code == 200 and [r["version"] for r in listing.json()["results"]] == ["1.0.0"]
    body = one.json()
    assert one.status_code == 200
    assert (body["version"], body["sha256"], body["example_count"]) == ("1.0.0", release.sha256, 4320)
    assert body["changelog"]["previous"] is None and body["changelog"]["added"]["count"] == 4320
    parquet = next(f for f in body["files"] if f["name"] == "data/round2-dev.parquet")
    assert parquet["rows"] == 720 and len(parquet["sha256"]) == 64
    assert parquet["url"] == "http://testserver/tasks/dynasent/releases/1.0.0/files/data/round2-dev.parquet"
    assert not any("test" in f["name"] for f in body["files"])


def test_an_unknown_version_is_404(dynasent_task, owner):
    released(dynasent_task, owner)

    assert client_for(None).get("/api/v1/tasks/dynasent/releases/9.9.9").status_code == 404
