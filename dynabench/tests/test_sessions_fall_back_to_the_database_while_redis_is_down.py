"""Sessions while Redis cannot be reached (``dynabench/sessions.py``): a signed-in page reads its
session from the database and keeps working; a change to a session (here a log-out) is refused with
the 503 page before anything changes, so the copy in Redis can never outlive the database's; once
Redis answers again, the log-out goes through."""

from django.contrib.sessions.models import Session
from django.test import Client


def test_a_signed_in_page_reads_its_session_from_the_database_while_redis_is_down(annotator, cache_on_private_redis):
    client = Client(raise_request_exception=False)
    client.force_login(annotator)

    cache_on_private_redis.stop()
    response = client.get("/accounts/token/")

    assert response.status_code == 200
    assert response.context["user"] == annotator


def test_a_log_out_while_redis_is_down_is_refused_and_changes_nothing(annotator, cache_on_private_redis):
    client = Client(raise_request_exception=False)
    client.force_login(annotator)

    cache_on_private_redis.stop()
    response = client.post("/accounts/logout/")

    assert response.status_code == 503
    html = response.content.decode()
    assert "Temporarily unavailable" in html and 'data-request-error="redis_unavailable"' in html
    assert Session.objects.count() == 1  # still signed in, in the database as in the cookie

    cache_on_private_redis.start()
    assert client.get("/accounts/token/").context["user"] == annotator
    assert client.post("/accounts/logout/").status_code == 302
    assert not Session.objects.exists()
    assert not client.get("/accounts/token/", follow=True).context["user"].is_authenticated
