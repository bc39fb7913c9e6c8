"""An audio round in Chromium, for each audio kind (speech recognition, audio classification) on the
desktop (1280 px) and on a phone (390 px), every page at that width: the owner uploads clips on the
console's audio page and puts a tiny model in the loop; an annotator records a clip through the
microphone (Chromium's fake one, playing a tone), uploads a file as a second clip, and gives the
transcript or label of each and of two of the owner's clips: the model answers each (its transcript
and word error rate, or its label and probabilities); a validator plays each clip on the queue with
the p key and confirms it; the owner closes the round into datasets; the evaluation jobs the close
queued run, and the leaderboard ranks two tiny models by the task's metric. No page logs a browser
console error or scrolls sideways, and axe-core finds no serious violation on the write page or the
queue. With ``DYNABENCH_SCREENSHOTS=<folder>`` the speech runs save the pictures of the docs' Audio
tasks page (``DOCS_SCREENSHOTS``)."""

import functools
from dataclasses import dataclass
from typing import Callable

import pytest
import soundfile
from django.core.files.storage import default_storage
from django.core.management import call_command

from annotation.models import Example
from leaderboard.models import EvaluationRun
from leaderboard.services import register_model_directory
from tasks.data.audio_files import model_name
from tasks.models import Context, ContextAudio, Dataset, Task
from tests.audio_support import COMMANDS, DEFINITIONS, build_tiny_audio_classifier, build_tiny_ctc
from tests.browser.audio_steps import clip_path, dominant_hz, fits, play_and_pause_with_p, record_clip, upload_clip, user
from tests.browser_support import (DESKTOP, PHONE, browser_only, console_errors, fresh_page, microphone_page, run_queued_jobs,
                                    save_screenshot, serious_axe_violations, start_over)

pytestmark = [*browser_only, pytest.mark.usefixtures("whole_round"), pytest.mark.slow, pytest.mark.django_db(transaction=True)]

MIC_HZ, FILE_HZ = 660.0, 880.0
DOCS_SCREENSHOTS = {"audio-create-recorder", "audio-model-answer", "audio-validation-390x844"}
"""The pictures the docs' Audio tasks page shows, saved by the speech runs: each at the width its name says (none: 1280 px)."""


def _transcribe(page, transcript: str) -> None:
    page.fill("#workspace textarea[name=transcript]", transcript)


def _choose(page, label: str) -> None:
    page.check(f"#workspace input[name=label][value={label}]")


def _shows_transcript(page, example: Example, transcript: str) -> None:
    assert example.target["transcripts"] == [transcript]
    assert example.model_wrong  # a random model's characters are not these words
    assert "Word error rate of the model's transcript against yours" in page.locator("[data-answer-wer]").inner_text()


def _shows_label(page, example: Example, label: str) -> None:
    assert example.target["label"] == label and example.model_output["label"] in COMMANDS
    assert page.locator("[data-your-label]").inner_text() == label
    assert page.locator("[data-model-label]").inner_text() == example.model_output["label"]
    assert page.locator("#workspace .bars [role=meter]").count() == len(COMMANDS)


@dataclass(frozen=True)
class AudioKind:
    """What the walk does differently for one audio task kind."""

    task: str
    """The built-in task's code (``tasks/data/task_definitions/<task>.json``)."""
    answers: tuple[str, ...]
    """What the annotator gives the recorded clip, the uploaded file and two of the owner's clips."""
    give: Callable
    """``give(page, answer)``: fill in ``answer`` on the write page (the walk submits it)."""
    check: Callable
    """``check(page, example, answer)``: what the stored example and the model's answer on the page show."""
    build: Callable
    """``build(path, seed)``: save a tiny random model of the kind under ``path``; returns ``path``."""
    docs_screenshots: bool = False


KINDS = {
    "speech_recognition": AudioKind(
        "spoken-sentences", ("turn on 2 lights", "open the door", "stop right there", "go left now"), _transcribe,
        _shows_transcript, lambda path, seed: build_tiny_ctc(path, seed=seed), docs_screenshots=True,
    ),
    "audio_classification": AudioKind(
        "spoken-commands", ("stop", "go", "left", "yes"), _choose, _shows_label,
        lambda path, seed: build_tiny_audio_classifier(path, COMMANDS, seed=seed),
    ),
}


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    """``tiny_models(kind)``: the two tiny random models of ``kind`` (seeds 1 and 2), built once per
    process: the registry only reads a model directory, so every run of the walk can register them."""
    folder = tmp_path_factory.mktemp("audio-models")

    @functools.cache
    def build(kind: AudioKind) -> tuple:
        return tuple(kind.build(folder / f"{kind.task}-{seed}", seed) for seed in (1, 2))

    return build


def _docs_screenshot(page, kind: AudioKind, name: str) -> None:
    name = f"audio-{name}" + ("" if page.viewport_size == DESKTOP else f"-{PHONE['width']}x{PHONE['height']}")
    if kind.docs_screenshots and name in DOCS_SCREENSHOTS:
        save_screenshot(page, name)


def _answer(page, kind: AudioKind, answer: str) -> Example:
    """Give ``answer`` on the write page, submit, check what the model answered; return the example."""
    kind.give(page, answer)
    page.click("#workspace .actions button[type=submit]")
    page.locator("#outcome").wait_for()
    example = Example.objects.get(pk=page.get_attribute("#workspace", "data-example-id"))
    assert page.locator("#outcome").inner_text() == ("You fooled the model!" if example.model_wrong else "The model got it right.")
    assert page.get_attribute("#workspace [data-context-audio]", "data-context-audio") == example.input["clip"]
    kind.check(page, example, answer)
    return example


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280px", "390px"])
@pytest.mark.parametrize("kind", KINDS.values(), ids=KINDS.keys())
def test_an_audio_round_from_a_recording_to_the_leaderboard(kind, viewport, tiny_models, browser, client, live_server, tmp_path):
    owner, annotator, validator, researcher = user("oona"), user("ari", "annotator"), user("vera", "validator"), user("rita", "researcher")
    call_command("create_task", str(DEFINITIONS / f"{kind.task}.json"))
    task = Task.objects.get(code=kind.task)
    task.owners.add(owner)
    task.config = {**task.config, "validations_needed": 1, "validate_non_fooling": True,  # whatever the random model says
                   "split_ratios": {"train": 0.5, "dev": 0.25, "test": 0.25}}
    task.save()
    loop_path, other_path = tiny_models(kind)
    in_loop = register_model_directory(actor=owner, task=task, name="loop-model", published=True, path=loop_path)
    register_model_directory(actor=owner, owner=researcher, task=task, name="second-model", published=True, path=other_path)

    with fresh_page(browser, live_server, viewport) as page:
        errors = console_errors(page)

        # 1. The owner uploads three clips on the console's audio page and puts the model in the loop.
        start_over(page, client, owner, live_server)
        page.goto(f"/tasks/{task.code}/console/audio/")
        page.set_input_files("input[name=files]", [str(clip_path(tmp_path, f"owner-{n}.flac", 300 + 100 * n)) for n in range(3)])
        page.click("[data-audio-upload-form] button[type=submit]")
        page.locator(".clip-list audio").first.wait_for()
        assert "3 audio context(s) added" in page.content() and page.locator(".clip-list audio").count() == 3
        fits(page)
        page.goto(f"/tasks/{task.code}/console/rounds/")
        form = page.locator("form[data-add-loop-model]")
        form.locator("select[name=model]").select_option(str(in_loop.pk))
        form.locator("button[type=submit]").click()
        page.wait_for_selector(f"[data-loop-model='{in_loop.pk}']")

        # 2. The annotator records a clip through the microphone, then uploads a file; the model answers each.
        with microphone_page(browser, live_server, clip_path(tmp_path, "microphone.wav", MIC_HZ, seconds=4), viewport=viewport) as mic:
            mic_errors = console_errors(mic)
            start_over(mic, client, annotator, live_server)
            mic.goto(f"/tasks/{task.code}/write/")
            mic.locator("[data-audio-upload] [data-record]").wait_for()
            assert "asks whether this site may use your microphone" in mic.locator("#record-consent").inner_text()
            fits(mic)
            assert serious_axe_violations(mic) == []
            _docs_screenshot(mic, kind, "create-recorder")
            recorded = record_clip(mic)
            clip = ContextAudio.objects.get(task=task, sha256=recorded)
            assert clip.uploaded_by == annotator and clip.duration_s >= 1.0
            assert Context.objects.get(round__task=task, uid=recorded).tag == "annotator-upload"
            samples, rate = soundfile.read(default_storage.open(model_name(recorded)))
            assert abs(dominant_hz(samples, rate) - MIC_HZ) < 15  # what the microphone heard, through WebM/Opus and the page's WAV
            fits(mic)
            assert _answer(mic, kind, kind.answers[0]).input["clip"] == recorded
            fits(mic)
            _docs_screenshot(mic, kind, "model-answer")

            mic.goto(f"/tasks/{task.code}/write/")
            uploaded = upload_clip(mic, clip_path(tmp_path, "my-file.flac", FILE_HZ, seconds=1.5))
            assert ContextAudio.objects.get(task=task, sha256=uploaded).original_name == "my-file.flac"
            assert ContextAudio.objects.get(task=task, sha256=uploaded).uploaded_by == annotator
            assert _answer(mic, kind, kind.answers[1]).input["clip"] == uploaded
            for answer in kind.answers[2:]:  # two of the owner's clips
                mic.goto(f"/tasks/{task.code}/write/")
                mic.locator("#workspace [data-context-audio] audio").wait_for()
                _answer(mic, kind, answer)
            mic.goto("/my/examples/")
            assert mic.locator("#my-examples [data-context-audio] audio").count() == len(kind.answers)
            fits(mic)
            assert mic_errors == []
        assert Example.objects.filter(round__task=task).count() == len(kind.answers)

        # 3. A validator plays each clip with the p key and confirms it.
        with fresh_page(browser, live_server, viewport) as queue:
            queue_errors = console_errors(queue)
            start_over(queue, client, validator, live_server)
            queue.goto(f"/tasks/{task.code}/validate/")
            for n in range(len(kind.answers)):
                card = queue.locator("#review [data-example-id]")
                card.wait_for()
                example_id = card.get_attribute("data-example-id")
                play_and_pause_with_p(queue)
                if n == 0:
                    assert "play or pause" in queue.locator("[data-play-key-hint]").inner_text()
                    fits(queue)
                    _docs_screenshot(queue, kind, "validation")
                    assert serious_axe_violations(queue) == []
                queue.keyboard.press("1")
                queue.keyboard.press("Enter")
                queue.wait_for_function(
                    "id => !document.querySelector('[data-example-id]') || document.querySelector('[data-example-id]').dataset.exampleId !== id",
                    arg=example_id,
                )
            queue.wait_for_selector("text=Nothing left to validate")
            assert queue_errors == []
        assert Example.objects.filter(round__task=task, validation_state="verified_correct").count() == len(kind.answers)

        # 4. The owner closes the round into datasets.
        start_over(page, client, owner, live_server)  # each log-in through the test client ended the one before
        page.goto(f"/tasks/{task.code}/console/rounds/1/close")
        page.check("input[name=confirm]")
        page.click("button[name=action][value=close]")
        page.wait_for_selector("text=Round 1 is closed")
        fits(page)
        datasets = Dataset.objects.filter(task=task, round__number=1)
        assert sum(d.items.count() for d in datasets) == len(kind.answers) and {d.split for d in datasets} >= {"dev", "test"}

        # 5. The evaluations the close queued run; the leaderboard ranks both models, the better by the task's metric first.
        run_queued_jobs()
        runs = EvaluationRun.objects.filter(dataset__in=datasets.filter(access="scoring"), status="done")
        assert {r.model.name for r in runs} == {"loop-model", "second-model"}, list(EvaluationRun.objects.values("model__name", "status", "error"))
        assert all(r.metrics[m] >= 0 for r in runs for m in task.spec.perf_metrics)
        metric = task.config["perf_metric"]
        sign = -1 if metric in task.spec.lower_is_better else 1
        score = {name: sign * sum(r.metrics[metric] for r in runs if r.model.name == name) for name in ("loop-model", "second-model")}
        start_over(page, client, researcher, live_server)
        page.goto(f"/tasks/{task.code}/leaderboard/")
        rows = page.locator("table.leaderboard tbody tr")
        rows.first.wait_for()
        assert rows.count() == 2
        names = [next(name for name in score if name in rows.nth(i).inner_text()) for i in range(2)]
        assert score[names[0]] >= score[names[1]], (names, metric, score)
        assert rows.nth(0).inner_text().split()[0] == "1"
        fits(page)
        assert errors == []
