"""Endpoint models a task's owner adds in the console for the task's loop are no submissions: they do
not spend the owner's daily model-submission allowance, so the owner's own model upload afterwards
is still taken. A researcher's submitted endpoints still count."""

import pytest

from dynabench.errors import RateLimited
from leaderboard import services


def _add_in_console(client, task, endpoint_server, name):
    return client.post(f"/tasks/{task.code}/console/endpoints/add", {
        "name": name, "base_url": endpoint_server.url + "/v1", "model_name": "tiny-gpt2", "api": "chat",
        "timeout_s": 10, "max_retries": 1, "max_concurrency": 2,
    })


def test_an_owners_console_endpoints_leave_the_allowance_whole(client, owner, sentiment_task, endpoint_server, settings):
    settings.MODEL_SUBMISSIONS_PER_DAY = 5
    settings.MODEL_UPLOAD_ATTEMPTS_PER_HOUR = 0
    client.force_login(owner)
    for n in range(6):
        assert _add_in_console(client, sentiment_task, endpoint_server, f"loop endpoint {n}").status_code == 302

    allowance = services.submission_allowance(owner)
    assert (allowance.used, allowance.remaining) == (0, 5)
    assert services.check_can_submit(user=owner, task=sentiment_task, name="olga's own model") == "olga's own model"


def test_a_researchers_submitted_endpoints_still_count(researcher, sentiment_task, endpoint_server, default_queue, settings):
    settings.MODEL_SUBMISSIONS_PER_DAY = 2
    settings.MODEL_UPLOAD_ATTEMPTS_PER_HOUR = 0
    for n in range(2):
        services.submit_endpoint(user=researcher, task=sentiment_task, name=f"rita {n}", base_url=endpoint_server.url,
                                 model_name="tiny-gpt2")
    assert services.submission_allowance(researcher).remaining == 0
    with pytest.raises(RateLimited):
        services.check_can_submit(user=researcher, task=sentiment_task, name="one more")
