"""A speech recognition round in Chromium, as new users would do it: the owner uploads clips on the
console's audio page and puts a tiny CTC model in the loop; an annotator records a clip through the
microphone (Chromium's fake one, playing a tone), uploads a file as a second clip, and writes what
each clip says, and what two of the owner's clips say: the model answers each with its transcript
and its word error rate against the annotator's; a validator on a phone (390 px) plays each clip with
the p key and confirms it; the owner closes the round into datasets; the evaluation jobs the close
queued run, and the leaderboard ranks two models by word error rate. No page logs a browser console
error or scrolls sideways. With ``DYNABENCH_SCREENSHOTS=<folder>`` it saves the docs' pictures
(``audio-*.png``)."""

import pytest
import soundfile
from django.core.management import call_command
from django.core.files.storage import default_storage

from annotation.models import Example
from leaderboard.models import EvaluationRun
from leaderboard.services import register_model_directory
from tasks.data.audio_files import model_name
from tasks.models import Context, ContextAudio, Dataset, Task
from tests.audio_support import DEFINITIONS, build_tiny_ctc
from tests.browser.audio_steps import clip_path, dominant_hz, fits, play_and_pause_with_p, record_clip, upload_clip, user
from tests.browser_support import (PHONE, browser_only, console_errors, fresh_page, log_in, microphone_page, run_queued_jobs,
                                    save_screenshot)

pytestmark = [*browser_only, pytest.mark.usefixtures("whole_round"), pytest.mark.slow, pytest.mark.django_db(transaction=True)]

MIC_HZ, FILE_HZ = 660.0, 880.0
TRANSCRIPTS = ["turn on 2 lights", "open the door", "stop right there", "go left now"]


def _write(page, transcript: str) -> None:
    page.fill("#workspace textarea[name=transcript]", transcript)
    page.click("#workspace .actions button[type=submit]")
    page.locator("#outcome").wait_for()


def test_a_speech_round_from_a_recording_to_the_leaderboard(page, browser, client, live_server, tmp_path):
    from dynabench.roles import ensure_role_groups

    ensure_role_groups()
    owner, annotator, validator, researcher = user("oona"), user("ari", "annotator"), user("vera", "validator"), user("rita", "researcher")
    call_command("create_task", str(DEFINITIONS / "spoken-sentences.json"))
    task = Task.objects.get(code="spoken-sentences")
    task.owners.add(owner)
    task.config = {**task.config, "validations_needed": 1, "split_ratios": {"train": 0.5, "dev": 0.25, "test": 0.25}}
    task.save()
    in_loop = register_model_directory(actor=owner, task=task, name="ctc-loop", published=True,
                                       path=build_tiny_ctc(tmp_path / "ctc-loop", seed=1))
    register_model_directory(actor=owner, owner=researcher, task=task, name="ctc-other", published=True,
                             path=build_tiny_ctc(tmp_path / "ctc-other", seed=2))
    errors = console_errors(page)

    # 1. The owner uploads three clips on the console's audio page and puts the model in the loop.
    log_in(page, client, owner, live_server)
    page.goto(f"/tasks/{task.code}/console/audio/")
    page.set_input_files("input[name=files]", [str(clip_path(tmp_path, f"owner-{n}.flac", 300 + 100 * n)) for n in range(3)])
    page.click("[data-audio-upload-form] button[type=submit]")
    page.locator(".clip-list audio").first.wait_for()
    assert "3 audio context(s) added" in page.content() and page.locator(".clip-list audio").count() == 3
    page.goto(f"/tasks/{task.code}/console/rounds/")
    form = page.locator("form[data-add-loop-model]")
    form.locator("select[name=model]").select_option(str(in_loop.pk))
    form.locator("button[type=submit]").click()
    page.wait_for_selector(f"[data-loop-model='{in_loop.pk}']")

    # 2. The annotator records a clip through the microphone, then uploads a file; the model answers each.
    with microphone_page(browser, live_server, clip_path(tmp_path, "microphone.wav", MIC_HZ, seconds=4)) as mic:
        mic_errors = console_errors(mic)
        log_in(mic, client, annotator, live_server)
        mic.goto(f"/tasks/{task.code}/write/")
        mic.locator("[data-audio-upload] [data-record]").wait_for()
        assert "asks whether this site may use your microphone" in mic.locator("#record-consent").inner_text()
        save_screenshot(mic, "audio-create-recorder")
        recorded = record_clip(mic, screenshot=lambda: save_screenshot(mic, "audio-recorded"))
        clip = ContextAudio.objects.get(task=task, sha256=recorded)
        assert clip.uploaded_by == annotator and clip.duration_s >= 1.0
        assert Context.objects.get(round__task=task, uid=recorded).tag == "annotator-upload"
        samples, rate = soundfile.read(default_storage.open(model_name(recorded)))
        assert abs(dominant_hz(samples, rate) - MIC_HZ) < 15  # what the microphone heard, through WebM/Opus and the page's WAV
        fits(mic)
        _write(mic, TRANSCRIPTS[0])
        assert mic.locator("#outcome").inner_text() == "You fooled the model!"
        assert "Word error rate of the model's transcript against yours" in mic.locator("[data-answer-wer]").inner_text()
        assert mic.locator("#workspace [data-context-audio]").get_attribute("data-context-audio") == recorded
        save_screenshot(mic, "audio-model-answer")

        mic.goto(f"/tasks/{task.code}/write/")
        uploaded = upload_clip(mic, clip_path(tmp_path, "my-file.flac", FILE_HZ, seconds=1.5))
        assert ContextAudio.objects.get(task=task, sha256=uploaded).original_name == "my-file.flac"
        _write(mic, TRANSCRIPTS[1])
        for transcript in TRANSCRIPTS[2:]:  # two of the owner's clips
            mic.goto(f"/tasks/{task.code}/write/")
            mic.locator("#workspace [data-context-audio] audio").wait_for()
            _write(mic, transcript)
        mic.goto("/my/examples/")
        assert mic.locator("#my-examples [data-context-audio] audio").count() == len(TRANSCRIPTS)
        assert mic_errors == []
    examples = list(Example.objects.filter(round__task=task))
    assert sorted(e.target["transcripts"][0] for e in examples) == sorted(TRANSCRIPTS)
    assert all(e.model_wrong for e in examples)  # a random model's characters are not these words

    # 3. A validator on a phone plays each clip with the p key and confirms it.
    with fresh_page(browser, live_server, PHONE) as phone:
        phone_errors = console_errors(phone)
        log_in(phone, client, validator, live_server)
        phone.goto(f"/tasks/{task.code}/validate/")
        for n in range(len(TRANSCRIPTS)):
            card = phone.locator("#review [data-example-id]")
            card.wait_for()
            example_id = card.get_attribute("data-example-id")
            play_and_pause_with_p(phone)
            if n == 0:
                assert "play or pause" in phone.locator("[data-play-key-hint]").inner_text()
                fits(phone)
                save_screenshot(phone, "audio-validation-390x844")
            phone.keyboard.press("1")
            phone.keyboard.press("Enter")
            phone.wait_for_function(
                "id => !document.querySelector('[data-example-id]') || document.querySelector('[data-example-id]').dataset.exampleId !== id",
                arg=example_id,
            )
        phone.wait_for_selector("text=Nothing left to validate")
        assert phone_errors == []
    assert Example.objects.filter(round__task=task, validation_state="verified_correct").count() == len(TRANSCRIPTS)

    # 4. The owner closes the round into datasets.
    page.context.clear_cookies()  # each log-in through the test client ended the one before
    log_in(page, client, owner, live_server)
    page.goto(f"/tasks/{task.code}/console/rounds/1/close")
    page.check("input[name=confirm]")
    page.click("button[name=action][value=close]")
    page.wait_for_selector("text=Round 1 is closed")
    datasets = Dataset.objects.filter(task=task, round__number=1)
    assert sum(d.items.count() for d in datasets) == len(TRANSCRIPTS) and {d.split for d in datasets} >= {"dev", "test"}

    # 5. The evaluations the close queued run; the leaderboard ranks both models, the lower WER first.
    run_queued_jobs()
    scoring = datasets.filter(access="scoring")
    runs = EvaluationRun.objects.filter(dataset__in=scoring, status="done")
    assert {r.model.name for r in runs} == {"ctc-loop", "ctc-other"}, list(EvaluationRun.objects.values("model__name", "status", "error"))
    assert all(r.metrics["wer"] >= 0 and r.metrics["cer"] >= 0 for r in runs)
    page.context.clear_cookies()
    log_in(page, client, researcher, live_server)
    for viewport in ({"width": 1280, "height": 800}, PHONE):
        page.set_viewport_size(viewport)
        page.goto(f"/tasks/{task.code}/leaderboard/")
        rows = page.locator("table.leaderboard tbody tr")
        rows.first.wait_for()
        assert rows.count() == 2
        names = [next(name for name in ("ctc-loop", "ctc-other") if name in rows.nth(i).inner_text()) for i in range(2)]
        wer = {name: sum(r.metrics["wer"] for r in runs if r.model.name == name) for name in names}
        assert wer[names[0]] <= wer[names[1]], (names, wer)
        assert rows.nth(0).inner_text().split()[0] == "1"
        fits(page)
    save_screenshot(page, "audio-leaderboard-390x844")
    assert errors == []
