"""An audio classification task on a phone (390 px) in Chromium: an annotator records a spoken command
through the microphone (Chromium's fake one), picks the label, and the tiny audio classifier in the
loop answers with its label and probabilities; the annotator also uploads a file; "My examples"
plays both. On the desktop (1280 px) a validator plays the clip with the p key. No page logs a
browser console error or scrolls sideways, and axe-core finds no serious violation on the write
page or the queue."""

import pytest
from django.core.management import call_command

from annotation.models import Example
from leaderboard.services import register_model_directory
from tasks.models import ContextAudio, Task
from tasks.data.audio import ingest_audio
from tests.audio_support import COMMANDS, DEFINITIONS, build_tiny_audio_classifier, clip_file
from tests.browser.audio_steps import clip_path, fits, play_and_pause_with_p, record_clip, upload_clip, user
from tests.browser_support import PHONE, browser_only, console_errors, log_in, microphone_page, save_screenshot, serious_axe_violations

pytestmark = [*browser_only, pytest.mark.usefixtures("whole_round"), pytest.mark.django_db(transaction=True)]


def _label(page, label: str) -> None:
    page.check(f"#workspace input[name=label][value={label}]")
    page.click("#workspace .actions button[type=submit]")
    page.locator("#outcome").wait_for()


def test_an_annotator_records_a_spoken_command_on_a_phone(page, browser, client, live_server, tmp_path):
    from dynabench.roles import ensure_role_groups

    ensure_role_groups()
    owner, annotator, validator = user("oona"), user("ari", "annotator"), user("vera", "validator")
    call_command("create_task", str(DEFINITIONS / "spoken-commands.json"))
    task = Task.objects.get(code="spoken-commands")
    task.owners.add(owner)
    task.config = {**task.config, "validate_non_fooling": True}  # the queue has the example whatever the random model said
    task.save()
    model = register_model_directory(actor=owner, task=task, name="tiny-commands", published=True,
                                     path=build_tiny_audio_classifier(tmp_path / "cls", COMMANDS))
    task.rounds.get(number=1).target_models.add(model)
    ingest_audio(task=task, acting_user=owner, files=[clip_file("owner.wav", freq=300)], round_number=1)

    with microphone_page(browser, live_server, clip_path(tmp_path, "microphone.wav", 500.0, seconds=4), viewport=PHONE) as phone:
        errors = console_errors(phone)
        log_in(phone, client, annotator, live_server)
        phone.goto(f"/tasks/{task.code}/write/")
        phone.locator("[data-audio-upload] [data-record]").wait_for()
        fits(phone)
        assert serious_axe_violations(phone) == []
        recorded = record_clip(phone, screenshot=lambda: save_screenshot(phone, "audio-recorded-390x844"))
        fits(phone)
        _label(phone, "stop")
        example = Example.objects.get(round__task=task)
        assert example.input["clip"] == recorded and example.model_output["label"] in COMMANDS
        assert phone.locator("#outcome").inner_text() == ("You fooled the model!" if example.model_wrong else "The model got it right.")
        assert phone.locator("[data-your-label]").inner_text() == "stop"
        assert phone.locator("[data-model-label]").inner_text() == example.model_output["label"]
        assert phone.locator("#workspace .bars [role=meter]").count() == len(COMMANDS)
        fits(phone)

        phone.goto(f"/tasks/{task.code}/write/")
        uploaded = upload_clip(phone, clip_path(tmp_path, "go.wav", 700.0, seconds=1.0, rate=16000))
        _label(phone, "go")
        assert {c.uploaded_by for c in ContextAudio.objects.filter(sha256__in=[recorded, uploaded])} == {annotator}
        phone.goto("/my/examples/")
        assert phone.locator("#my-examples [data-context-audio] audio").count() == 2
        fits(phone)
        assert errors == []

    errors = console_errors(page)
    log_in(page, client, validator, live_server)
    page.goto(f"/tasks/{task.code}/validate/")
    play_and_pause_with_p(page)
    fits(page)
    assert serious_axe_violations(page) == []
    save_screenshot(page, "audio-validation")
    assert errors == []
