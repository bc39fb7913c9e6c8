"""In Chromium, a conversation survives a reload: after a streamed turn the page's address names the
conversation (``?resume=``), a reload shows the turn and its answer as the server stored them, and a
prompt typed but not sent is still in the box after the reload."""

import pytest
from django.contrib.auth.models import Group, User

from tests.browser_support import browser_only, console_errors, save_screenshot

pytestmark = [*browser_only, pytest.mark.django_db(transaction=True)]


def test_a_reload_keeps_the_stored_turn_and_the_typed_prompt(browser, client, live_server, chat_task, endpoint_server):
    annotator = User.objects.create_user("reloader", password="pw-12345-long")
    annotator.groups.add(Group.objects.get(name="annotator"))
    client.force_login(annotator)
    context = browser.new_context(base_url=live_server.url)
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    page = context.new_page()
    page.set_default_timeout(20000)
    page.goto(f"/tasks/{chat_task.code}/chat/")
    page.get_by_role("button", name="I understand, continue").click()
    page.locator("[data-start=conversation]").click()
    page.locator("#prompt").fill("tell me about the museum")
    page.locator("[data-send]").click()
    page.wait_for_selector("#chat [data-turn=model] .text")
    answer = page.locator("#chat [data-turn=model] .text").first.inner_text().strip()
    assert "resume=" in page.url

    page.locator("#prompt").fill("and who built it?")
    page.reload()
    page.wait_for_selector("#chat [data-turn=model] .text")
    assert "tell me about the museum" in page.locator("#chat").inner_text()
    assert page.locator("#chat [data-turn=model] .text").first.inner_text().strip() == answer
    assert page.locator("#prompt").input_value() == "and who built it?"
    save_screenshot(page, "chat-after-reload")
    assert console_errors(page) == []
    context.close()
