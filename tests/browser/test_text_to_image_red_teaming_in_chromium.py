"""Text-to-image red-teaming in Chromium, as Adversarial Nibbler runs it, with a real images-API
server in the loop: the annotator passes the content warning, writes a prompt, gets the images back
blurred (revealing one takes a click on its own button), marks one unsafe with a harm category and
submits; their examples page shows the images blurred too; a validator sees them blurred, reveals
and confirms each; the owner's dashboard shows the validated unsafe rate of the generator."""

import re

import pytest
from playwright.sync_api import expect

from annotation.models import Example
from tasks.models import ContextImage
from tests.browser_support import HANG_MS, browser_only, log_in, save_screenshot, serious_axe_violations
from tests.t2i_support import _shared_image_server, add_context, endpoint_generator, image_server, nibbler_task, tiny_pipeline_dir  # noqa: F401

pytestmark = [*browser_only, pytest.mark.django_db(transaction=True)]


def _blurred(figure) -> bool:
    """The figure is drawn blurred (the CSS filter of its image), not only marked so."""
    return "blur" in figure.locator("img").evaluate("img => getComputedStyle(img).filter")


def test_prompt_images_blurred_marked_validated_and_counted(page, client, live_server, owner, annotator, validator, image_server, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 0
    task = nibbler_task(owner, validations_needed=1)
    add_context(task, "a quiet street at night")
    endpoint_generator(task, image_server.url, name="painter")

    # The annotator: the content warning first, then the prompt.
    log_in(page, client, annotator, live_server)
    page.goto(f"/tasks/{task.code}/write/")
    expect(page.locator("[data-content-warning]")).to_contain_text("Red-teaming")
    page.get_by_role("button", name="I understand, continue").click()
    # A generator answering with something that is no image: the reason, the prompt kept, nothing stored.
    image_server.mode = "garbage"
    page.locator("#prompt").fill("two knights resting after a long day")
    page.locator("[data-generate]").click()
    expect(page.locator("[data-problem]")).to_contain_text("is not an image Pillow can read", timeout=HANG_MS)
    expect(page.locator("#prompt")).to_have_value("two knights resting after a long day")
    assert page.locator("figure[data-generated-image]").count() == 0 and not ContextImage.objects.filter(task=task).exists()
    save_screenshot(page, "t2i-0-bad-answer")
    image_server.mode = "ok"
    page.locator("[data-generate]").click()
    figures = page.locator("[data-judge-form] figure[data-generated-image]")
    expect(figures).to_have_count(2, timeout=HANG_MS)  # the images come in place (htmx) once generated
    for n in range(2):
        assert _blurred(figures.nth(n)), "a generated image is shown unblurred before any click"
    expect(page.locator("[data-judge-form] [data-images-warning]")).to_contain_text("Red-teaming")  # once for the card
    save_screenshot(page, "t2i-1-images-blurred")
    assert serious_axe_violations(page) == []
    # Clicking the blurred image itself does not open or reveal it; its button does.
    figures.nth(0).locator("img").click(force=True)
    assert _blurred(figures.nth(0)) and "/images/" not in page.url
    page.get_by_role("button", name="Show generated image 1").click()
    assert not _blurred(figures.nth(0)) and _blurred(figures.nth(1))
    save_screenshot(page, "t2i-2-one-revealed")

    # Marks: image 1 unsafe (violent), image 2 safe; the prompt looked safe.
    one, two = page.locator("[data-image-judgment='1']"), page.locator("[data-image-judgment='2']")
    one.get_by_label("Unsafe", exact=True).check()
    one.get_by_label("Violent").check()
    two.get_by_label("Safe", exact=True).check()
    page.get_by_label("Yes, it looks harmless").check()
    page.locator("[data-judge]").click()
    expect(page.locator("[data-saved-example]")).to_contain_text("you marked an unsafe image")
    example = Example.objects.get(round__task=task)
    assert example.model_wrong and [m["unsafe"] for m in example.target["images"]] == [True, False]
    assert example.target["images"][0]["categories"] == ["violent"] and example.target["prompt_looked_safe"] is True

    page.goto(f"/my/examples/?task={task.code}")
    mine = page.locator("#my-examples figure[data-generated-image]")
    expect(mine).to_have_count(2)
    assert all(_blurred(mine.nth(n)) for n in range(2))

    # The validator: the images blurred in the queue, revealed one by one, each judged.
    page.context.clear_cookies()
    log_in(page, client, validator, live_server)
    page.goto(f"/tasks/{task.code}/validate/")
    page.locator("[data-content-warning]").wait_for()  # validators read the task's warning first, as annotators do
    page.get_by_role("button", name="I understand, continue").click()
    queued = page.locator("#review figure[data-generated-image]")
    expect(queued).to_have_count(2)
    assert all(_blurred(queued.nth(n)) for n in range(2))
    expect(page.locator("[data-image-mark='1']")).to_contain_text("marked unsafe Violent")
    page.get_by_role("button", name="Show generated image 2").click()
    assert _blurred(queued.nth(0)) and not _blurred(queued.nth(1))
    save_screenshot(page, "t2i-3-validator")
    assert serious_axe_violations(page) == []
    page.locator("[data-image-verdict='1']").get_by_label("Unsafe", exact=True).check()
    page.locator("[data-image-verdict='2']").get_by_label("Safe", exact=True).check()
    page.locator("#review-form button[type=submit]").click()
    expect(page.locator("#review")).to_contain_text(re.compile("Saved: correct"))
    example.refresh_from_db()
    assert example.validation_state == "verified_correct"

    # The owner: the dashboard's validated unsafe rate, and the owner queue shows the images blurred.
    page.context.clear_cookies()
    log_in(page, client, owner, live_server)
    page.goto(f"/tasks/{task.code}/console/rounds/1/dashboard")
    row = page.locator("[data-unsafe-per-generator] tr[data-generator]")
    expect(row).to_contain_text("painter")
    expect(row.locator("[data-rate]")).to_have_text("50.0%")
    expect(page.locator("[data-unsafe-per-category] tr[data-category='violent'] [data-rate]")).to_have_text("50.0%")
    save_screenshot(page, "t2i-4-dashboard")
    page.goto(f"/tasks/{task.code}/rounds/1/owner/?state=verified_correct")
    owned = page.locator("figure[data-generated-image]")
    expect(owned.first).to_be_visible()
    assert all(_blurred(owned.nth(n)) for n in range(owned.count()))
    save_screenshot(page, "t2i-5-owner-queue")
