"""In Chromium, a researcher opens their endpoint model's page, reads the calls made under its key and
takes back a consent with the form (htmx swaps the section in place); the gate then refuses that use."""

import pytest

from dynabench.errors import RuleError
from tasks.loop import gate
from tasks.loop.registry import get_predictor
from tasks.models import Endpoint, Purpose
from tests.browser_support import browser_only, console_errors, log_in, save_screenshot

pytestmark = [*browser_only, pytest.mark.django_db(transaction=True)]


def test_the_submitter_unticks_loop_and_the_next_loop_call_is_refused(page, client, live_server, researcher, owner, sentiment_task,
                                                                      make_endpoint_model, endpoint_server):
    model = make_endpoint_model(sentiment_task, name="rita-endpoint", owner=researcher, consents=["loop", "assist"], published=True)
    with gate.admit(model, Purpose.LOOP, user=owner, round=sentiment_task.current_round()):
        get_predictor(model).predict([{"text": "once in the loop"}])
    log_in(page, client, researcher, live_server)
    page.goto(f"/models/{model.pk}/")
    section = page.locator("#key-use")
    assert "sentiment" in section.inner_text() and "loop" in section.inner_text()
    page.locator("#key-use input[value=loop]").uncheck()
    with page.expect_response(lambda response: "/consents/" in response.url and response.status == 200):
        page.locator("#key-use button").click()
    page.wait_for_selector("#key-use input[value=assist]:checked")
    assert not page.locator("#key-use input[value=loop]").is_checked()
    save_screenshot(page, "model-key-use")
    assert Endpoint.objects.get(model=model).consents == ["assist"]
    with pytest.raises(RuleError):
        with gate.admit(model, Purpose.LOOP, user=owner, round=sentiment_task.current_round()):
            get_predictor(model).predict([{"text": "after"}])
    assert console_errors(page) == []
