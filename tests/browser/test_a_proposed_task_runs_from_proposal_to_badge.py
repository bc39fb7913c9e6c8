"""Issue 33's first done-when, walked in Chromium through the pages as new users would:

1. a researcher proposes a task from the form with a definition file; a broken file is refused with
   its problem on its line, the fixed file is taken ("Waiting for review");
2. an admin approves it in the review queue; the researcher, now its owner, finds the decision in
   the bell;
3. the owner submits a model directory as a .tar.gz archive on the task's Submit page (as researchers
   do), the worker unpacks it, and the owner opens round 1 for writing from the console's Rounds page:
   the round's "still lacks" card names the missing model, "Add a model to the loop" puts the
   submitted model in it and the card goes;
4. an annotator writes on the write page until the model is fooled (they see the model's label and
   write again with another one when it got it right);
5. a validator validates that example in the review queue page;
6. the worker sends the notifications: the annotator's bell counts them, its list (HTMX "Mark read",
   the bell's count following) names the validated example and the "Model fooler" badge, which also
   shows on the annotator's page and in the round's annotators list;
7. the owner closes round 1 from the console and opens round 2 in the same step (the close form's
   "Open the next round"), with the model in its loop and round 1's contexts; the annotator is told
   and writes in round 2.

Why the owner's first round is round 1 completed rather than a round opened: approval creates the
task through the same service as ``manage.py create_task``, and a collecting definition gets round
1 open with the file's contexts but no model in its loop, so annotators cannot write yet
(``tasks.services.round_gaps``). "Open the next round" is refused while round 1 is open, and closing
round 1 needs a validated example, which needs a model in its loop: so the honest first act of a new
owner is to put a model in round 1's loop, and opening a round proper comes once round 1 has
something to close (step 7). Proposing the task with ``collecting`` off, to turn it on later and open
round 1 by hand, would be a detour no owner takes (the contexts would then need a separate upload).

Real parts: the live server, Chromium, the tiny classifier of ``tests/tiny_models.py``, and RQ's
worker (``run_worker``: a burst that returns when the queue is empty, the jobs' own completion
signal) for unpacking, notifications and badges. The browser logs no console error and throws no
page error at any step (the one 400 of the refused proposal form is expected); the page with the
bell's unread count has no serious axe violation, and the count's contrast is measured (axe leaves
a one-digit text "incomplete"). With ``DYNABENCH_SCREENSHOTS=<folder>`` each step's screen is saved
there as ``walk33-<step>.png``; a failed walk saves its last screen as ``/tmp/walk33-last.png``.
"""

import json
import tarfile
from pathlib import Path

import pytest

from community.models import TaskProposal
from tasks.models import MLModel, Task
from tests.api.conftest import run_worker
from tests.browser_support import (
    browser_only,
    contrast_ratio,
    log_in,
    save_screenshot,
    serious_axe_violations,
)

pytestmark = [*browser_only, pytest.mark.django_db(transaction=True)]

LABELS = ["positive", "negative", "neutral"]
CONFIG = {
    "context_fields": [{"name": "scene", "label": "A film scene"}],
    "input_fields": [{"name": "text", "label": "Your review line", "max_length": 300, "required": True}],
    "model_inputs": ["text"],
    "model_wrong": {"rule": "label_differs"},
    "perf_metric": "accuracy",
    "validations_needed": 1,
}


class Walk:
    """One page, switched between people, that records console and page errors and saves screenshots."""

    def __init__(self, page, client, live_server):
        self.page, self.client, self.live_server = page, client, live_server
        self.errors: list[str] = []
        self.refusals: set[str] = set()  # the console lines of the refusals the walk provokes on purpose
        page.on("console", lambda m: self.errors.append(f"console {m.location.get('url')}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda error: self.errors.append(f"pageerror {page.url}: {error}"))

    def expect_refusal(self, path: str, status: int) -> None:
        """The next answer of ``path`` is a refusal with ``status`` by design (a form shown again with
        its problems); Chromium logs every 4xx as a console error, so that one is not counted."""
        self.refusals.add(f"{self.live_server.url}{path}: Failed to load resource: the server responded with a status of {status}")

    def as_user(self, user):
        self.page.context.clear_cookies()
        log_in(self.page, self.client, user, self.live_server)
        return self.page

    def step(self, name):
        """Screenshot the page (``save_screenshot``); fail if the browser logged an error so far."""
        save_screenshot(self.page, f"walk33-{name}")
        for refusal in list(self.refusals):  # each expected refusal excuses one console line
            logged = next((e for e in self.errors if e.startswith("console " + refusal)), None)
            if logged is not None:
                self.errors.remove(logged)
                self.refusals.discard(refusal)
        assert self.errors == [], f"{name}: the browser logged errors: {self.errors}"


def _archive(directory: Path, path: Path) -> Path:
    """``path``: a .tar.gz of the files of the model ``directory``, as a researcher packs ``save_pretrained()``'s folder."""
    with tarfile.open(path, "w:gz") as archive:
        for file in sorted(Path(directory).rglob("*")):
            if file.is_file():
                archive.add(file, arcname=str(file.relative_to(directory)))
    return path


def _write(page, code, text, label) -> dict:
    """Write one example on the task's write page; return what the page says about it."""
    page.goto(f"/tasks/{code}/write/")
    page.locator("#workspace [name=text]").fill(text)
    page.check(f"input[name=label][value={label}]")
    page.click("#workspace button[type=submit]")
    page.locator("#workspace .outcome").wait_for()
    workspace = page.locator("#workspace")
    return {"id": int(workspace.get_attribute("data-example-id")), "fooled": workspace.get_attribute("data-model-wrong") == "true",
            "model_label": page.locator("[data-model-label]").inner_text(),
            "loop": page.locator("#workspace p", has_text="Model in the loop:").inner_text()}


def test_proposal_to_badge(page, client, live_server, researcher, annotator, validator, admin_user, tiny_classifier_dir, tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MODELS_DIR = tmp_path / "models"
    settings.ARTEFACT_CACHE_DIR = tmp_path / "artefact-cache"
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 0
    broken, good = tmp_path / "broken.json", tmp_path / "movie-moods.json"
    broken.write_text(json.dumps({"config": {**CONFIG, "perf_metric": "vibes"}}, indent=2))
    good.write_text(json.dumps({"config": CONFIG, "contexts": [{"uid": "s1", "data": {"scene": "The hero walks into the rain."}}]}, indent=2))
    walk = Walk(page, client, live_server)
    try:
        _walk(walk, page, researcher, annotator, validator, admin_user, tiny_classifier_dir, tmp_path, broken, good)
    except BaseException:
        page.screenshot(path="/tmp/walk33-last.png", full_page=True)  # where the failed walk stopped
        raise


def _walk(walk, page, researcher, annotator, validator, admin_user, tiny_classifier_dir, tmp_path, broken, good):

    # 1. The researcher proposes the task; the broken file is refused with its line.
    walk.as_user(researcher)
    page.goto("/")
    page.locator(".topbar").get_by_role("link", name="Proposals").click()
    page.get_by_role("link", name="Propose a task").click()
    form = page.locator("#proposal-form")
    form.locator("input[name=code]").fill("movie-moods")
    form.locator("input[name=name]").fill("Movie moods <b>bold</b>")
    form.locator("select[name=kind]").select_option("classification")
    form.locator("input[name=labels]").fill(", ".join(LABELS))
    form.locator("textarea[name=instructions]").fill("Write a line about the scene that **fools** the model. <script>alert(1)</script>")
    form.locator("input[name=license]").fill("CC-BY-4.0")
    form.locator("input[name=definition]").set_input_files(str(broken))
    walk.expect_refusal("/proposals/new/", 400)
    form.locator("button[type=submit]").click()
    problem = page.locator("#errors-definition").inner_text()
    walk.step("1-proposal-refused-by-line")
    line = next(n for n, text in enumerate(broken.read_text().splitlines(), start=1) if '"perf_metric"' in text)
    assert f"line {line}: config.perf_metric" in problem and problem.count("'accuracy'") == 1  # each choice named once
    page.locator("input[name=definition]").set_input_files(str(good))
    page.locator("#proposal-form button[type=submit]").click()
    page.locator("#proposal-status").wait_for()
    walk.step("2-proposal-waiting")
    assert page.locator("#proposal-status").inner_text() == "Waiting for review"
    assert "Movie moods <b>bold</b>" in page.locator("h1").inner_text()  # shown as text, not markup

    # 2. The admin approves it from the review queue; the researcher, now the owner, is told.
    walk.as_user(admin_user)
    page.goto("/proposals/")
    page.get_by_role("link", name="Review queue").click()
    walk.step("3-review-queue")
    page.locator("#review-queue button[value=approve]").click()
    page.get_by_text("Nothing waits for review.").wait_for()
    task = Task.objects.get(code="movie-moods")
    assert TaskProposal.objects.get().task == task and task.is_owner(researcher)
    run_worker()  # the proposer's notification
    walk.as_user(researcher)
    page.goto("/")
    assert page.locator("#notification-bell").get_attribute("aria-label") == "Notifications: 1 unread"
    page.goto("/proposals/")
    assert page.locator("#my-proposals .proposal-status").inner_text() == "Approved"
    walk.step("4-my-proposals")

    # 3. The owner submits a model archive, then opens round 1 for writing with it in the loop.
    page.goto(f"/tasks/{task.code}/")
    page.get_by_role("link", name="Submit a model").click()
    page.check("input[name=kind][value=archive]")
    page.fill("input[name=name]", "tiny-moods")
    page.set_input_files("input[name=upload]", str(_archive(tiny_classifier_dir, tmp_path / "tiny-moods.tar.gz")))
    page.get_by_role("button", name="Submit").click()
    page.wait_for_url("**/models/*/")
    walk.step("5-model-unpacking")
    run_worker()  # unpacks the archive (and checks its labels)
    model = MLModel.objects.get(task=task, name="tiny-moods")
    assert model.owner == researcher and model.kind == MLModel.Kind.HF_DIRECTORY
    assert model.status != MLModel.Status.FAILED, model.failure_reason
    page.reload()  # the model page: not failed for want of a dataset on a task that is one approval old
    assert page.locator("#model-state").inner_text() == "Uploaded" and page.locator("#model-no-dataset").count() == 1
    walk.step("5-model-unpacked")
    page.goto("/proposals/")
    page.get_by_role("link", name="Open the console").click()
    page.locator(".tabs").get_by_role("link", name="Rounds").click()
    assert "No model in the loop" in page.locator("[data-loop='1'] [data-round-gaps]").inner_text()
    walk.step("6-round1-lacks-a-model")
    add = page.locator("[data-loop='1'] form[data-add-loop-model]")
    add.locator("select[name=model]").select_option(add.locator("option", has_text="tiny-moods").get_attribute("value"))
    add.locator("button[type=submit]").click()
    page.get_by_text("tiny-moods is now in the loop of round 1.").wait_for()
    assert page.locator("[data-round-gaps]").count() == 0
    assert "tiny-moods" in page.locator("[data-rounds] tr[data-round='1']").inner_text()
    walk.step("7-round1-open-with-model")

    # 4. The annotator writes until the model is fooled.
    walk.as_user(annotator)
    text = "Rain again, how lovely."
    written = _write(page, task.code, text, LABELS[0])
    walk.step("8-written")
    if not written["fooled"]:  # the model got it right: same line, another label
        written = _write(page, task.code, text, next(label for label in LABELS if label != written["model_label"]))
        walk.step("8-written-again")
    assert written["fooled"]

    # 5. A validator validates it in the review queue.
    walk.as_user(validator)
    page.goto(f"/tasks/{task.code}/validate/")
    page.locator(f"#review [data-example-id='{written['id']}']").wait_for()
    walk.step("9-validate")
    page.check("input[name=label][value=correct]")
    page.click("#review-form button[type=submit]")
    page.get_by_text("Saved: correct").wait_for()
    run_worker()  # the validation's notification, and the badges it brings

    # 6. The annotator's bell: the validation and the badge; the badge on their page and in the round's list.
    walk.as_user(annotator)
    page.goto("/")
    bell = page.locator("#notification-bell")
    unread = int(page.locator("#unread-count").inner_text())
    assert unread >= 2 and bell.get_attribute("aria-label") == f"Notifications: {unread} unread"
    walk.step("10-bell")
    assert serious_axe_violations(page) == []
    # axe leaves the one-digit count "incomplete" (too short to judge): its contrast, measured (WCAG AA, 4.5:1).
    assert contrast_ratio(page, "#unread-count") >= 4.5
    bell.click()
    page.get_by_role("heading", name="Notifications").wait_for()
    listing = page.locator("#notification-list").inner_text()
    assert f"Your example #{written['id']} on Movie moods" in listing and "validated as correct" in listing
    assert "You earned a badge: Model fooler" in listing
    page.get_by_role("button", name="Mark read").first.click()
    page.locator(f"#notification-list [data-unread='{unread - 1}']").wait_for()
    assert bell.get_attribute("aria-label") == f"Notifications: {unread - 1} unread"  # the bell follows the list (HTMX, out of band)
    assert page.locator("#unread-count").inner_text() == str(unread - 1)
    walk.step("11-notifications")
    page.goto(f"/users/{annotator.username}/")
    assert "Model fooler" in page.locator("#badges").inner_text()
    walk.step("12-user-page")
    page.goto(f"/tasks/{task.code}/rounds/1/")
    assert page.locator(f"#annotators [data-annotator={annotator.username}] [data-badge=first_fooled]").count() == 1
    walk.step("13-round-annotators")

    # 7. The owner closes round 1 from the console (its one validated example goes to train: the
    # small scoring splits merge) and opens round 2 in the same step, with the same model in its
    # loop; the annotator, who worked on the task, is told and writes in round 2.
    walk.as_user(researcher)
    page.goto(f"/tasks/{task.code}/console/rounds/")
    page.get_by_role("link", name="Close round…").click()
    page.locator("#close-form").wait_for()
    walk.step("14-close-preview")
    page.check("#close-form input[name=merge_small]")
    page.check("#close-form input[name=open_next]")
    page.check("#close-form input[name=confirm]")
    page.click("#close-form button[name=action][value=close]")
    page.get_by_text("Round 1 is closed.").wait_for()
    round2 = page.locator("[data-rounds] tr[data-round='2']")
    assert "Open" in round2.inner_text() and "tiny-moods" in round2.inner_text()
    assert page.locator("[data-round-gaps]").count() == 0  # round 2 carries round 1's contexts over
    walk.step("15-round2-open")
    run_worker()  # the rounds' notifications
    walk.as_user(annotator)
    page.locator("#notification-bell").click()
    listing = page.locator("#notification-list").inner_text()
    assert f"Round 2 of {task.name} is open" in listing and f"Round 1 of {task.name}, which you worked on, is closed" in listing
    walk.step("16-annotator-told")
    assert _write(page, task.code, "The rain never stops, and I love it.", LABELS[1])["loop"] == "Model in the loop: tiny-moods · round 2"
    walk.step("17-written-in-round2")
