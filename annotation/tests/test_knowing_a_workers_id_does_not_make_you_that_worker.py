"""Attack: someone who knows (or guesses) a worker's Prolific id, and has the study link, opens
it in their own browser. They are refused with a clear page and never signed in as that
worker, whether the worker is in this study already or only in another study of the task;
the worker's own browser goes on working."""

import pytest
from django.test import Client

from annotation.models import CrowdSession
from annotation.tests.crowd_helpers import entry_throttles_off, pid, prolific_study, prolific_url  # noqa: F401 (a fixture)

pytestmark = pytest.mark.usefixtures("entry_throttles_off")


def signed_in_user_id(client):
    return client.session.get("_auth_user_id")


def test_a_second_browser_with_a_known_worker_id_is_refused_in_the_same_study(sentiment_task):
    study = prolific_study(sentiment_task.current_round())
    victim = Client()
    assert victim.get(prolific_url(study, pid("victim"), pid("victim-session"))).status_code == 302
    victim_user = CrowdSession.objects.get().worker.user_id

    attacker = Client()
    answer = attacker.get(prolific_url(study, pid("victim"), pid("attacker-session")))

    assert answer.status_code == 403 and b"already started this study in another session" in answer.content
    assert signed_in_user_id(attacker) is None
    assert attacker.get("/crowd/sentiment/r1/prolific/progress/").status_code == 302  # to the login page
    # The worker's own browser is unaffected and resumes.
    assert victim.get(prolific_url(study, pid("victim"), pid("victim-session"))).status_code == 302
    assert signed_in_user_id(victim) == str(victim_user)


def test_a_second_browser_cannot_take_a_known_worker_into_a_new_study(sentiment_task, nli_task):
    first = prolific_study(sentiment_task.current_round())
    second = prolific_study(nli_task.current_round())
    victim = Client()
    assert victim.get(prolific_url(first, pid("victim"))).status_code == 302

    attacker = Client()
    answer = attacker.get(prolific_url(second, pid("victim"), pid("attacker-session")))

    assert answer.status_code == 403 and b"made in another browser" in answer.content
    assert signed_in_user_id(attacker) is None and not CrowdSession.objects.filter(study=second).exists()
    # The browser that made the account carries its proof into the next study.
    assert victim.get(prolific_url(second, pid("victim"))).status_code == 302
    assert CrowdSession.objects.filter(study=second).count() == 1
