"""In headless Chromium: a task owner who is no administrator adds a model behind an endpoint with the
wrong model name; *Test connection* shows the server's own reason; the owner changes the model name on
the same page, saves, and the test then shows the endpoint's answer."""

import os

from django.test import Client

from tasks.models import Endpoint, MLModel
from tests.browser_support import browser_only

pytestmark = browser_only
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def _log_in(browser, live_server, user):
    client = Client()
    client.force_login(user)
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    page = context.new_page()
    page.set_default_timeout(20000)
    return page


def test_an_owner_reads_the_servers_reason_fixes_the_model_name_and_the_test_passes(
    browser, live_server, owner, sentiment_task, endpoint_server,
):
    assert not owner.is_superuser
    endpoint_server.pinned = True
    page = _log_in(browser, live_server, owner)

    page.goto("/tasks/sentiment/console/rounds/")
    page.fill("input[name=name]", "tiny via transformers serve")
    page.fill("input[name=base_url]", endpoint_server.url + "/v1")
    page.fill("input[name=model_name]", "tiny")
    page.fill("input[name=max_tokens]", "8")
    page.click("button:has-text('Add endpoint model')")
    page.get_by_text("Endpoint model 'tiny via transformers serve' added").wait_for()
    model = MLModel.objects.get(name="tiny via transformers serve")
    page.click(f"[data-endpoint-model='{model.pk}'] a:has-text('Connection & test')")

    page.click("button:has-text('Test connection')")
    reason = page.locator("[data-connection-reason]")
    reason.wait_for()
    assert "Server is pinned to 'tiny-gpt2'; requested 'tiny'" in reason.inner_text()

    page.fill("input[name=model_name]", "tiny-gpt2")
    page.click("button:has-text('Save connection')")
    page.get_by_text("Connection of 'tiny via transformers serve' saved.").wait_for()
    assert Endpoint.objects.get(model=model).model_name == "tiny-gpt2"
    page.click("button:has-text('Test connection')")
    page.locator("[data-connection-ok]").wait_for()
    assert page.locator("[data-connection-reason]").count() == 0
