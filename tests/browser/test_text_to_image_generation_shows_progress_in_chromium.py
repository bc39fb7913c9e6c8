"""While the image generator works, the text-to-image page says so: the prompt form posts through
htmx, its button is disabled and "Generating 2 images…" shows (``hx-indicator``) until the images
arrive in place; a generator failure (502) comes back in place too, with the reason and the prompt
kept. The card of images carries the content warning once, each image its own reveal button. The
page breaks no rule of the Content-Security-Policy, and without JavaScript the form still posts and
the images come with the next page."""

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from tests.browser_support import HANG_MS, browser_only, log_in, save_screenshot
from tests.t2i_support import _shared_image_server, add_context, endpoint_generator, image_server, nibbler_task, tiny_pipeline_dir  # noqa: F401

pytestmark = [*browser_only, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def red_team(owner, image_server, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 0
    task = nibbler_task(owner)
    add_context(task, "a quiet street at night")
    endpoint_generator(task, image_server.url, name="painter")
    return task


def test_progress_while_generating_then_images_in_place(page, client, live_server, annotator, red_team, image_server):
    task = red_team
    violations = []
    page.on("console", lambda message: violations.append(message.text) if "Content Security Policy" in message.text else None)
    log_in(page, client, annotator, live_server)
    page.goto(f"/tasks/{task.code}/write/")
    page.get_by_role("button", name="I understand, continue").click()
    attempt_url = page.url
    progress, button = page.locator("[data-generating]"), page.locator("[data-generate]")
    expect(progress).to_be_hidden()

    # A failing generator: the reason in place (a 502 swapped in), the prompt kept.
    image_server.mode = "garbage"
    page.locator("#prompt").fill("two knights resting after a long day")
    button.click()
    expect(page.locator("[data-problem]")).to_contain_text("is not an image Pillow can read", timeout=HANG_MS)
    expect(page.locator("#prompt")).to_have_value("two knights resting after a long day")
    assert page.url == attempt_url

    # A generator at work: the page says so and the button waits.
    image_server.mode = "ok"
    image_server.hold()
    try:
        page.locator("[data-generate]").click()
        expect(page.locator("[data-generating]")).to_be_visible()
        expect(page.locator("[data-generating]")).to_contain_text("Generating 2 images…")
        expect(page.locator("[data-generate]")).to_be_disabled()
        save_screenshot(page, "t2i-progress-1-generating", caret="initial")
    finally:
        image_server.release()
    figures = page.locator("[data-judge-form] figure[data-generated-image]")
    expect(figures).to_have_count(2, timeout=HANG_MS)
    expect(page.locator("[data-generating]")).to_be_hidden()
    expect(page.locator("[data-generate]")).to_be_enabled()
    assert page.url == attempt_url

    # The content warning once for the card; a reveal button per image.
    expect(page.locator("[data-judge-form] [data-images-warning]")).to_have_count(1)
    expect(page.locator("[data-judge-form] [data-images-warning]")).to_contain_text("Red-teaming")
    expect(page.locator("[data-judge-form] figure [data-images-warning]")).to_have_count(0)
    for n in (1, 2):
        expect(page.get_by_role("button", name=f"Show generated image {n}")).to_have_count(1)
    save_screenshot(page, "t2i-progress-2-images", caret="initial")
    assert violations == []


def test_the_prompt_form_works_without_javascript(browser, client, live_server, red_team):
    writer = User.objects.create_user("nojs-t2i", password="pw-12345-long")
    writer.groups.add(Group.objects.get(name="annotator"))
    client.force_login(writer)
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    page = context.new_page()
    page.set_default_timeout(60000)
    page.goto(f"/tasks/{red_team.code}/write/")
    page.get_by_role("button", name="I understand, continue").click()
    expect(page.locator("[data-generating]")).to_be_hidden()
    page.locator("#prompt").fill("a bowl of fruit")
    with page.expect_navigation():
        page.locator("[data-generate]").click()
    assert page.url.endswith("/imagine/generate")
    assert page.locator("[data-judge-form] figure[data-generated-image]").count() == 2
    assert page.locator("[data-judge-form] [data-images-warning]").count() == 1
    context.close()
