"""A data-centric task ranks submitted selections of DynaSent round-1 items: the worker trains the
task's fixed recipe on exactly each selection with a fixed seed and scores it on the hidden test
set; the same selection trained again gives the same weights and the same scores."""

import json
import random
from pathlib import Path

import django_rq
import pytest
from django.core.management import call_command
from rq import SimpleWorker

from leaderboard.jobs import recompute_leaderboard
from leaderboard.models import EvaluationRun
from leaderboard.selectors import leaderboard_table
from leaderboard.services import submit_selection
from tasks.models import Dataset, DatasetItem, MLModel, Task
from tasks.loop.training.base_encoder import WEIGHTS_FILE, file_sha256
from tests.shared_data import shared_file
from tests.tiny_models import build_tiny_classifier

DEFINITION = Path(__file__).resolve().parents[2] / "tasks" / "data" / "task_definitions" / "dynasent-data-centric.json"
POOL_ROWS, TEST_ROWS = 900, 300


def _head(path: Path, n: int, out: Path) -> list[dict]:
    """The first ``n`` DynaSent rows of ``path`` with a gold label, written to ``out`` (a test-local subset)."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row.get("gold_label") in ("positive", "negative", "neutral"):
                rows.append(row)
            if len(rows) == n:
                break
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return rows


@pytest.fixture
def task(db, tmp_path, settings, media_root):
    """The task from its definition file; pool = DynaSent R1 dev rows, hidden scoring set = R1 test rows;
    the base encoder a tiny BERT whose vocabulary is learnt from the pool (no hub is reachable)."""
    pool = _head(shared_file("dynasent/dynasent-v1.1-round01-yelp-dev.jsonl"), POOL_ROWS, tmp_path / "pool.jsonl")
    _head(shared_file("dynasent/dynasent-v1.1-round01-yelp-test.jsonl"), TEST_ROWS, tmp_path / "test.jsonl")
    encoder = build_tiny_classifier(tmp_path / "encoder", ["positive", "negative", "neutral"],
                                    corpus=[r["sentence"] for r in pool], vocab_size=1500)
    settings.DYNABENCH_TRAINING_BASE_ENCODER = {"path": str(encoder), "sha256": file_sha256(encoder / WEIGHTS_FILE), "name": "tiny-bert-dynasent"}
    settings.DYNABENCH_TRAINING_THREADS = 1
    settings.MODELS_DIR = tmp_path / "models"
    settings.MODEL_SUBMISSIONS_PER_DAY = 100
    call_command("create_task", str(DEFINITION))
    common = ["--uid", "text_id", "--map", "text=sentence", "--map", "label=gold_label", "--no-progress"]
    call_command("import_dataset", "dynasent-select", "dynasent-r1-pool", str(tmp_path / "pool.jsonl"),
                 "--access", "standard", "--split", "train", "--labels", "public", *common)
    call_command("import_dataset", "dynasent-select", "dynasent-r1-test", str(tmp_path / "test.jsonl"),
                 "--access", "scoring", "--split", "test", "--labels", "hidden", *common)
    return Task.objects.get(code="dynasent-select")


@pytest.fixture
def queues():
    names = ("training", "evaluation", "default")
    for name in names:
        django_rq.get_queue(name).empty()
    yield names
    for name in names:
        django_rq.get_queue(name).empty()


def run_worker(queues, capture) -> None:
    """Run queued jobs in this process as ``rqworker --burst`` would, until nothing more is queued
    (jobs queue others once their transaction commits)."""
    while any(django_rq.get_queue(name).count for name in queues):
        with capture(execute=True):
            django_rq.get_worker(*queues, worker_class=SimpleWorker).work(burst=True)


def selections(task) -> dict[str, list[str]]:
    """A random selection and a label-balanced one, each of the task's budget."""
    budget = task.config["data_centric"]["budget"]
    pool = list(DatasetItem.objects.filter(dataset__name="dynasent-r1-pool").order_by("pk").values_list("uid", "target"))
    by_label: dict[str, list[str]] = {}
    for uid, target in pool:
        by_label.setdefault(target["label"], []).append(uid)
    balanced = [uid for label in sorted(by_label) for uid in by_label[label][: budget // 3]]
    return {"random": random.Random(7).sample([uid for uid, _ in pool], budget), "balanced": balanced}


@pytest.mark.parametrize("threads", [1, 2])
def test_the_leaderboard_ranks_selections_trained_and_scored_by_the_worker(
    task, researcher, queues, django_capture_on_commit_callbacks, settings, threads
):
    """Every selection is trained with ``threads`` torch threads (``DYNABENCH_TRAINING_THREADS``);
    the balanced one, trained twice, gives the same weights and scores at either count. (Across
    counts the weights differ in their last bits, torch's sums being split differently, which
    is why the thread count is a fixed setting and is recorded with the model.)"""
    settings.DYNABENCH_TRAINING_THREADS = threads
    chosen = selections(task)
    with django_capture_on_commit_callbacks(execute=True):
        for name, uids in chosen.items():
            submit_selection(user=researcher, task=task, uids=uids, name=f"{name}-selection")
        submit_selection(user=researcher, task=task, uids=chosen["balanced"], name="balanced-again")
    run_worker(queues, django_capture_on_commit_callbacks)

    models = {m.name: m for m in MLModel.objects.filter(task=task)}
    assert {m.status for m in models.values()} == {"evaluated"}, [(m.name, m.failure_reason) for m in models.values()]
    for model in models.values():
        assert [e["uid"] for e in map(json.loads, (Path(model.path) / "training_examples.jsonl").read_text().splitlines())] == model.training_info["selection"]
        runs = list(EvaluationRun.objects.filter(model=model).select_related("dataset"))
        assert [r.dataset.name for r in runs] == ["dynasent-r1-test"]  # the pool is training data, never scored
        assert runs[0].n_examples == TEST_ROWS
    assert models["balanced-selection"].training_info["hyperparameters"]["seed"] == 13

    # same selection, same seed, same thread count: the same weights and the same scores
    again, first = models["balanced-again"], models["balanced-selection"]
    assert {m.training_info["figures"]["torch_threads"] for m in models.values()} == {threads}
    assert again.training_info["weights_sha256"] == first.training_info["weights_sha256"]
    assert EvaluationRun.objects.get(model=again).metrics["macro_f1"] == EvaluationRun.objects.get(model=first).metrics["macro_f1"]

    recompute_leaderboard(task.pk)
    table = leaderboard_table(task)
    ranked = {row.name: row for row in table.rows}
    assert set(ranked) == {"random-selection", "balanced-selection", "balanced-again"}
    performance = {name: EvaluationRun.objects.get(model__name=name).performance for name in ranked}
    order = sorted(ranked, key=lambda n: ranked[n].rank)
    assert [performance[n] for n in order] == sorted(performance.values(), reverse=True)
    assert ranked["balanced-selection"].rank == ranked["balanced-again"].rank  # identical scores share a rank
    print({name: round(100 * performance[name], 2) for name in order})


def test_a_selection_that_breaks_a_rule_is_refused_naming_the_first_offender(task, researcher):
    from dynabench.errors import RuleError

    budget = task.config["data_centric"]["budget"]
    pool = list(DatasetItem.objects.filter(dataset__name="dynasent-r1-pool").order_by("pk").values_list("uid", flat=True))
    cases = [
        (pool[: budget + 1], f"over the budget of {budget}; the first over it is {pool[budget]!r}"),
        ([pool[0], "r1-nope", "r1-also-nope"], "Entry 2: 'r1-nope' is not in the pool 'dynasent-r1-pool'"),
        ([pool[0], pool[1], pool[0]], f"Entry 3 repeats the uid {pool[0]!r}"),
        ([pool[0], 7], "Entry 2 of the selection is not a uid string: 7"),
        ([], "A selection is a non-empty list of pool uids"),
    ]
    for uids, message in cases:
        with pytest.raises(RuleError) as info:
            submit_selection(user=researcher, task=task, uids=uids, name="bad")
        assert info.value.code == "bad_selection" and message in info.value.message
    assert not MLModel.objects.filter(task=task).exists()


def test_a_data_centric_task_takes_no_models_or_predictions(task, researcher):
    from dynabench.errors import RuleError
    from leaderboard.services import submit_predictions

    with pytest.raises(RuleError) as info:
        submit_predictions(user=researcher, task=task, upload=b'{"uid": "x", "label": "positive"}\n', name="p")
    assert info.value.code == "wrong_submission"
    assert "takes a selection of pool items, not a predictions file" in info.value.message
    assert Dataset.objects.get(task=task, name="dynasent-r1-pool").items.count() == POOL_ROWS
