"""A researcher submits a model behind an OpenAI-compatible endpoint through ``dynabench_client``; a
worker evaluates it by calling the endpoint, and it is ranked on the leaderboard with performance,
throughput and latency measured from the platform's side, memory not measured; the key never comes back."""

import json

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.authtoken.models import Token

from dynabench_client import BadRequest, DynabenchClient
from leaderboard.models import EvaluationRun
from tests.api.conftest import run_worker

KEY = "sk-endpoint-test-9f3b2c"


@pytest.fixture
def client_of_a_researcher(live_server, db):
    user = User.objects.create_user(username="rex", password="pw-rex")
    user.groups.add(*Group.objects.filter(name__in=["researcher"]))
    return DynabenchClient(api_key=Token.objects.create(user=user).key, base_url=live_server.url)


def test_an_endpoint_is_evaluated_and_ranked(client_of_a_researcher, sentiment_datasets, sentiment_model, endpoint_server):
    client = client_of_a_researcher
    model_id = client.submit_endpoint(
        "sentiment", "tiny-gpt2 endpoint", endpoint_server.url, "tiny-gpt2", params={"temperature": 0, "max_tokens": 4},
        api_key=KEY, max_concurrency=2,
    )
    run_worker()
    results = client.get_results(model_id)

    assert results["status"] == "evaluated", results["failure_reason"]
    run = EvaluationRun.objects.get(model_id=model_id, dataset__name="sent-r1-test")
    assert run.throughput > 0 and run.memory_gib is None
    assert run.metrics["latency_ms_p50"] > 0 and run.metrics["endpoint_calls"] >= 3
    assert results["dynascore"] is not None
    ranked = {row["model_id"] for row in client.leaderboard("sentiment")["rows"]}
    assert model_id in ranked
    assert {r["authorization"] for r in endpoint_server.requests} == {f"Bearer {KEY}"}
    assert KEY not in json.dumps(client.get_model(model_id))
    sent = json.dumps([r["body"] for r in endpoint_server.requests])
    assert "sent-r1-test sentence 0" in sent and '"label"' not in sent


def test_a_url_off_the_allow_list_is_refused_with_its_code(client_of_a_researcher, sentiment_datasets, endpoint_server):
    with pytest.raises(BadRequest) as refused:
        client_of_a_researcher.submit_endpoint("sentiment", "metadata", "http://169.254.169.254/v1", "x")
    assert refused.value.code == "endpoint_url_not_allowed"
