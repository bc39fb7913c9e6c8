"""Hidden test sets never enter a public release: no file of it (JSONL, Parquet read back and as
bytes, card, Croissant, citation) holds a hidden item's uid, and no value of any row is a hidden
item's text; the hidden sets are in the owner-only artefact, which only the task's owners download."""

import json

import pyarrow.parquet as pq
from django.urls import reverse

from releases.tests.support import download_folder, released
from tasks.models import DatasetItem


def _rows(path) -> list[dict]:
    if path.suffix == ".parquet":
        return pq.read_table(path).to_pylist()
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return []


def test_no_file_of_the_public_release_holds_a_hidden_item(dynasent_task, owner, tmp_path):
    release = released(dynasent_task, owner)
    folder = download_folder(release, tmp_path / "release")
    hidden = dict(DatasetItem.objects.filter(dataset__task=dynasent_task, dataset__label_visibility="hidden").values_list("uid", "input"))
    hidden_texts = {data["text"] for data in hidden.values()}
    assert len(hidden) == 3600 + 720

    files = [p for p in folder.rglob("*") if p.is_file()]
    assert len(files) == len(release.manifest["files"]) == 8
    for path in files:
        raw = path.read_bytes().decode("utf-8", errors="replace")
        assert [uid for uid in hidden if uid in raw] == [], f"{path.name} names hidden items"
        values = {value for row in _rows(path) for value in row.values() if isinstance(value, str)}
        assert values & hidden_texts == set(), f"{path.name} holds hidden texts"
        assert [row["uid"] for row in _rows(path) if row["uid"] in hidden] == []


def test_only_owners_download_the_hidden_sets(client, dynasent_task, owner, outsider):
    release = released(dynasent_task, owner)
    url = reverse("releases:hidden_file", args=[dynasent_task.code, release.version, "data/round2-test.jsonl"])

    client.force_login(outsider)
    assert client.get(url).status_code == 404
    client.force_login(owner)
    response = client.get(url)

    assert response.status_code == 200
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert len(lines) == 720 and {"label"} <= set(json.loads(lines[0]))
