"""Without JavaScript the chat page still works: a turn posts the form and the whole answer comes
with the next page; the judgment saves the conversation."""

import pytest
from django.contrib.auth.models import Group, User

from annotation.models import Example
from tests.browser_support import browser_only

pytestmark = [*browser_only, pytest.mark.django_db(transaction=True)]


def test_a_turn_and_a_judgment_without_javascript(browser, client, live_server, chat_task, endpoint_server):
    annotator = User.objects.create_user("nojs", password="pw-12345-long")
    annotator.groups.add(Group.objects.get(name="annotator"))
    client.force_login(annotator)
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    page = context.new_page()
    page.set_default_timeout(15000)
    page.goto(f"/tasks/{chat_task.code}/chat/")
    page.get_by_role("button", name="I understand, continue").click()
    page.locator("[data-start=conversation]").click()
    page.locator("#prompt").fill("tell me about the museum")
    with page.expect_navigation():
        page.locator("[data-send]").click()
    answer = page.locator("#chat [data-turn=model] .text")
    assert answer.count() == 1
    shown = answer.inner_text().strip()
    assert shown
    page.locator("input[name=verdict][value=holds]").check()
    page.locator("[data-judge]").click()
    page.wait_for_selector("[data-saved-example]")
    example = Example.objects.get()
    assert example.target["verdict"] == "holds"
    assert example.model_output["transcript"][-1]["content"].strip() == shown
    context.close()
