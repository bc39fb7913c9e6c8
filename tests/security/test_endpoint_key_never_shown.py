"""No endpoint API key appears in any page, API answer, export or log line: a researcher's endpoint
is submitted with a key through the API, evaluated, ranked and put in the loop, an annotator writes an
example against it, and then every GET route (the hidden-labels walk's enumeration of Django's URL
patterns) is fetched as the researcher, the task's owner and an admin, while every log record of the
whole story is kept; the key is looked for in all of them, and in the database column that stores it."""

import json
import logging

import pytest
from django.test import Client
from rest_framework.test import APIClient

from annotation.services import create_example
from leaderboard.jobs import evaluate_model, evaluate_run
from leaderboard.models import EvaluationRun, LeaderboardConfig
from tasks.models import Dataset, DatasetItem, Endpoint, MLModel
from tests.security.test_hidden_labels_walk import _body, _urls

KEY = "sk-live-KEY-never-shown-7a1f03"


@pytest.fixture
def endpoint_world(settings, tmp_path, sentiment_task, annotator, researcher, owner, endpoint_server, caplog):
    caplog.set_level(logging.DEBUG)
    settings.MEDIA_ROOT = tmp_path / "media"
    round1 = sentiment_task.rounds.get(number=1)
    hidden = Dataset.objects.create(task=sentiment_task, round=round1, name="sentiment-r1-test", split="test")
    DatasetItem.objects.bulk_create(
        DatasetItem(dataset=hidden, uid=f"t{i}", input={"text": text}, target={"label": label})
        for i, (text, label) in enumerate([("the food was great", "positive"), ("the room was dirty", "negative")])
    )
    api = APIClient()
    api.force_authenticate(researcher)
    answer = api.post("/api/v1/models/endpoint", {
        "task": "sentiment", "name": "hosted-llm", "base_url": endpoint_server.url, "model_name": "tiny-gpt2",
        "params": {"temperature": 0, "max_tokens": 4}, "api_key": KEY, "consents": ["loop"],
    }, format="json")
    assert answer.status_code == 201 and KEY not in answer.content.decode()
    model = MLModel.objects.get(pk=answer.json()["id"])
    evaluate_model(model.pk)
    for run in EvaluationRun.objects.filter(model=model):
        evaluate_run(run.pk)
    run = EvaluationRun.objects.get(model=model, dataset=hidden)
    assert run.status == "done", run.error
    round1.target_models.set([model])
    example = create_example(user=annotator, context=round1.contexts.first(), input={"text": "the staff were friendly"},
                             target={"label": "positive"})
    config = LeaderboardConfig.objects.create(task=sentiment_task, owner=researcher, name="fork", metric_weights={"performance": 1})
    return {"task": sentiment_task, "hidden": hidden, "public": hidden, "example": example, "model": model, "run": run, "config": config,
            "annotator": annotator}


@pytest.mark.parametrize("who", ["researcher", "owner", "admin_user"])
def test_no_page_api_answer_export_or_log_line_carries_the_key(who, endpoint_world, endpoint_server, caplog, request):
    client = Client(raise_request_exception=False)
    client.force_login(request.getfixturevalue(who))
    model = endpoint_world["model"]
    # The job dashboard's admin pages stand on a table that does not exist (django-rq's placeholder
    # model); on PostgreSQL their error would abort this test's transaction for every later page.
    urls = [url for url in _urls(endpoint_world) if not url.startswith("/admin/django_rq/")] + [
        f"/admin/tasks/mlmodel/{model.pk}/change/", "/tasks/sentiment/console/rounds/", "/tasks/sentiment/export.jsonl",
        f"/api/v1/models/{model.pk}", "/api/v1/models?mine=1", f"/models/{model.pk}/",
    ]

    bodies = {url: _body(client.get(url)) for url in urls}

    assert [url for url, body in bodies.items() if KEY in body] == []
    if who == "admin_user":  # the admin's change page holds the endpoint's settings, the key field empty
        assert client.get(f"/admin/tasks/mlmodel/{model.pk}/change/").status_code == 200
        assert "tiny-gpt2" in bodies[f"/admin/tasks/mlmodel/{model.pk}/change/"]
    assert any("hosted-llm" in body for body in bodies.values())
    assert all(record["authorization"] == f"Bearer {KEY}" for record in endpoint_server.requests)  # it was sent, to the endpoint only
    assert [r.name for r in caplog.records if KEY in r.getMessage() or KEY in json.dumps(r.args, default=str)] == []
    stored = Endpoint.objects.get(model=model).api_key_encrypted
    assert stored and KEY not in stored
