"""Issue 12, tried as a new owner would: close a sentiment round with validated examples in the
browser, with a real RQ worker running; the worker then scores every published model on the
round's new dev and test sets and the leaderboard shows none as pending. The test waits for those
runs' own state (a ``done`` evaluation run per model and dataset, then a leaderboard page with
nothing pending), with a ceiling that only catches a hang: how fast it happens depends on the
machine and is measured in ``benchmarks/rescoring.py``, never asserted here.

Everything runs as real processes on a scratch platform (``tests.worker_stack.WorkerStack``: its
own SQLite file and embedded Redis): Django's development server serves the pages, one
``manage.py rqworker --with-scheduler`` does the jobs, and two tiny classifiers built on the fly
stand in for the researchers' models.
"""

from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.browser_support import HANG_MS, browser_only
from tests.tiny_models import build_tiny_classifier
from tests.worker_stack import WorkerStack

pytestmark = [*browser_only, pytest.mark.slow]

LABELS = ["positive", "negative", "neutral"]
VALIDATED = 20  # split 80/10/10 by default: 16 train, 2 dev, 2 test
HANG_S = 900  # seconds: a ceiling that only catches a hung worker, never a verdict on speed

SETUP = """
import json
from django.contrib.auth.models import Group, User
from dynabench.roles import ensure_role_groups
from leaderboard.services import register_model_directory
from tasks.models import Dataset, DatasetItem, MLModel, Task
from tasks.data.seed import seed_default_tasks
from validation.tests.conftest import make_example

seed_default_tasks()
ensure_role_groups()
task = Task.objects.get(code="sentiment")
owner = User.objects.create_user("olga", password="pw-olga-owner")
task.owners.add(owner)
researcher = User.objects.create_user("rita", password="pw-rita-researcher")
researcher.groups.add(Group.objects.get(name="researcher"))
for name in ("sentiment-seed-dev", "sentiment-seed-test"):  # a small scoring set the models are ranked on before the close
    Dataset.objects.filter(task=task, name=name).delete()
dev = Dataset.objects.create(task=task, name="sentiment-earlier-dev", access="scoring", split="dev", label_visibility="public")
labels = ["positive", "negative", "neutral"]
DatasetItem.objects.bulk_create(
    DatasetItem(dataset=dev, uid=f"e{i}", input={"text": f"Earlier sentence {i}, the staff were kind."}, target={"label": labels[i % 3]})
    for i in range(6)
)
for i in range(VALIDATED):
    make_example(task, owner, label=labels[i % 3], text=f"Validated example {i}: the room was fine.", validation_state="verified_correct",
                 validation_count=3, correct_count=3)
models = [register_model_directory(actor=owner, owner=researcher, task=task, path=path, name=name, published=True)
          for name, path in MODEL_DIRS.items()]
print(json.dumps({"round": task.current_round().number, "models": [m.pk for m in models]}))
"""


def _published_scored(stack) -> dict:
    """``{model name: [dataset names with a done run]}`` of the published sentiment models."""
    rows = stack.query(
        "SELECT m.name, d.name FROM tasks_mlmodel m JOIN tasks_task t ON t.id = m.task_id "
        "LEFT JOIN leaderboard_evaluationrun r ON r.model_id = m.id AND r.status = 'done' "
        "LEFT JOIN tasks_dataset d ON d.id = r.dataset_id WHERE t.code = 'sentiment' AND m.published"
    )
    found = {}
    for model, dataset in rows:
        found.setdefault(model, set())
        if dataset:
            found[model].add(dataset)
    return found


@pytest.fixture
def platform(tmp_path_factory, stack_template):
    """A scratch platform with the sentiment task ready to close round 1, a worker and a web server:
    yields ``(stack, base URL, {"round", "models"})``; every process is stopped afterwards."""
    root = tmp_path_factory.mktemp("close-live")
    dirs = {name: build_tiny_classifier(root / name, LABELS, seed=seed) for name, seed in (("tiny-a", 1), ("tiny-b", 2))}
    stack = WorkerStack(root, stack_template, LEADERBOARD_BOOTSTRAP_RESAMPLES="200")
    try:
        # The worker and the web server start while the set-up code runs, three Django start-ups at
        # once instead of one after the other: the worker waits on its queues until the set-up
        # registers the models (which queues their evaluation), the server has nothing to serve yet.
        stack.worker("worker", cache=root / "cache")
        with ThreadPoolExecutor(1) as pool:
            web = pool.submit(stack.web, timeout=HANG_S)
            model_dirs = {name: str(path) for name, path in dirs.items()}
            created = stack.json(f"VALIDATED = {VALIDATED}\nMODEL_DIRS = {model_dirs!r}\n" + SETUP)
            base = web.result()
        # Before the close: both models evaluated on the earlier set and ranked.
        stack.wait_for(lambda: _published_scored(stack) == {"tiny-a": {"sentiment-earlier-dev"}, "tiny-b": {"sentiment-earlier-dev"}},
                       timeout=HANG_S, what="the models' first evaluation")
        yield stack, base, created
    finally:
        stack.stop()


def test_closing_a_round_in_the_browser_rescores_every_published_model(platform, browser):
    stack, base, created = platform
    context = browser.new_context(base_url=base)
    page = context.new_page()
    page.set_default_timeout(HANG_MS)
    try:
        page.goto("/accounts/login/?next=/tasks/sentiment/rounds/1/close/")
        page.fill("input[name=username]", "olga")
        page.fill("input[name=password]", "pw-olga-owner")
        page.click("button[type=submit], input[type=submit]")
        page.locator("[data-validated]").wait_for()
        assert page.locator("[data-validated]").inner_text() == str(VALIDATED)
        assert sorted(page.locator("[data-model]").all_inner_texts()) == ["tiny-a", "tiny-b"]

        page.check("input[name=confirm]")
        page.click("button[name=action][value=close]")
        page.get_by_text("is closed").first.wait_for()

        new_sets = {"sentiment-r1-dev", "sentiment-r1-test"}
        stack.wait_for(lambda: all(new_sets <= sets for sets in _published_scored(stack).values()),
                       timeout=HANG_S, every=1, what="every published model scored on the new datasets")

        def board_complete():
            page.goto("/tasks/sentiment/leaderboard/")
            ranked = page.locator("table.leaderboard tbody").inner_text()
            return "<h3>Not ranked yet</h3>" not in page.content() and all(name in ranked for name in ("tiny-a", "tiny-b"))

        stack.wait_for(board_complete, timeout=HANG_S, every=2, what="a leaderboard with nothing pending")
        header = page.locator("table.leaderboard thead").inner_text()
        assert "sentiment-r1-dev" in header and "sentiment-r1-test" in header
    finally:
        context.close()
