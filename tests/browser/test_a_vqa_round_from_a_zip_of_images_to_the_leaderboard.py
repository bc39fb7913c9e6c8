"""Issue 32's "done when" for visual question answering, in Chromium, as new users would do it: an
owner uploads 50 images in a zip on the console's image page and puts a ViLT in the loop of the open
round; an annotator writes questions about the images with answers the model cannot give (its answer
vocabulary lacks "1"), so each fools it; a validator confirms each in the review queue, seeing the
image; the owner closes the round in the console into train/dev/test datasets; the jobs the close
queued run (an RQ worker in burst mode, in this process) and the leaderboard page ranks two models
on the new datasets: the one in the loop last, the one that can answer "1" first. With
``DYNABENCH_SCREENSHOTS=<folder>`` it saves four of its pages there (``vqa-*.png``)."""

import zipfile

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command

from annotation.models import Example
from leaderboard.models import EvaluationRun
from leaderboard.services import register_model_directory
from tasks.models import Context, ContextImage, Dataset, Task
from tests.browser_support import browser_only, log_in, run_queued_jobs, save_screenshot
from tests.image_support import SHAPES, draw, encode
from tests.vqa_support import ANSWERS, DEFINITION, build_tiny_vilt

pytestmark = [*browser_only, pytest.mark.usefixtures("whole_round"), pytest.mark.django_db(transaction=True)]

EXAMPLES = 10
QUESTION = "how many shapes are there in the picture"
WITHOUT_ONE = [a for a in ANSWERS if a != "1"]


def _user(username, *roles):
    user = User.objects.create_user(username=username, password="pw-12345-long")
    user.groups.add(*Group.objects.filter(name__in=roles))
    return user


def test_a_vqa_round_from_a_zip_of_images_to_the_leaderboard(page, client, live_server, tmp_path):
    from dynabench.roles import ensure_role_groups

    ensure_role_groups()
    owner, annotator, validator = _user("oona"), _user("ari", "annotator"), _user("vera", "validator")
    researcher = _user("rita", "researcher")
    call_command("create_task", str(DEFINITION))
    task = Task.objects.get(code="colours-vqa")
    task.owners.add(owner)
    task.config = {**task.config, "validations_needed": 1}  # one validator stands in for the definition's nine
    task.save(update_fields=["config"])
    in_loop = register_model_directory(actor=owner, task=task, name="vilt-loop", published=True,
                                       path=build_tiny_vilt(tmp_path / "vilt-loop", answers=WITHOUT_ONE, seed=1))
    register_model_directory(actor=owner, owner=researcher, task=task, name="vilt-other", published=True,
                             path=build_tiny_vilt(tmp_path / "vilt-other", answers=["1", "one"], seed=2))

    # 1. The owner uploads a zip of 50 pictures on the console's image page.
    archive = tmp_path / "pictures.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for n in range(50):
            zf.writestr(f"pictures/{SHAPES[n % 3]}-{n:02d}.png", encode(draw(SHAPES[n % 3], size=64, seed=n)))
    log_in(page, client, owner, live_server)
    page.goto(f"/tasks/{task.code}/console/images/")
    page.set_input_files("input[name=files]", str(archive))
    page.click("[data-image-upload-form] button[type=submit]")
    page.locator(".image-grid img").first.wait_for()
    assert "50 image context(s) added" in page.content()
    assert ContextImage.objects.filter(task=task).count() == 50
    assert Context.objects.filter(round__task=task, round__number=1).count() == 50
    save_screenshot(page, "vqa-console-images")

    # 2. ... and puts the ViLT in the loop of the open round.
    page.goto(f"/tasks/{task.code}/console/rounds/")
    form = page.locator("form[data-add-loop-model]")
    form.locator("select[name=model]").select_option(str(in_loop.pk))
    form.locator("button[type=submit]").click()
    page.wait_for_selector(f"[data-loop-model='{in_loop.pk}']")
    assert list(task.rounds.get(number=1).target_models.all()) == [in_loop]

    # 3. The annotator asks questions about the images; the model cannot answer "one".
    page.context.clear_cookies()
    log_in(page, client, annotator, live_server)
    for n in range(EXAMPLES):
        page.goto(f"/tasks/{task.code}/write/")
        shown = page.locator("[data-context-image] img")
        shown.wait_for()
        page.wait_for_function("() => document.querySelector('[data-context-image] img').naturalWidth === 64")
        page.fill("input[name=question]", QUESTION)
        page.fill("input[name=answer]", "One")
        page.click("#workspace button[type=submit]")
        outcome = page.locator("#outcome")
        outcome.wait_for()
        assert outcome.inner_text() == "You fooled the model!"
        if n == 0:
            assert "VQA accuracy of the model's answer against yours: 0.00" in page.locator("#workspace").inner_text()
            save_screenshot(page, "vqa-annotator-fooled")
    examples = list(Example.objects.filter(round__task=task))
    assert len(examples) == EXAMPLES and all(e.model_wrong and e.target == {"answers": ["One"]} for e in examples)
    assert all(e.model_output["answer"] in WITHOUT_ONE for e in examples)

    # 4. The validator confirms each, seeing its image.
    page.context.clear_cookies()
    log_in(page, client, validator, live_server)
    page.goto(f"/tasks/{task.code}/validate/")
    for n in range(EXAMPLES):
        card = page.locator("[data-example-id]")
        card.wait_for()
        example_id = card.get_attribute("data-example-id")
        assert page.locator("#review [data-context-image] img").count() == 1
        assert page.locator("[data-answer=annotator]").inner_text() == "One"
        if n == 0:
            save_screenshot(page, "vqa-validator")
        page.check("input[name=label][value=correct]")
        page.click("#review-form button[type=submit]")
        page.wait_for_function(
            "id => !document.querySelector('[data-example-id]') || document.querySelector('[data-example-id]').dataset.exampleId !== id",
            arg=example_id,
        )
    page.wait_for_selector("text=Nothing left to validate")
    assert Example.objects.filter(round__task=task, validation_state="verified_correct").count() == EXAMPLES

    # 5. The owner closes the round into datasets in the console.
    page.context.clear_cookies()
    log_in(page, client, owner, live_server)
    page.goto(f"/tasks/{task.code}/console/rounds/1/close")
    page.check("input[name=confirm]")
    page.click("button[name=action][value=close]")
    page.wait_for_selector("text=Round 1 is closed")
    datasets = Dataset.objects.filter(task=task, round__number=1)
    assert sum(d.items.count() for d in datasets) == EXAMPLES
    assert {d.split for d in datasets} >= {"dev", "test"}

    # 6. The evaluations the close queued run; the leaderboard ranks both models.
    run_queued_jobs()
    scored = EvaluationRun.objects.filter(dataset__in=datasets.filter(access="scoring"), status="done")
    assert {r.model.name for r in scored} == {"vilt-loop", "vilt-other"}, list(EvaluationRun.objects.values("model__name", "status", "error"))
    assert all(0 <= r.metrics["vqa_accuracy"] <= 1 for r in scored)
    for run in scored:  # vilt-loop cannot say "one"; vilt-other says "1" or "one", each 1/3 against a lone "One"
        assert run.metrics["vqa_accuracy"] == pytest.approx(0.0 if run.model_id == in_loop.pk else 1 / 3)
    page.context.clear_cookies()
    log_in(page, client, researcher, live_server)
    page.goto(f"/tasks/{task.code}/leaderboard/")
    table = page.locator("table").first
    table.wait_for()
    rows = table.locator("tbody tr")
    assert rows.count() == 2
    first, second = rows.nth(0).inner_text().split(), rows.nth(1).inner_text().split()
    assert first[0] == "1" and "vilt-other" in first, first   # rank, rank range, model
    assert second[0] == "2" and "vilt-loop" in second, second
    save_screenshot(page, "vqa-leaderboard")
