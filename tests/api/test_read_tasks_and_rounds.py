"""Tasks and rounds are readable by everyone; inactive tasks only by their owners."""

from rest_framework.test import APIClient

from tests.api.conftest import client_for


def test_it_lists_the_active_tasks_to_anyone(default_tasks):
    response = APIClient().get("/api/v1/tasks")

    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 4
    assert [t["code"] for t in body["results"]] == ["hate-speech", "nli", "qa", "sentiment"]
    sentiment = body["results"][3]
    assert sentiment["labels"] == ["positive", "negative", "neutral"]
    assert sentiment["current_round"] == 1
    assert sentiment["rounds"] == [{"number": 1, "status": "open"}]
    assert sentiment["is_owner"] is False


def test_it_filters_tasks_by_kind(default_tasks):
    response = APIClient().get("/api/v1/tasks", {"kind": "extractive_qa"})

    assert [t["code"] for t in response.json()["results"]] == ["qa"]


def test_it_refuses_an_unknown_kind_filter(default_tasks):
    response = APIClient().get("/api/v1/tasks", {"kind": "regression"})

    assert response.status_code == 400
    assert response.json()["field"] == "kind"


def test_it_hides_an_inactive_task_from_everyone_but_its_owners(default_tasks, owner, researcher):
    nli = default_tasks["nli"]
    nli.active = False
    nli.save()

    assert APIClient().get("/api/v1/tasks/nli").status_code == 404
    assert client_for(researcher).get("/api/v1/tasks/nli").status_code == 404
    assert client_for(owner).get("/api/v1/tasks/nli").status_code == 200
    assert "nli" not in [t["code"] for t in APIClient().get("/api/v1/tasks").json()["results"]]


def test_it_shows_a_rounds_counts_but_never_its_secret(sentiment_task):
    response = APIClient().get("/api/v1/tasks/sentiment/rounds/1")

    assert response.status_code == 200
    body = response.json()
    assert body["counts"] == {"collected": 0, "fooled": 0, "verified_fooled": 0, "vmer": None, "mer": None}
    assert body["examples_downloadable"] is False
    assert "secret" not in body


def test_it_answers_404_for_an_unknown_task_or_round(sentiment_task):
    assert APIClient().get("/api/v1/tasks/nope/rounds").json()["code"] == "not_found"
    assert APIClient().get("/api/v1/tasks/sentiment/rounds/9").status_code == 404
