"""After an answer on a speech-recognition write page, a long transcript with no space in it (the
annotator's, and the model's answer beside it) wraps inside the page at 390 px: the page does not
scroll sideways (its scrollWidth equals its clientWidth), as the validation page already wraps it."""

import pytest

from annotation.tests.conftest import put_in_loop
from tasks.data.audio import ingest_audio
from tests.audio_support import audio_task, build_tiny_ctc, clip_file
from tests.browser.audio_steps import user
from tests.browser_support import PHONE, browser_only, fresh_page, save_screenshot, start_over

pytestmark = [*browser_only, pytest.mark.usefixtures("whole_round"), pytest.mark.django_db(transaction=True)]

UNBROKEN = "turnonthelightsinthekitchen" * 12


def test_the_page_does_not_widen_after_the_answer(browser, client, live_server, tmp_path):
    owner, annotator = user("oona"), user("ari", "annotator")
    task = audio_task(owner, "spoken-sentences")
    put_in_loop(task, build_tiny_ctc(tmp_path / "ctc"), "tiny-ctc")
    ingest_audio(task=task, acting_user=owner, files=[clip_file("owner.wav", freq=500)], round_number=1)

    with fresh_page(browser, live_server, PHONE) as page:
        start_over(page, client, annotator, live_server)
        page.goto(f"/tasks/{task.code}/write/")
        page.fill("#workspace textarea[name=transcript]", UNBROKEN)
        page.click("#workspace .actions button[type=submit]")
        page.locator("#outcome").wait_for()
        page.locator("[data-answer-reference]").wait_for()
        save_screenshot(page, "long-transcript-390x844")

        widths = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")

    assert widths[0] == widths[1], f"the page is {widths[0]} px wide in a {widths[1]} px window"
