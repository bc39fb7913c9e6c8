"""Login CSRF: a signed-in owner who opens a crowd study link (a link, an image tag on another
site) stays signed in as themselves: the page asks, with a CSRF-protected POST form, before it
switches to a crowd account."""

import pytest
from django.test import Client

from annotation.models import CrowdWorker
from annotation.tests.crowd_helpers import entry_throttles_off, pid, prolific_study, prolific_url  # noqa: F401 (a fixture)

pytestmark = pytest.mark.usefixtures("entry_throttles_off")


def test_a_get_of_an_entry_link_does_not_switch_a_signed_in_owner(sentiment_task, owner):
    study = prolific_study(sentiment_task.current_round())
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    url = prolific_url(study, pid("w"))

    page = client.get(url)

    assert page.status_code == 200 and b'id="crowd-switch-confirm"' in page.content and b"csrfmiddlewaretoken" in page.content
    assert client.session["_auth_user_id"] == str(owner.pk) and not CrowdWorker.objects.exists()
    # A cross-site POST without the CSRF token switches nothing either.
    assert client.post(url, {"switch": "yes"}).status_code == 403
    assert client.session["_auth_user_id"] == str(owner.pk) and not CrowdWorker.objects.exists()


def test_the_owner_switches_only_by_confirming_the_form(sentiment_task, owner):
    study = prolific_study(sentiment_task.current_round())
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    url = prolific_url(study, pid("w"))
    page = client.get(url)
    token = page.context["csrf_token"]

    not_confirmed = client.post(url, {"csrfmiddlewaretoken": str(token)})
    assert not_confirmed.status_code == 400 and client.session["_auth_user_id"] == str(owner.pk)

    switched = client.post(url, {"csrfmiddlewaretoken": str(token), "switch": "yes"})
    assert switched.status_code == 302
    worker = CrowdWorker.objects.get()
    assert client.session["_auth_user_id"] == str(worker.user_id) != str(owner.pk)
