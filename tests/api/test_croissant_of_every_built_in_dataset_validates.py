"""``GET /api/v1/datasets/{id}/croissant.json``: every built-in task's seed datasets have a Croissant
description that ``mlcroissant validate`` accepts, whose file ``mlcroissant.Dataset`` reads back
item for item (checksum checked); a hidden set is described, and served, without its labels to
anyone but its task's owners."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rest_framework.authtoken.models import Token

from tasks.data.seed import seed_scoring_datasets
from tests.api.conftest import client_for

LOAD = """
import json, sys
import mlcroissant as mlc
dataset = mlc.Dataset(jsonld=sys.argv[1])
records = [{k.split("/")[-1]: (v.decode() if isinstance(v, bytes) else v) for k, v in r.items()} for r in dataset.records("items")]
print(json.dumps(records, default=str))
"""


VALIDATE = """
import sys
from absl import app, flags
from mlcroissant.scripts import validate

def main(argv):
    for path in sys.argv[1:]:
        flags.FLAGS.jsonld = path
        print(f"=== {path}", file=sys.stderr, flush=True)
        try:
            validate.main([])
            code = 0
        except SystemExit as exit:
            code = exit.code
        sys.stderr.flush()
        print(f"=== exit {code}", file=sys.stderr, flush=True)

app.run(main, argv=["mlcroissant", "--jsonld", sys.argv[1]])
"""
"""``mlcroissant validate`` (the command's own ``main``, ``mlcroissant.scripts.validate``) run on each
file given, in one process instead of one per file (each start imports mlcroissant: ~1.3 s): between
``=== <path>`` and ``=== exit <status>`` lines on stderr, each file's log lines and exit status."""


def _validate_each(paths, *, cache):
    """``{path: (exit status, what validating it logged)}`` for each of ``paths``."""
    ran = _run([sys.executable, "-c", VALIDATE, *map(str, paths)], cache=cache)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    said, path, outcome = {}, None, {}
    for line in ran.stderr.splitlines():
        if line.startswith("=== exit ") and path is not None:
            outcome[path] = (int(line.removeprefix("=== exit ")), "\n".join(said[path]))
            path = None
        elif line.startswith("=== "):
            path = line.removeprefix("=== ")
            said[path] = []
        elif path is not None:
            said[path].append(line)
    assert sorted(outcome) == sorted(map(str, paths)), ran.stderr
    return outcome


def _run(command, *, cache, timeout=300):
    env = {**os.environ, "CROISSANT_CACHE": str(cache)}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)


@pytest.fixture
def seeded(default_tasks):
    return {code: seed_scoring_datasets(task) for code, task in default_tasks.items()}


def test_every_seed_dataset_validates_and_loads(live_server, seeded, admin_user, tmp_path):
    owner = client_for(admin_user)
    paths = []
    for code, datasets in seeded.items():
        assert [d.split for d in datasets] == ["dev", "test"], code
        for dataset in datasets:
            answer = owner.get(f"/api/v1/datasets/{dataset.pk}/croissant.json", SERVER_NAME="testserver")
            assert answer.status_code == 200 and answer["Content-Type"] == "application/ld+json"
            path = tmp_path / f"{dataset.name}.json"
            path.write_text(answer.content.decode())
            paths.append(path)
    for path, (status, said) in _validate_each(paths, cache=tmp_path / "cache").items():
        assert status == 0, (path, said)
        assert "Done." in said and "WARNING" not in said and "error" not in said.lower(), (path, said)

    # The public dev set of NLI, read by mlcroissant straight from the server, as the README shows.
    dev = seeded["nli"][0]
    loaded = _run([sys.executable, "-c", LOAD, f"{live_server.url}/api/v1/datasets/{dev.pk}/croissant.json"], cache=tmp_path / "cache")
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    records = json.loads(loaded.stdout.strip().splitlines()[-1])
    items = {i.uid: i for i in dev.items.all()}
    assert sorted(r["uid"] for r in records) == sorted(items)
    for record in records:
        assert record["label"] == items[record["uid"]].target["label"]
        assert record["hypothesis"] == items[record["uid"]].input["hypothesis"]


def test_a_hidden_set_is_described_without_its_labels(seeded, researcher, admin_user):
    test_set = seeded["nli"][1]
    assert test_set.labels_hidden

    as_researcher = client_for(researcher).get(f"/api/v1/datasets/{test_set.pk}/croissant.json").json()
    as_owner = client_for(admin_user).get(f"/api/v1/datasets/{test_set.pk}/croissant.json").json()
    lines = b"".join(client_for(researcher).get(f"/api/v1/datasets/{test_set.pk}/download.jsonl").streaming_content).decode()

    names = lambda body: {f["name"] for f in body["recordSet"][1]["field"]}
    assert "label" not in names(as_researcher) and "label" in names(as_owner)
    assert "hidden set" in as_researcher["description"] and as_researcher["isBasedOn"]["labels_included"] is False
    assert as_researcher["distribution"][0]["sha256"] != as_owner["distribution"][0]["sha256"]
    rows = [json.loads(line) for line in lines.splitlines()]
    assert len(rows) == test_set.items.count() and all("label" not in row for row in rows)
    assert not any(item.target["label"] in lines for item in test_set.items.all() if item.target["label"] not in ("neutral",))
