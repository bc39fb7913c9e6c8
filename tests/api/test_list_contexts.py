"""Owners list a round's contexts, filtered by tag."""

from tasks.models import Context
from tests.api.conftest import client_for


def test_it_lists_a_rounds_contexts_to_an_owner(owner, sentiment_task):
    response = client_for(owner).get("/api/v1/tasks/sentiment/rounds/1/contexts")

    assert response.status_code == 200
    assert response.json()["count"] == 5
    assert response.json()["results"][0]["uid"] == "sent-seed-1"


def test_it_filters_contexts_by_tag(owner, sentiment_task):
    Context.objects.filter(uid="sent-seed-2").update(tag="hotel")

    response = client_for(owner).get("/api/v1/tasks/sentiment/rounds/1/contexts", {"tag": "hotel"})

    assert [c["uid"] for c in response.json()["results"]] == ["sent-seed-2"]


def test_it_refuses_an_annotator(annotator, sentiment_task):
    response = client_for(annotator).get("/api/v1/tasks/sentiment/rounds/1/contexts")

    assert response.status_code == 403
