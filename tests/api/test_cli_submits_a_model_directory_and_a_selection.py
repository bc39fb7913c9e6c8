"""``dynabench submit model DIR`` checks the directory (weights left home), then uploads it whole and
prints the model id; a model the dry run refuses is never uploaded. ``dynabench submit selection
FILE`` sends a data-centric task's selection (one uid a line)."""

import json
import shutil

from rest_framework.authtoken.models import Token

from leaderboard.tests.conftest import make_dataset
from tasks.models import MLModel, Task
from tests.cli_support import dynabench


def test_submit_model_checks_then_uploads(live_server, researcher, sentiment_datasets, tiny_classifier_dir, tmp_path):
    cli = dict(url=live_server.url, token=Token.objects.create(user=researcher).key, config=tmp_path / "config.json")
    pickled = tmp_path / "pickled"
    shutil.copytree(tiny_classifier_dir, pickled)
    (pickled / "pytorch_model.bin").write_bytes(b"not loaded")

    submitted = dynabench("submit", "model", tiny_classifier_dir, "--task", "sentiment", "--name", "tiny", **cli)
    refused = dynabench("submit", "model", pickled, "--task", "sentiment", **cli)

    assert submitted.returncode == 0, submitted.stderr
    assert "pass the checks" in submitted.stderr
    model = MLModel.objects.get(pk=int(submitted.stdout))
    assert (model.name, model.owner, model.status) == ("tiny", researcher, "unpacking")
    assert refused.returncode == 3 and "pytorch_model.bin" in refused.stderr and "(400 pickle_weights)" in refused.stderr
    assert MLModel.objects.count() == 1


def test_submit_selection_sends_the_uids(live_server, researcher, tmp_path):
    task = Task.objects.create(code="select", name="Select", kind="data_centric", collecting=False, config={
        "labels": ["positive", "negative"], "context_fields": [], "input_fields": [{"name": "text"}], "model_inputs": ["text"],
        "model_wrong": {"rule": "label_differs"}, "perf_metric": "accuracy", "data_centric": {"pool": "pool", "budget": 2, "seed": 5},
    })
    make_dataset(task, "pool", [(f"p{i}", {"text": f"text {i}"}, {"label": "positive" if i % 2 else "negative"}, "") for i in range(4)],
                 round_number=None, access="standard")
    cli = dict(url=live_server.url, token=Token.objects.create(user=researcher).key, config=tmp_path / "config.json")
    selection = tmp_path / "two-items.txt"
    selection.write_text("p1\np2\n")
    too_many = tmp_path / "too-many.json"
    too_many.write_text(json.dumps(["p1", "p2", "p3"]))

    submitted = dynabench("submit", "selection", selection, "--task", "select", **cli)
    refused = dynabench("submit", "selection", too_many, "--task", "select", **cli)

    assert submitted.returncode == 0, submitted.stderr
    model = MLModel.objects.get(pk=int(submitted.stdout))
    assert (model.name, model.training_info["selection"]) == ("two-items", ["p1", "p2"])
    assert refused.returncode == 3 and "over the budget of 2" in refused.stderr
