"""In Chromium: an owner uploads an image on the console's image page and sees its thumbnail;
an annotator opens the write page, sees the image, swaps it for an image of their own, picks a label meant to fool the image
classifier in the loop and sees the model's answer. With
``DYNABENCH_SCREENSHOTS=<folder>`` it saves the console's image page and the annotator's result there."""


import pytest

from annotation.models import Example
from leaderboard.services import register_model_directory
from tasks.models import ContextImage
from tests.browser_support import browser_only, log_in, save_screenshot
from tests.image_support import SHAPES, draw, shapes_task
from tests.tiny_models import build_tiny_image_classifier

pytestmark = browser_only


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_owner_uploads_an_image_and_an_annotator_labels_it(page, client, live_server, owner, annotator, tmp_path):
    task = shapes_task(owner)
    picture = tmp_path / "triangle-label-leak.png"
    draw("triangle", size=160, seed=3).save(picture)

    log_in(page, client, owner, live_server)
    page.goto(f"/tasks/{task.code}/console/images/")
    page.set_input_files("input[name=files]", str(picture))
    page.click("[data-image-upload-form] button[type=submit]")
    thumb = page.locator(".image-grid img").first
    thumb.wait_for()
    assert page.evaluate("img => img.complete && img.naturalWidth > 0", thumb.element_handle())
    image = ContextImage.objects.get(task=task)
    assert image.sha256 in thumb.get_attribute("src") and "triangle" not in thumb.get_attribute("src")
    save_screenshot(page, "console-images")

    model = register_model_directory(actor=owner, task=task, path=build_tiny_image_classifier(tmp_path / "vit", list(SHAPES)), name="tiny-vit")
    task.rounds.get(number=1).target_models.add(model)

    page.context.clear_cookies()
    log_in(page, client, annotator, live_server)
    page.goto(f"/tasks/{task.code}/write/")
    shown = page.locator("[data-context-image] img")
    shown.wait_for()
    assert page.evaluate("img => img.complete && img.naturalWidth === 160", shown.element_handle())
    own = tmp_path / "my-own.png"
    draw("circle", size=96, seed=6).save(own)
    page.set_input_files("#id_own_image", str(own))
    page.click("text=Use this image")
    page.wait_for_selector("[data-context-image] img[alt*='image']")
    page.wait_for_function("() => document.querySelector('[data-context-image] img').naturalWidth === 96")
    image = ContextImage.objects.get(task=task, uploaded_by=annotator)
    page.fill("input[name=note]", "a green triangle on blue")
    page.check("input[name=label][value=square]")
    page.click("#workspace button[type=submit]")
    outcome = page.locator("#outcome")
    outcome.wait_for()
    example = Example.objects.get()
    assert example.input["image"] == image.sha256 and example.target == {"label": "square"}
    expected = "You fooled the model!" if example.model_wrong else "The model got it right."
    assert outcome.inner_text() == expected
    assert page.locator("#workspace [data-context-image] img").count() == 1
    save_screenshot(page, "annotator-result")
