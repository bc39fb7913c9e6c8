"""In Chromium: the images of a task with a content warning are drawn blurred (CSS, no inline
style or script: CSP) on the owner's image page and the annotator's write page, their links do
not open them, and each is shown only after its own "Show image" button is pressed."""


import pytest

from leaderboard.services import register_model_directory
from tasks.data.images import ingest_images
from tests.browser_support import browser_only, log_in, save_screenshot
from tests.image_support import SHAPES, image_file, shapes_task
from tests.tiny_models import build_tiny_image_classifier

pytestmark = browser_only


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def _filter(page, selector):
    return page.eval_on_selector(selector, "img => getComputedStyle(img).filter")


def test_images_of_a_task_with_a_content_warning_stay_blurred_until_clicked(page, client, live_server, owner, annotator, tmp_path):
    task = shapes_task(owner)
    task.content_warning = "Some images may show violence."
    task.save()
    ingest_images(task=task, acting_user=owner, round_number=1, files=[image_file("a.png"), image_file("b.png", seed=5)])
    model = register_model_directory(actor=owner, task=task, path=build_tiny_image_classifier(tmp_path / "vit", list(SHAPES)), name="vit")
    task.rounds.get(number=1).target_models.add(model)

    log_in(page, client, owner, live_server)
    page.goto(f"/tasks/{task.code}/console/images/")
    page.locator(".image-grid img").first.wait_for()
    assert all("blur" in f for f in page.eval_on_selector_all(".image-grid img", "imgs => imgs.map(i => getComputedStyle(i).filter)"))
    page.locator(".image-grid [data-reveal]").first.click()
    filters = page.eval_on_selector_all(".image-grid img", "imgs => imgs.map(i => getComputedStyle(i).filter)")
    assert sorted("blur" in f for f in filters) == [False, True]  # only the one clicked

    page.context.clear_cookies()
    log_in(page, client, annotator, live_server)
    page.goto(f"/tasks/{task.code}/write/")
    page.click("text=I understand, continue")
    image = "[data-context-image] img"
    page.locator(image).wait_for()
    assert "blur" in _filter(page, image)
    page.click("[data-context-image] a", force=True)  # the link does not open the image unblurred
    assert page.url.endswith("/write/")
    save_screenshot(page, "blurred")
    page.click("[data-context-image] [data-reveal]")
    assert _filter(page, image) == "none"
    assert page.locator("[data-context-image] [data-reveal]").count() == 0
    save_screenshot(page, "revealed")
