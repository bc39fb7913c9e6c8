"""``dynabench check FILE --selection``: a selection with uids that are not in the task's pool names
them, each with its entry number (the first ten, then how many in all), so one round of fixes is
enough; exit status 3."""

from rest_framework.authtoken.models import Token

from leaderboard.tests.conftest import make_dataset
from tasks.models import MLModel, Task
from tests.cli_support import dynabench


def test_the_unknown_uids_are_named_in_a_bounded_list(live_server, researcher, tmp_path):
    task = Task.objects.create(code="select", name="Select", kind="data_centric", collecting=False, config={
        "labels": ["positive", "negative"], "context_fields": [], "input_fields": [{"name": "text"}], "model_inputs": ["text"],
        "model_wrong": {"rule": "label_differs"}, "perf_metric": "accuracy", "data_centric": {"pool": "pool", "budget": 20, "seed": 5},
    })
    make_dataset(task, "pool", [(f"p{i}", {"text": f"text {i}"}, {"label": "positive" if i % 2 else "negative"}, "") for i in range(4)],
                 round_number=None, access="standard")
    cli = dict(url=live_server.url, token=Token.objects.create(user=researcher).key, config=tmp_path / "config.json")
    selection = tmp_path / "selection.txt"
    selection.write_text("p1\n" + "".join(f"stranger-{i}\n" for i in range(12)))

    result = dynabench("check", selection, "--selection", "--task", "select", **cli)

    assert result.returncode == 3
    assert "Entry 2: 'stranger-0' is not in the pool 'pool'." in result.stderr
    assert "entry 11: 'stranger-9'" in result.stderr
    assert "stranger-10" not in result.stderr
    assert "and 2 more (12 unknown uids in all)" in result.stderr
    assert not MLModel.objects.exists()
