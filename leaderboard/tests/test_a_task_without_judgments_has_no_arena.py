"""Only tasks whose kind collects people's judgments of generative answers have an arena: the page
and the API answer 404 for the others (without reading their examples)."""

from django.urls import reverse


def test_a_classification_task_has_no_arena(client, sentiment_task):
    assert client.get(reverse("leaderboard:arena", args=[sentiment_task.code])).status_code == 404
    response = client.get(reverse("api-arena", args=[sentiment_task.code]))
    assert response.status_code == 404 and response.json()["code"] == "no_arena"
