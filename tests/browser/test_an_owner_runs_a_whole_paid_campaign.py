"""Issue 29, the owner's whole paid campaign in Chromium, at 1280 px and at 390 px (a phone):

1. the owner creates a task from a definition file on the console's New task page (round 1 opens
   with the file's contexts) and puts a model in round 1's loop;
2. writes the qualification quiz and sets up a Prolific study, and copies its study URL;
3. a worker enters through that URL as Prolific fills it in, passes the quiz, writes an example
   that fools the model and gets the completion code;
4. a validator validates it;
5. the owner closes the round from the console after its preview, with the confirmation box,
   which ends its study;
6. the worker scores both published models on the round's new dev and test sets and the
   leaderboard re-ranks them.

The browser logs no console error and throws no page error at any step, and no page scrolls
sideways. With ``DYNABENCH_SCREENSHOTS=<folder>`` each step's screen is saved there as
``campaign-<width>-<step>.png``; a failed walk saves its last screens in ``/tmp``.

One platform serves both walks, one after the other, each a subtest of its own: the walk at each
width has its own task, people, study and crowd worker (``WALKS``), so no check of one walk
depends on the other's work, and the platform is started and stopped once instead of once per width.

Everything runs as real processes on a scratch platform (``tests.worker_stack.WorkerStack``): its
own SQLite file and embedded Redis, Django's development server, one ``manage.py rqworker``.
Two tiny classifiers built on the fly stand in for the researchers' models; the examples and
the earlier dataset are labelled from their own predictions so that ``tiny-a`` ranks first
before the close and ``tiny-b`` after it. Waits are on the work's own signals (a ``done``
evaluation run per model and dataset), with ceilings that only catch a hang.
"""

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tasks.data.seed import load_task_definition
from tests.browser_support import HANG_MS, browser_only, horizontal_overflow, save_screenshot
from tests.tiny_models import build_tiny_classifier
from tests.worker_stack import WorkerStack

pytestmark = [*browser_only, pytest.mark.slow]

LABELS = ["positive", "negative", "neutral"]
PASSWORD = "pw-campaign-12345"


@dataclass(frozen=True)
class Walk:
    """One walk's own task, people, Prolific study and crowd worker, at one width."""

    viewport: dict
    code: str
    name: str
    owner: str
    validator: str
    researcher: str
    annotator: str
    study_id: str
    worker_pid: str

    @property
    def width(self) -> int:
        return self.viewport["width"]


WALKS = [
    Walk({"width": 1280, "height": 800}, "hotel-reviews", "Hotel reviews", "olga", "vera", "rita", "ann",
         "65a0b1c2d3e4f5a6b7c8d9e0", "5f1a2b3c4d5e6f7a8b9c0d1e"),
    Walk({"width": 390, "height": 844}, "hotel-reviews-phone", "Hotel reviews on a phone", "olivia", "victor", "ravi", "anna",
         "65a0b1c2d3e4f5a6b7c8d9e1", "5f1a2b3c4d5e6f7a8b9c0d1f"),
]
QUIZ = {"What a lovely, quiet hotel.": "positive", "The room smelled of smoke and nobody cared.": "negative",
        "The hotel is three hundred metres from the station.": "neutral"}
"""The quiz's questions and their right labels (three: each of the two people who take it draws one
it has not retired yet; the page warns that one question per attempt is easy to guess)."""
HANG_S = 900  # seconds: a ceiling that only catches a hung worker or server, never a verdict on speed

USERS = """
from django.contrib.auth.models import Group, Permission, User
from dynabench.roles import ensure_role_groups

ensure_role_groups()
for owner, validator, researcher, annotator in PEOPLE:
    olga = User.objects.create_user(owner, password=PASSWORD)
    olga.user_permissions.add(Permission.objects.get(codename="add_task", content_type__app_label="tasks"))
    for name, role in ((validator, "validator"), (researcher, "researcher"), (annotator, "annotator")):
        User.objects.create_user(name, password=PASSWORD).groups.add(Group.objects.get(name=role))
"""

# After the owner created the task: the researchers' two published models, an earlier scoring
# set on which tiny-a is right and tiny-b wrong, and validated examples of round 1 on which
# tiny-b is right and tiny-a wrong. Prints the text and label the crowd worker will write.
MODELS = """
import json
from django.contrib.auth.models import User
from leaderboard.services import register_model_directory
from tasks.models import Dataset, DatasetItem, Task
from tasks.loop.registry import load_predictor
from validation.tests.conftest import make_example

task = Task.objects.get(code=CODE)
olga, rita, ann = (User.objects.get(username=name) for name in (OWNER, RESEARCHER, ANNOTATOR))
texts = [f"Review {i}: the {w} was {v} and the staff {s}." for i, (w, v, s) in enumerate(
    (w, v, s) for w in ("room", "breakfast", "pool", "view", "bed") for v in ("cold", "lovely", "noisy", "fine")
    for s in ("smiled", "shouted", "helped"))]
said = {name: [p["label"] for p in load_predictor(path, task=task).predict([{"text": t} for t in texts])]
        for name, path in MODEL_DIRS.items()}
apart = [(t, a, b) for t, a, b in zip(texts, said["tiny-a"], said["tiny-b"]) if a != b]
assert len(apart) >= 26, f"the two tiny models disagree on {len(apart)} texts only"
earlier = Dataset.objects.create(task=task, name=f"{CODE}-earlier-dev", access="scoring", split="dev", label_visibility="public")
DatasetItem.objects.bulk_create(DatasetItem(dataset=earlier, uid=f"e{i}", input={"text": t}, target={"label": a})
                                for i, (t, a, b) in enumerate(apart[:6]))
for t, a, b in apart[6:25]:
    make_example(task, ann, label=b, text=t, validation_state="verified_correct", validation_count=1, correct_count=1)
for name, path in MODEL_DIRS.items():
    register_model_directory(actor=olga, owner=rita, task=task, path=path, name=name, published=True)
text, fooled, label = apart[25]
print(json.dumps({"text": text, "label": label, "loop_says": fooled}))
"""


def _definition(path: Path, walk: Walk) -> Path:
    """A definition file: the sentiment task's, renamed, ranked on accuracy alone, one validation each."""
    spec = load_task_definition("sentiment")
    spec.update(code=walk.code, name=walk.name)
    spec["config"].update(validations_needed=1, delta_metrics=[], dynascore_weights={"performance": 1})
    path.write_text(json.dumps(spec))
    return path


def _scored(stack, code: str) -> dict:
    """``{model name: {dataset names with a done run}}`` of the published models of the task ``code``."""
    rows = stack.query(
        "SELECT m.name, d.name FROM tasks_mlmodel m JOIN tasks_task t ON t.id = m.task_id "
        "LEFT JOIN leaderboard_evaluationrun r ON r.model_id = m.id AND r.status = 'done' "
        "LEFT JOIN tasks_dataset d ON d.id = r.dataset_id WHERE t.code = ? AND m.published", (code,),
    )
    found = {}
    for model, dataset in rows:
        found.setdefault(model, set())
        if dataset:
            found[model].add(dataset)
    return found


@pytest.fixture
def platform(tmp_path_factory, stack_template):
    """A scratch platform with every walk's people, a worker and a web server: yields ``(stack, base URL, model dirs)``."""
    root = tmp_path_factory.mktemp("campaign")
    dirs = {name: str(build_tiny_classifier(root / name, LABELS, seed=seed)) for name, seed in (("tiny-a", 1), ("tiny-b", 2))}
    stack = WorkerStack(root, stack_template, LEADERBOARD_BOOTSTRAP_RESAMPLES="200", CROWD_ENTRIES_PER_ADDRESS_PER_HOUR="0",
                        CROWD_ENTRIES_PER_STUDY_PER_MINUTE="0", ANNOTATION_SUBMISSIONS_PER_MINUTE="0")
    try:
        people = [(w.owner, w.validator, w.researcher, w.annotator) for w in WALKS]
        stack.python(f"PASSWORD = {PASSWORD!r}\nPEOPLE = {people!r}\n" + USERS)
        stack.worker("worker", cache=root / "cache")
        base = stack.web(timeout=HANG_S)
        yield stack, base, dirs
    finally:
        stack.stop()


class Browsing:
    """Pages of one width that record every console error and page error, and save screenshots."""

    def __init__(self, browser, base, viewport):
        self.browser, self.base, self.viewport = browser, base, viewport
        self.errors: list[str] = []
        self.contexts = []

    def page(self):
        context = self.browser.new_context(base_url=self.base, viewport=self.viewport)
        self.contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(HANG_MS)
        page.on("console", lambda m: self.errors.append(f"console {m.location.get('url')}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda error: self.errors.append(f"pageerror {page.url}: {error}"))
        page.on("dialog", lambda dialog: dialog.accept())
        return page

    def log_in(self, username):
        page = self.page()
        page.goto("/accounts/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit], input[type=submit]")
        page.wait_for_url(lambda url: "/accounts/login/" not in url)
        return page

    def step(self, page, name):
        """Screenshot the page (``save_screenshot``) and check that it does not scroll sideways, nor logged an error so far."""
        save_screenshot(page, f"campaign-{self.viewport['width']}-{name}")
        assert horizontal_overflow(page) == 0, f"{name}: {page.url} scrolls sideways by {horizontal_overflow(page)} px"
        assert self.errors == [], f"{name}: the browser logged errors: {self.errors}"

    def close(self, failed: bool):
        """Close every page; after a ``failed`` walk, first save the last screen of each as
        ``/tmp/campaign-<width>-last-<n>.png``, to see where it stopped."""
        for n, context in enumerate(self.contexts):
            for page in context.pages if failed else ():
                page.screenshot(path=f"/tmp/campaign-{self.viewport['width']}-last-{n}.png", full_page=True)
            context.close()


def _pass_quiz(page) -> None:
    """Answer each question of the quiz on ``page`` right (``QUIZ``), tick "I read the instructions", continue."""
    page.locator("#quiz-form").wait_for()
    for item in page.locator("#quiz-form [data-quiz-item]").all():
        text = item.inner_text()
        label = next(label for question, label in QUIZ.items() if question in text)
        item.locator(f"input[value={label}]").check()
    page.check("input[name=read_instructions]")
    page.click("#quiz-form button[type=submit]")
    page.get_by_text("You passed").wait_for()
    page.click("#quiz-continue")


def _names_in_order(page) -> list[str]:
    rows = page.locator("table.leaderboard tbody tr").all_inner_texts()
    return [name for row in rows for name in ("tiny-a", "tiny-b") if name in row]


def test_an_owner_runs_a_whole_paid_campaign(platform, browser, tmp_path, subtests):
    """The whole walk at 1280 px, then at 390 px (a phone, clicking through every step there
    too), on the one platform: each walk a subtest, with its own task, people and study."""
    for walk in WALKS:
        with subtests.test(msg=f"the walk at {walk.width} px"):
            _walk(platform, browser, tmp_path, walk)


def _walk(platform, browser, tmp_path, walk: Walk) -> None:
    stack, base, model_dirs = platform
    code = walk.code
    b = Browsing(browser, base, walk.viewport)
    try:
        # 1. A task from a definition file, then a model in round 1's loop.
        owner = b.log_in(walk.owner)
        owner.goto("/console/")
        owner.click("[data-new-task]")
        b.step(owner, "1-new-task")
        owner.set_input_files("input[name=definition]", str(_definition(tmp_path / f"{code}.json", walk)))
        owner.click("[data-create-task] button[type=submit]")
        owner.get_by_text(f"Task {code} created with round 1 open and 5 context(s)").wait_for()
        worker_example = stack.json(f"CODE = {code!r}\nOWNER = {walk.owner!r}\nRESEARCHER = {walk.researcher!r}\n"
                                   f"ANNOTATOR = {walk.annotator!r}\nMODEL_DIRS = {model_dirs!r}\n" + MODELS)
        stack.wait_for(lambda: _scored(stack, code) == {"tiny-a": {f"{code}-earlier-dev"}, "tiny-b": {f"{code}-earlier-dev"}},
                       timeout=HANG_S, what="the models' first evaluation")
        reader = b.page()

        def ranked(order):
            reader.goto(f"/tasks/{code}/leaderboard/")
            return _names_in_order(reader) == order

        stack.wait_for(lambda: ranked(["tiny-a", "tiny-b"]), timeout=HANG_S, every=2, what="the first leaderboard")
        b.step(reader, "1-leaderboard-before")
        owner.goto(f"/tasks/{code}/console/rounds/")
        form = owner.locator("form[data-add-loop-model]")
        form.locator("select[name=model]").select_option(form.locator("option", has_text="tiny-a").get_attribute("value"))
        form.locator("button[type=submit]").click()
        owner.get_by_text("tiny-a is now in the loop of round 1.").wait_for()
        assert owner.locator("[data-round-gaps]").count() == 0  # a model and contexts: nothing lacking
        b.step(owner, "2-rounds")

        # 2. The quiz, then a Prolific study; the owner copies its URL.
        owner.goto(f"/tasks/{code}/console/crowd/quiz/")
        owner.fill("textarea[name=instructions]", "Label the **sentiment** of each hotel review.")
        owner.fill("input[name=questions_per_attempt]", "1")
        owner.fill("input[name=cooloff_minutes]", "0")
        owner.click("[data-quiz-settings] button[type=submit]")
        for n, (text, label) in enumerate(QUIZ.items(), start=1):
            owner.fill("textarea[name=input_text]", text)
            owner.check(f"[data-add-question] input[name=label][value={label}]")
            owner.click("[data-add-question] button[type=submit]")
            expect(owner.locator("[data-quiz-item]")).to_have_count(n)
        owner.get_by_text("Pool: 3 questions not retired").wait_for()
        assert "Guessing passes 33% of attempts (1 question, pass mark 80%)" in owner.inner_text("[data-pool-problem]")
        b.step(owner, "3-quiz")
        owner.goto(f"/tasks/{code}/console/crowd/")
        owner.select_option("select[name=platform]", "prolific")
        owner.fill("input[name=required]", "1")
        owner.fill("input[name=completion_code]", "C0MPLETE")
        owner.click("[data-new-study] button[type=submit]")
        owner.locator("[data-entry-url]").wait_for()
        owner.fill("input[name=platform_study_id]", walk.study_id)
        owner.click("[data-edit-study] button[type=submit]")
        owner.get_by_text("Study saved.").wait_for()
        assert owner.locator("[data-not-ready]").count() == 0
        owner.locator("[data-entry-url]").select_text()
        url = owner.locator("[data-entry-url]").input_value()
        assert url.startswith(base) and "PROLIFIC_PID={{%PROLIFIC_PID%}}" in url
        b.step(owner, "4-study")
        owner.goto(f"/tasks/{code}/console/crowd/")
        b.step(owner, "5-crowd")

        # 3. A worker enters through the URL as Prolific fills it in, passes the quiz, writes.
        worker = b.page()
        worker.goto(url.replace("{{%PROLIFIC_PID%}}", walk.worker_pid).replace("{{%STUDY_ID%}}", walk.study_id)
                    .replace("{{%SESSION_ID%}}", "sess-1"))
        worker.get_by_text("Label the sentiment of each hotel review.").wait_for()
        b.step(worker, "6-quiz")
        _pass_quiz(worker)
        worker.click("#crowd-work")
        worker.locator("textarea[name=text]").fill(worker_example["text"])
        worker.check(f"input[name=label][value={worker_example['label']}]")
        worker.click("#workspace button[type=submit]")
        worker.locator("#workspace .outcome").wait_for()
        worker.locator("#crowd-banner[data-crowd-progress='1']").wait_for()
        b.step(worker, "7-written")
        worker.click("#crowd-banner a")
        worker.click("#crowd-finish")
        assert worker.inner_text("#completion-code") == "C0MPLETE"
        b.step(worker, "8-finished")

        # 4. A validator validates the worker's example.
        validator = b.log_in(walk.validator)
        validator.goto(f"/tasks/{code}/validate/")
        _pass_quiz(validator)  # validators of a task with a quiz pass it too
        card = validator.locator("#review [data-example-id]")
        card.wait_for()
        assert worker_example["text"] in validator.inner_text("#review")
        b.step(validator, "9-validate")
        validator.check("input[name=label][value=correct]")
        validator.click("#review-form button[type=submit]")
        validator.get_by_text("Saved: correct").wait_for()
        assert stack.query("SELECT e.validation_state FROM annotation_example e JOIN tasks_round r ON r.id = e.round_id "
                           "JOIN tasks_task t ON t.id = r.task_id WHERE t.code = ? AND e.input LIKE ?",
                           (code, f"%{worker_example['text']}%")) == [("verified_correct",)]

        # 5. The owner closes the round after its preview, with the confirmation box.
        owner.goto(f"/tasks/{code}/console/rounds/")
        owner.get_by_role("link", name="Close round").click()
        owner.locator("[data-validated]").wait_for()
        assert owner.locator("[data-validated]").inner_text() == "20"
        b.step(owner, "10-close-preview")
        owner.check("input[name=confirm]")
        owner.click("button[name=action][value=close]")
        owner.get_by_text("Round 1 is closed.").wait_for()
        b.step(owner, "11-closed")
        owner.goto(f"/tasks/{code}/console/crowd/")
        assert owner.inner_text("[data-studies] tbody [data-label=Status]") == "ended"  # closing the round ended its study
        b.step(owner, "12-crowd-ended")

        # 6. The worker scores both models on the new sets; the leaderboard re-ranks.
        new_sets = {f"{code}-r1-dev", f"{code}-r1-test"}
        stack.wait_for(lambda: all(new_sets <= sets for sets in _scored(stack, code).values()),
                       timeout=HANG_S, every=1, what="both models scored on the round's new datasets")
        def reranked():
            return ranked(["tiny-b", "tiny-a"]) and all(name in reader.locator("table.leaderboard thead").inner_text() for name in new_sets)

        stack.wait_for(reranked, timeout=HANG_S, every=2, what="a leaderboard ranked on the round's datasets")
        b.step(reader, "13-leaderboard")
    except BaseException:
        b.close(failed=True)
        raise
    b.close(failed=False)
