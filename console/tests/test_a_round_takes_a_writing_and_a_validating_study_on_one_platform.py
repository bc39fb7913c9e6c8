"""A round takes one study per platform and kind of work: an owner runs a Prolific study for
writing and another for validating on the same round. Each has its own URL (the activity names it)
and workers entering it land in that study; a second study of one platform and kind on a round is
refused with 409 and a message that says which exists, and nothing is stored. A link without the
activity (made when a round had one study per platform) still finds its study by its token."""

import html
import re

import pytest
from django.test import Client

from annotation.models import CrowdSession, CrowdStudy
from annotation.tests.crowd_helpers import entry_throttles_off, pid  # noqa: F401 (a fixture)

pytestmark = pytest.mark.usefixtures("entry_throttles_off")

CROWD = "/tasks/sentiment/console/crowd/"
WRITING_ID, VALIDATING_ID = "65a0b1c2d3e4f5a6b7c8d9e0", "75a0b1c2d3e4f5a6b7c8d9e1"


def _create(client, round, activity, study_id):
    return client.post(CROWD, {"round": round.pk, "platform": "prolific", "activity": activity, "required": 2,
                               "participant_cap": 50, "completion_code": "C0MPLETE", "platform_study_id": study_id,
                               "active": "on"})


def _filled(url: str, study_id: str, worker: str) -> str:
    return (url.replace("http://testserver", "").replace("{{%PROLIFIC_PID%}}", pid(worker))
            .replace("{{%STUDY_ID%}}", study_id).replace("{{%SESSION_ID%}}", pid(worker + "-session")))


def test_a_writing_and_a_validating_study_run_side_by_side(client, owner, sentiment_task):
    client.force_login(owner)
    round = sentiment_task.current_round()

    writing = _create(client, round, "write", WRITING_ID)
    validating = _create(client, round, "validate", VALIDATING_ID)

    assert writing.status_code == 302 and validating.status_code == 302
    assert sorted(CrowdStudy.objects.filter(round=round).values_list("activity", flat=True)) == ["validate", "write"]
    urls = {}
    for response, activity in ((writing, "write"), (validating, "validate")):
        body = client.get(response.url).content.decode()
        urls[activity] = html.unescape(re.search(r'data-entry-url value="([^"]+)"', body).group(1))
        assert urls[activity].startswith(f"http://testserver/crowd/sentiment/r1/prolific/{activity}/?")

    for activity, study_id in (("write", WRITING_ID), ("validate", VALIDATING_ID)):
        entered = Client().get(_filled(urls[activity], study_id, activity))
        assert entered.status_code == 302 and f"/crowd/sentiment/r1/prolific/{activity}/progress/" in entered.url
    assert sorted(CrowdSession.objects.values_list("study__activity", flat=True)) == ["validate", "write"]


def test_a_second_study_of_one_platform_and_kind_is_refused(client, owner, sentiment_task):
    client.force_login(owner)
    round = sentiment_task.current_round()
    _create(client, round, "write", WRITING_ID)

    again = _create(client, round, "write", VALIDATING_ID)

    assert again.status_code == 409
    assert "Round 1 already has a Prolific study to write examples; edit that one." in html.unescape(again.content.decode())
    assert CrowdStudy.objects.filter(round=round).count() == 1


def test_changing_a_studys_kind_onto_an_existing_one_is_refused(client, owner, sentiment_task):
    client.force_login(owner)
    round = sentiment_task.current_round()
    _create(client, round, "write", WRITING_ID)
    validating = _create(client, round, "validate", VALIDATING_ID)

    changed = client.post(validating.url, {"activity": "write", "required": 2, "participant_cap": 50,
                                           "completion_code": "C0MPLETE", "platform_study_id": VALIDATING_ID, "active": "on"})

    assert changed.status_code == 409
    assert sorted(CrowdStudy.objects.filter(round=round).values_list("activity", flat=True)) == ["validate", "write"]


def test_a_link_without_the_activity_finds_its_study_by_its_token(owner, sentiment_task):
    round = sentiment_task.current_round()
    CrowdStudy.objects.create(round=round, platform="prolific", activity="write", completion_code="C", platform_study_id=WRITING_ID)
    validating = CrowdStudy.objects.create(round=round, platform="prolific", activity="validate", completion_code="C",
                                           platform_study_id=VALIDATING_ID)

    entered = Client().get(f"/crowd/sentiment/r1/prolific/?PROLIFIC_PID={pid('v')}&STUDY_ID={VALIDATING_ID}"
                           f"&SESSION_ID={pid('vs')}&token={validating.entry_token}")

    assert entered.status_code == 302 and entered.url.endswith("/crowd/sentiment/r1/prolific/validate/progress/")
    assert CrowdSession.objects.get().study == validating
