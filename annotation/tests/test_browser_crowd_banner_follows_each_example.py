"""A paid-crowd worker's study banner on the create page counts each example as it is written
(sent out of band with the model's answer), instead of staying at "0 of 2 done" until a reload."""

import pytest

from annotation.models import CrowdSession, CrowdStudy, CrowdWorker
from annotation.tests.conftest import put_in_loop
from tests.browser_support import browser_only, log_in

pytestmark = browser_only


@pytest.fixture
def crowd_annotator(annotator, sentiment_task, tiny_classifier_dir):
    put_in_loop(sentiment_task, tiny_classifier_dir, "tiny-sentiment")
    study = CrowdStudy.objects.create(round=sentiment_task.current_round(), platform="prolific", required=2, completion_code="DONE42")
    worker = CrowdWorker.objects.create(user=annotator, platform="prolific", platform_worker_id="5f1a2b3c4d5e6f7a8b9c0d1e")
    CrowdSession.objects.create(study=study, worker=worker)
    return annotator


def test_the_banner_counts_each_example_without_a_reload(page, client, live_server, crowd_annotator):
    errors = []  # a CSP violation (an inline style from htmx, say) is logged as an error
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    log_in(page, client, crowd_annotator, live_server)
    page.goto("/tasks/sentiment/write/")
    assert "0 of 2 examples done" in page.inner_text("#crowd-banner")

    page.fill("textarea[name=text]", "The room was clean, the staff kind.")
    page.check("input[name=label][value=positive]")
    page.click("#workspace button[type=submit]")

    page.locator("#crowd-banner[data-crowd-progress='1']").wait_for()
    assert "1 of 2 examples done" in page.inner_text("#crowd-banner")
    assert errors == []
