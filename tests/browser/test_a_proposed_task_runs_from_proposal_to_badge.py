"""Issue 33's open community in Chromium, as new users would do it: a researcher proposes a task from
the form (a broken definition first: its problem is shown by line), an admin approves it in the review
queue, the researcher, now its owner and notified, puts a model in the loop of the task's round 1 on
the console; an annotator's example fools the model, the owner validates it, and the annotator's bell
brings the validation and the badge, which also shows on their page and in the round's annotators list.

Screenshots go to ``$DYNABENCH_SCREENSHOTS`` (a folder) when it is set."""

import json
import os
from pathlib import Path

import pytest

from annotation.services import create_example
from community.models import TaskProposal
from tasks.models import MLModel, Task
from tests.api.conftest import run_worker
from tests.browser_support import browser_only, log_in
from validation.services import record_validation

pytestmark = [*browser_only, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = os.environ.get("DYNABENCH_SCREENSHOTS")
CONFIG = {
    "context_fields": [{"name": "scene", "label": "A film scene"}],
    "input_fields": [{"name": "text", "label": "Your review line", "max_length": 300, "required": True}],
    "model_inputs": ["text"],
    "model_wrong": {"rule": "label_differs"},
    "perf_metric": "accuracy",
    "validations_needed": 1,
}


def _shot(page, name):
    if SCREENSHOTS:
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"), full_page=True)


def _switch(page, client, user, live_server):
    page.context.clear_cookies()
    log_in(page, client, user, live_server)


def test_proposal_to_badge(page, client, live_server, researcher, annotator, admin_user, tiny_classifier_dir, tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 0
    broken, good = tmp_path / "broken.json", tmp_path / "movie-moods.json"
    broken.write_text(json.dumps({"config": {**CONFIG, "perf_metric": "vibes"}}, indent=2))
    good.write_text(json.dumps({"config": CONFIG, "contexts": [{"uid": "s1", "data": {"scene": "The hero walks into the rain."}}]}, indent=2))

    # The researcher proposes the task; the broken file is refused with its line.
    log_in(page, client, researcher, live_server)
    page.goto("/proposals/new/")
    form = page.locator("#proposal-form")
    form.locator("input[name=code]").fill("movie-moods")
    form.locator("input[name=name]").fill("Movie moods <b>bold</b>")
    form.locator("select[name=kind]").select_option("classification")
    form.locator("input[name=labels]").fill("positive, negative, neutral")
    form.locator("textarea[name=instructions]").fill("Write a line about the scene that **fools** the model. <script>alert(1)</script>")
    form.locator("input[name=license]").fill("CC-BY-4.0")
    form.locator("input[name=definition]").set_input_files(str(broken))
    form.locator("button[type=submit]").click()
    problem = page.locator("#errors-definition").inner_text()
    _shot(page, "proposal-refused-by-line")
    line = next(n for n, text in enumerate(broken.read_text().splitlines(), start=1) if '"perf_metric"' in text)
    assert f"line {line}: config.perf_metric" in problem
    page.locator("input[name=definition]").set_input_files(str(good))
    page.locator("#proposal-form button[type=submit]").click()
    page.locator("#proposal-status").wait_for()
    _shot(page, "proposal-waiting")
    assert page.locator("#proposal-status").inner_text() == "Waiting for review"
    assert "Movie moods <b>bold</b>" in page.locator("h1").inner_text()  # shown as text, not markup

    # The admin approves it from the review queue.
    _switch(page, client, admin_user, live_server)
    page.goto("/proposals/review/")
    _shot(page, "proposal-review-queue")
    page.locator("#review-queue button[value=approve]").click()
    page.get_by_text("Nothing waits for review.").wait_for()
    task = Task.objects.get(code="movie-moods")
    assert TaskProposal.objects.get().task == task and task.is_owner(researcher)
    run_worker()  # the proposer's notification

    # The researcher, now the owner, is told, and puts a model in round 1's loop on the console.
    MLModel.objects.create(task=task, owner=researcher, name="tiny-moods", kind=MLModel.Kind.HF_DIRECTORY, path=str(tiny_classifier_dir))
    _switch(page, client, researcher, live_server)
    page.goto("/")
    assert page.locator("#notification-bell").get_attribute("aria-label") == "Notifications: 1 unread"
    page.goto("/proposals/")
    assert page.locator("#my-proposals .proposal-status").inner_text() == "Approved"
    page.goto(f"/tasks/{task.code}/console/rounds/")
    page.locator("form[data-add-loop-model] button[type=submit]").click()
    page.wait_for_load_state()
    _shot(page, "proposal-owner-rounds")
    round1 = task.rounds.get(number=1)
    assert round1.status == "open" and list(round1.target_models.values_list("name", flat=True)) == ["tiny-moods"]

    # The annotator writes until the model is fooled; the owner validates that example.
    context = round1.contexts.get()
    first = create_example(user=annotator, context=context, input={"text": "Rain again, how lovely."}, target={"label": "positive"})
    fooled = first if first.model_wrong else create_example(
        user=annotator, context=context, input={"text": "Rain again, how lovely."},
        target={"label": next(label for label in ("positive", "negative", "neutral") if label != first.model_output["label"])},
    )
    assert fooled.model_wrong
    record_validation(example=fooled, validator=researcher, label="correct", mode="owner")
    run_worker()  # the validation's notification, and the badges it brings

    # The annotator's bell: the validation and the badge; the badge on their page and in the round's list.
    _switch(page, client, annotator, live_server)
    page.goto("/notifications/")
    listing = page.locator("#notification-list").inner_text()
    _shot(page, "proposal-annotator-notifications")
    assert f"Your example #{fooled.pk} on Movie moods" in listing and "validated as correct" in listing
    assert "You earned a badge: Model fooler" in listing
    page.goto(f"/users/{annotator.username}/")
    assert "Model fooler" in page.locator("#badges").inner_text()
    page.goto(f"/tasks/{task.code}/rounds/1/")
    _shot(page, "proposal-round-annotators")
    assert page.locator(f"#annotators [data-annotator={annotator.username}] [data-badge=first_fooled]").count() == 1
