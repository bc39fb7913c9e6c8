"""The console's pages fit a phone: at 390 px (and at 1280 px) no page scrolls sideways (tables
become one card per row) and the browser logs no error (no CSP violation, no 404 such as a
missing favicon). With ``DYNABENCH_SCREENSHOTS=<folder>`` each page is saved at each size there
as ``console-<page>-<width>x<height>.png`` (``docs/screenshots/`` holds the committed ones)."""

import os
from pathlib import Path

import pytest

from tests.browser_support import DESKTOP, PHONE, browser_only, horizontal_overflow, log_in

pytestmark = browser_only

PAGES = [
    ("home", "/console/"),
    ("settings", "/tasks/sentiment/console/"),
    ("rounds", "/tasks/sentiment/console/rounds/"),
    ("close-round", "/tasks/sentiment/console/rounds/1/close"),
    ("uploads", "/tasks/sentiment/console/uploads/"),
    ("people", "/tasks/sentiment/console/people/"),
    ("person", "/tasks/sentiment/console/people/annie/"),
    ("dashboard", "/tasks/sentiment/console/dashboard/"),
]
SIZES = {"phone": PHONE, "desktop": DESKTOP}


@pytest.fixture
def owned_site(sentiment_task, tiny_classifier_dir, annotator, owner):
    """Sentiment with a model in the loop and examples in every state, so every table has rows."""
    from annotation.tests.conftest import put_in_loop
    from validation.tests.conftest import make_example

    put_in_loop(sentiment_task, tiny_classifier_dir, "tiny-sentiment")
    make_example(sentiment_task, annotator, validation_state="verified_correct")
    make_example(sentiment_task, annotator)
    make_example(sentiment_task, annotator, model_wrong=False)
    return sentiment_task


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(("name", "path"), PAGES, ids=[p[0] for p in PAGES])
def test_a_console_page_fits_without_errors(page, client, live_server, owner, owned_site, name, path, size):
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.set_viewport_size(SIZES[size])
    log_in(page, client, owner, live_server)

    response = page.goto(path)

    assert response.status == 200
    page.wait_for_load_state("networkidle")
    assert horizontal_overflow(page) == 0
    assert errors == []
    folder = os.environ.get("DYNABENCH_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        viewport = SIZES[size]
        page.screenshot(path=str(Path(folder) / f"console-{name}-{viewport['width']}x{viewport['height']}.png"), full_page=True)
