"""``dynabench check FILE --selection --task T`` asks the selection submission's own checks
(``POST /api/v1/models/selections/check``) and stores nothing: a selection over the budget is refused
with the submission's message and exit 3, a good one is counted with exit 0; ``submit selection``
runs the same dry run first, so a refused one never reaches the submission."""

import json

from rest_framework.authtoken.models import Token

from leaderboard.tests.conftest import make_dataset
from tasks.models import MLModel, Task
from tests.cli_support import dynabench


def test_check_then_submit(live_server, researcher, tmp_path):
    task = Task.objects.create(code="select", name="Select", kind="data_centric", collecting=False, config={
        "labels": ["positive", "negative"], "context_fields": [], "input_fields": [{"name": "text"}], "model_inputs": ["text"],
        "model_wrong": {"rule": "label_differs"}, "perf_metric": "accuracy", "data_centric": {"pool": "pool", "budget": 2, "seed": 5},
    })
    make_dataset(task, "pool", [(f"p{i}", {"text": f"text {i}"}, {"label": "positive" if i % 2 else "negative"}, "") for i in range(4)],
                 round_number=None, access="standard")
    cli = dict(url=live_server.url, token=Token.objects.create(user=researcher).key, config=tmp_path / "config.json")
    good, too_many, stranger = tmp_path / "good.txt", tmp_path / "too-many.json", tmp_path / "stranger.txt"
    good.write_text("p1\np2\n")
    too_many.write_text(json.dumps(["p1", "p2", "p3"]))
    stranger.write_text("p1\nnot-in-the-pool\n")

    ok = dynabench("check", good, "--selection", "--task", "select", **cli)
    over = dynabench("check", too_many, "--selection", "--task", "select", **cli)
    unknown = dynabench("submit", "selection", stranger, "--task", "select", **cli)

    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == "OK: 2 uids of pool would be trained on."
    assert over.returncode == 3 and "over the budget of 2" in over.stderr
    assert unknown.returncode == 3 and "not-in-the-pool" in unknown.stderr
    assert not MLModel.objects.exists()
