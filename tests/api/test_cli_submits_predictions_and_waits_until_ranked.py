"""``dynabench submit predictions good.jsonl --task nli && dynabench wait ID`` against a live server and a
worker: the submit checks first (a dry run), uploads, prints the model id alone on stdout; ``wait``
follows the model through its evaluation and exits 0 once it is evaluated and ranked."""

import json

import pytest
from rest_framework.authtoken.models import Token

from tasks.models import Dataset, DatasetItem, MLModel
from tests.api.conftest import run_worker
from tests.cli_support import dynabench, start_dynabench

LABELS = ["entailment", "neutral", "contradiction"]


@pytest.fixture
def nli_dev_set(nli_task):
    dataset = Dataset.objects.create(task=nli_task, round=nli_task.rounds.get(number=1), name="nli-r1-dev", access="scoring",
                                     split="dev", label_visibility="public")
    DatasetItem.objects.bulk_create(
        DatasetItem(dataset=dataset, uid=f"nli-{i}", input={"premise": f"A premise {i}.", "hypothesis": f"A hypothesis {i}."},
                    target={"label": LABELS[i % 3]})
        for i in range(6)
    )
    return dataset


def test_submit_then_wait_exits_0_when_the_model_is_ranked(live_server, researcher, nli_dev_set, tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text("".join(json.dumps({"uid": f"nli-{i}", "label": LABELS[i % 3] if i < 5 else "e"}) + "\n" for i in range(6)))
    cli = dict(url=live_server.url, token=Token.objects.create(user=researcher).key, config=tmp_path / "config.json")

    submitted = dynabench("submit", "predictions", good, "--task", "nli", **cli)
    assert submitted.returncode == 0, submitted.stderr
    model_id = int(submitted.stdout.strip())
    assert "6 predictions would be scored" in submitted.stderr  # the dry run came first
    waiting = start_dynabench("wait", model_id, "--poll", "0.2", "--timeout", "600", **cli)
    run_worker()  # the worker scores the predictions and ranks the model
    out, err = waiting.communicate(timeout=600)

    assert waiting.returncode == 0, err
    model = MLModel.objects.get(pk=model_id)
    assert (model.owner, model.name, model.status) == (researcher, "good", "evaluated")
    assert f"model {model_id} (good, nli): evaluated, Dynascore" in out
    assert dynabench("status", model_id, **cli).returncode == 0
    board = dynabench("--json", "leaderboard", "nli", **cli)
    assert [row["model_id"] for row in json.loads(board.stdout)["rows"]] == [model_id]
