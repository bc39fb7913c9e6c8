"""Submit on the create page while Redis cannot be reached: the answer is a 503 that says so and tells
htmx to leave the page alone (``HX-Reswap: none``, so the text stays in the form, and
``static/js/request-errors.js`` shows the message beside it); without htmx, a page that says so.
Nothing is stored, and once Redis answers again the same form goes through."""

from django.test import Client

from annotation.models import Example
from annotation.tests.conftest import model_label
from annotation.tests.helpers import HTMX, token_of

TEXT = "Breakfast was cold but the view made up for it."


def test_the_submission_is_refused_with_503_while_redis_is_down_then_goes_through(
    annotator, sentiment_task, sentiment_context, cache_on_private_redis,
):
    client = Client(raise_request_exception=False)  # as a real server: the exception becomes the answer
    client.force_login(annotator)
    page = client.get(f"/tasks/{sentiment_task.code}/write/")
    form = {"token": token_of(page), "text": TEXT, "label": model_label(sentiment_task, TEXT)}
    submit_url = f"/tasks/{sentiment_task.code}/write/submit"

    cache_on_private_redis.stop()
    response = client.post(submit_url, form, **HTMX)

    assert response.status_code == 503
    assert response["HX-Reswap"] == "none"
    html = response.content.decode()
    assert 'data-request-error="redis_unavailable"' in html and "Redis" in html
    assert not Example.objects.exists()

    response = client.post(submit_url, form)  # without htmx: a page of its own

    assert response.status_code == 503
    assert "Temporarily unavailable" in response.content.decode()
    assert not Example.objects.exists()

    cache_on_private_redis.start()  # back, and empty
    response = client.post(submit_url, form, **HTMX)

    assert response.status_code == 200
    assert Example.objects.count() == 1
