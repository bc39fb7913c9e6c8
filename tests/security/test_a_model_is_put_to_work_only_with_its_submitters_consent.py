"""Every form, serializer and admin path that can put a researcher's endpoint to work asks the gate's
consent question when it is saved, so the refusal comes early and names whose consent is missing: the
console's writing assistant and generator, the admin's round form (a new round too), the loop. A task
owner cannot make a researcher's model their own in the admin, nor change its connection or parameters;
and an edit that re-runs an evaluation is rate-limited per model."""

import json

import pytest
from django.test import Client

from annotation.models import GenerationRun, RoundAssistant
from tasks.models import Endpoint, MLModel, Round
from tasks.services import grant_owner_admin_access
from tests.api.conftest import client_for


@pytest.fixture
def staff_owner(owner):
    grant_owner_admin_access(owner)
    return owner


@pytest.fixture
def rita_endpoint(sentiment_task, researcher, make_endpoint_model):
    return make_endpoint_model(sentiment_task, name="rita-endpoint", owner=researcher)


def _console(owner) -> Client:
    client = Client()
    client.force_login(owner)
    return client


def test_the_ai_page_offers_and_saves_the_endpoint_only_for_the_purposes_consented(owner, sentiment_task, rita_endpoint):
    client, number = _console(owner), sentiment_task.current_round().number
    page = client.get(f"/tasks/sentiment/console/rounds/{number}/ai/").content.decode()
    assert "rita-endpoint" not in page  # offered for neither purpose

    refused = client.post(f"/tasks/sentiment/console/rounds/{number}/ai/assistant", {"model": rita_endpoint.pk, "enabled": "on"})
    assert refused.status_code == 400 and "has not consented" in refused.content.decode() and "rita" in refused.content.decode()
    assert not RoundAssistant.objects.exists()
    refused = client.post(f"/tasks/sentiment/console/rounds/{number}/ai/generate", {"model": rita_endpoint.pk, "per_context": 1})
    assert refused.status_code == 400 and "has not consented" in refused.content.decode()
    assert not GenerationRun.objects.exists()

    Endpoint.objects.filter(model=rita_endpoint).update(consents=["assist"])
    page = client.get(f"/tasks/sentiment/console/rounds/{number}/ai/").content.decode()
    assert page.count("rita-endpoint") == 1  # the assistant's choices only
    saved = client.post(f"/tasks/sentiment/console/rounds/{number}/ai/assistant", {"model": rita_endpoint.pk, "enabled": "on"})
    assert saved.status_code == 302 and RoundAssistant.objects.get().model == rita_endpoint
    refused = client.post(f"/tasks/sentiment/console/rounds/{number}/ai/generate", {"model": rita_endpoint.pk, "per_context": 1})
    assert refused.status_code == 400 and not GenerationRun.objects.exists()


def test_the_admin_refuses_a_new_round_with_the_endpoint_in_its_loop(staff_owner, sentiment_task, rita_endpoint):
    client = _console(staff_owner)
    rounds = Round.objects.count()
    answer = client.post("/admin/tasks/round/add/", {
        "task": sentiment_task.pk, "number": 7, "target_models": [rita_endpoint.pk],
        "contexts-TOTAL_FORMS": 0, "contexts-INITIAL_FORMS": 0, "contexts-MIN_NUM_FORMS": 0, "contexts-MAX_NUM_FORMS": 1000,
    })
    assert answer.status_code == 200 and "has not consented" in answer.content.decode()
    assert Round.objects.count() == rounds


def test_a_task_owner_cannot_make_a_researchers_model_their_own_in_the_admin(staff_owner, sentiment_task, rita_endpoint, researcher):
    client = _console(staff_owner)
    page = client.get(f"/admin/tasks/mlmodel/{rita_endpoint.pk}/change/").content.decode()
    for field in ("owner", "path", "kind", "status"):
        assert f'name="{field}"' not in page, field
    endpoint = Endpoint.objects.get(model=rita_endpoint)
    client.post(f"/admin/tasks/mlmodel/{rita_endpoint.pk}/change/", {
        "task": sentiment_task.pk, "owner": staff_owner.pk, "name": rita_endpoint.name, "description": "", "kind": "hf_directory",
        "path": "/tmp/elsewhere", "status": "evaluated", "endpoint-TOTAL_FORMS": 1, "endpoint-INITIAL_FORMS": 1,
        "endpoint-MIN_NUM_FORMS": 0, "endpoint-MAX_NUM_FORMS": 1, "endpoint-0-id": endpoint.pk, "endpoint-0-model": rita_endpoint.pk,
        "endpoint-0-base_url": endpoint.base_url, "endpoint-0-api": "chat", "endpoint-0-model_name": "mine",
        "endpoint-0-params": json.dumps({"max_tokens": 4096}), "endpoint-0-prompt": "{}", "endpoint-0-api_key_env": "",
        "endpoint-0-timeout_s": 10, "endpoint-0-max_retries": 3, "endpoint-0-max_concurrency": 4, "endpoint-0-api_key": "",
    })
    model = MLModel.objects.get(pk=rita_endpoint.pk)
    assert (model.owner, model.kind, model.path, model.status) == (researcher, "endpoint", rita_endpoint.path, rita_endpoint.status)
    assert Endpoint.objects.get(model=model).model_name == "tiny-gpt2"  # the connection is the submitter's


def test_only_the_submitter_changes_the_connection_and_reevaluations_are_rate_limited(owner, researcher, rita_endpoint, settings):
    settings.DYNABENCH_ENDPOINT_REEVALUATIONS_PER_HOUR = 2
    url = f"/api/v1/models/{rita_endpoint.pk}/endpoint"
    refused = client_for(owner).patch(url, {"params": {"max_tokens": 4096}}, format="json")
    assert refused.status_code == 403
    mine = client_for(researcher)
    assert mine.patch(url, {"params": {"max_tokens": 5}}, format="json").status_code == 200
    assert mine.patch(url, {"params": {"max_tokens": 6}}, format="json").status_code == 200
    limited = mine.patch(url, {"params": {"max_tokens": 7}}, format="json")
    assert limited.status_code == 429 and "re-run its evaluation" in limited.json()["detail"]
    assert Endpoint.objects.get(model=rita_endpoint).params["max_tokens"] == 6  # nothing saved
    assert mine.patch(url, {"timeout_s": 12}, format="json").status_code == 200  # changes no answer: not limited
