"""An owner (no Django admin permission at all) creates a Prolific study for their own task from
the console, copies the URL shown ready to paste, saves Prolific's study id, and a worker
enters with exactly that URL as Prolific fills it in. The API token is never shown back."""

import html
import re

import pytest
from django.test import Client

from annotation.models import CrowdSession, CrowdStudy
from annotation.tests.crowd_helpers import entry_throttles_off, pid  # noqa: F401 (a fixture)

pytestmark = pytest.mark.usefixtures("entry_throttles_off")

CROWD = "/tasks/sentiment/console/crowd/"
STUDY_ID = "65a0b1c2d3e4f5a6b7c8d9e0"


def test_an_owner_creates_a_study_and_a_worker_enters_with_the_pasted_url(client, owner, sentiment_task):
    assert not owner.user_permissions.exists() and not owner.is_staff  # no admin permission is needed
    client.force_login(owner)
    round = sentiment_task.current_round()
    created = client.post(CROWD, {"round": round.pk, "platform": "prolific", "activity": "write", "required": 3,
                                  "participant_cap": 50, "completion_code": "C0MPLETE", "api_token": "secret-prolific-token",
                                  "active": "on"})
    assert created.status_code == 302
    study = CrowdStudy.objects.get()
    assert (study.round, study.required, study.participant_cap, study.api_token) == (round, 3, 50, "secret-prolific-token")

    page = client.get(created.url)
    body = page.content.decode()
    assert page.status_code == 200 and "secret-prolific-token" not in body
    url = html.unescape(re.search(r'data-entry-url value="([^"]+)"', body).group(1))
    assert url.startswith("http://testserver/crowd/sentiment/r1/prolific/write/?PROLIFIC_PID={{%PROLIFIC_PID%}}")
    assert f"token={study.entry_token}" in url and "C0MPLETE" in body and "data-not-ready" in body

    saved = client.post(created.url, {"activity": "write", "required": 3, "participant_cap": 50, "completion_code": "C0MPLETE",
                                      "platform_study_id": STUDY_ID, "active": "on"})
    assert saved.status_code == 302
    study.refresh_from_db()
    assert study.platform_study_id == STUDY_ID and study.api_token == "secret-prolific-token"  # kept, not shown

    # What Prolific opens for a participant: the pasted URL with its placeholders filled in.
    study.api_token = ""
    study.save()
    filled = (url.replace("http://testserver", "").replace("{{%PROLIFIC_PID%}}", pid("w"))
              .replace("{{%STUDY_ID%}}", STUDY_ID).replace("{{%SESSION_ID%}}", pid("s")))
    assert Client().get(filled).status_code == 302 and CrowdSession.objects.filter(study=study).count() == 1


def test_an_mturk_study_shows_its_external_question(client, owner, sentiment_task):
    client.force_login(owner)
    created = client.post(CROWD, {"round": sentiment_task.current_round().pk, "platform": "mturk", "activity": "validate",
                                  "required": 10, "participant_cap": 20, "active": "on"})
    assert created.status_code == 302
    body = client.get(created.url).content.decode()
    assert "&lt;ExternalQuestion" in body  # shown as text to copy
    question = html.unescape(re.search(r"data-external-question>(.*?)</textarea>", body, re.S).group(1))
    assert "<ExternalURL>http://testserver/crowd/sentiment/r1/mturk/validate/?token=" in question


def test_a_bad_study_form_names_the_fields(client, owner, sentiment_task):
    client.force_login(owner)
    refused = client.post(CROWD, {"round": sentiment_task.current_round().pk, "platform": "prolific", "activity": "write",
                                  "required": 3, "participant_cap": 50, "platform_study_id": "no spaces allowed"})
    assert refused.status_code == 400
    body = refused.content.decode()
    assert 'data-error-for="completion_code"' in body and 'data-error-for="platform_study_id"' in body
    assert not CrowdStudy.objects.exists()


def test_a_new_link_refuses_the_old_one(client, owner, sentiment_task):
    client.force_login(owner)
    study = CrowdStudy.objects.create(round=sentiment_task.current_round(), platform="prolific", completion_code="C",
                                      platform_study_id=STUDY_ID)
    old = study.entry_token
    assert client.post(f"{CROWD}studies/{study.pk}/token").status_code == 302
    study.refresh_from_db()
    assert study.entry_token != old
    answer = Client().get(f"/crowd/sentiment/r1/prolific/?PROLIFIC_PID={pid('w')}&STUDY_ID={STUDY_ID}&SESSION_ID={pid('s')}&token={old}")
    assert answer.status_code == 403


def test_a_validating_study_without_enough_gold_items_is_warned_about(client, owner, sentiment_task):
    client.force_login(owner)
    CrowdStudy.objects.create(round=sentiment_task.current_round(), platform="mturk", activity="validate")
    page = client.get(CROWD).content.decode()
    assert "data-gold-short" in page and "count only after" in page
