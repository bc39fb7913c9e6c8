"""Killing the endpoint mid-evaluation fails the run with the reason; once it is back, evaluating again
finishes the run from the response cache without asking any answered item a second time. A stalled
endpoint times out with the reason on the run."""

import pytest

from leaderboard.models import EvaluationRun
from leaderboard.tests.conftest import evaluate_now
from tests.endpoint_fixtures import allow_local_server
from tests.endpoint_server import start_server


@pytest.fixture
def own_server(tiny_causal_lm_dir, settings):
    servers = [start_server(tiny_causal_lm_dir)]
    allow_local_server(settings, servers[0].url)
    yield servers
    for server in servers:
        if not server.dead:
            server.stop()


@pytest.mark.django_db
def test_a_killed_endpoint_fails_the_run_and_the_rerun_asks_only_unanswered_items(
    sentiment_task, sentiment_dataset, own_server, make_endpoint_model, settings,
):
    settings.DYNABENCH_ENDPOINT_BREAKER_FAILURES = 2
    settings.DYNABENCH_ENDPOINT_BREAKER_COOLDOWN_S = 0
    first = own_server[0]
    model = make_endpoint_model(sentiment_task, url=first.url, max_concurrency=1, max_retries=1)
    first.kill_after(3)

    evaluate_now(model)

    run = EvaluationRun.objects.get(model=model)
    assert run.status == "failed" and "endpoint" in run.error.lower()
    assert len(first.answered) == 3
    second = start_server(first.model_dir, port=first.port)  # the endpoint is back, at the same address
    own_server.append(second)

    evaluate_now(model)

    run.refresh_from_db()
    assert run.status == "done", run.error
    assert set(first.answered).isdisjoint(second.answered)
    assert len(first.answered) + len(second.answered) == len(set(first.answered) | set(second.answered))


@pytest.mark.django_db
def test_a_stalled_endpoint_fails_the_run_with_a_timeout(sentiment_task, sentiment_dataset, endpoint_server, make_endpoint_model):
    model = make_endpoint_model(sentiment_task, timeout_s=1, max_retries=0)
    endpoint_server.stall()
    try:
        evaluate_now(model)
    finally:
        endpoint_server.release()
    run = EvaluationRun.objects.get(model=model)
    assert run.status == "failed" and "did not answer within 1 s" in run.error
