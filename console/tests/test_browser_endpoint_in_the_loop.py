"""In headless Chromium: an owner adds a model behind an endpoint from the console's Rounds page and
opens round 2 with it in the loop and a call budget; an annotator writes an example on the create page
and sees the endpoint's raw answer. With ``DYNABENCH_SCREENSHOTS=<folder>`` it saves the two pages
(``docs/screenshots/console-add-endpoint.png``, ``create-endpoint-answer.png``)."""

import os

from django.test import Client

from annotation.models import Example
from tasks.models import MLModel, Round
from tests.browser_support import browser_only, save_screenshot
from validation import round_close
from validation.tests.conftest import make_example

pytestmark = browser_only
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def _log_in(browser, live_server, user):
    client = Client()
    client.force_login(user)
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 800})
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    page = context.new_page()
    page.set_default_timeout(20000)
    return page


def test_an_owner_puts_an_endpoint_in_the_loop_and_an_annotator_writes_against_it(
    browser, live_server, owner, annotator, sentiment_task, endpoint_server,
):
    for _ in range(20):
        make_example(sentiment_task, annotator, validation_state="verified_correct")
    round_close.close_round(round=sentiment_task.rounds.get(number=1), acting_user=owner, ratios={"train": .4, "dev": .3, "test": .3}, seed=1)
    page = _log_in(browser, live_server, owner)

    page.goto("/tasks/sentiment/console/rounds/")
    page.fill("input[name=name]", "tiny-gpt2 via a local server")
    page.fill("input[name=base_url]", endpoint_server.url + "/v1")
    page.fill("input[name=model_name]", "tiny-gpt2")
    page.fill("input[name=max_tokens]", "8")
    page.fill("input[name=seed]", "1")
    page.fill("input[name=api_key]", "sk-typed-in-the-browser")
    save_screenshot(page, "console-add-endpoint")
    page.click("button:has-text('Add endpoint model')")
    page.get_by_text("Endpoint model 'tiny-gpt2 via a local server' added").wait_for()
    model = MLModel.objects.get(name="tiny-gpt2 via a local server")
    page.check(f"input[name=target_models][value='{model.pk}']")
    page.fill("input[name=endpoint_call_budget]", "500")
    page.click("button:has-text('Open round 2')")
    page.get_by_text("Round 2 is open with 1 model(s) in the loop.").wait_for()
    round2 = Round.objects.get(task=sentiment_task, number=2)
    assert list(round2.target_models.all()) == [model] and round2.endpoint_call_budget == 500
    round2.contexts.create(uid="r2-c1", data={"prompt": "The staff were friendly."})

    writer = _log_in(browser, live_server, annotator)
    writer.goto("/tasks/sentiment/write/")
    writer.fill("textarea[name=text]", "the staff were friendly but the room was dirty")
    writer.check("input[name=label][value=negative]")
    writer.click("button[type=submit]")
    writer.locator("[data-endpoint-answer]").wait_for()
    save_screenshot(writer, "create-endpoint-answer", full_page=False)

    example = Example.objects.get(round=round2)
    assert example.model == model and example.model_output["endpoint"]["model"] == "tiny-gpt2"
    assert "sk-typed-in-the-browser" not in writer.content() and "sk-typed-in-the-browser" not in page.content()
