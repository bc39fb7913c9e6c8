"""Scoped rate limits answer 429 with ``Retry-After`` once a scope's rate is used up."""

from django.test import override_settings
from django.conf import settings
from rest_framework.test import APIClient

RATES = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "auth": "2/hour"}}


@override_settings(REST_FRAMEWORK=RATES)
def test_it_limits_token_requests_per_hour(researcher):
    client = APIClient()
    statuses = [
        client.post("/api/v1/auth/token", {"username": "rita", "password": "wrong"}, format="json").status_code
        for _ in range(3)
    ]

    assert statuses == [401, 401, 429]
    response = client.post("/api/v1/auth/token", {"username": "rita", "password": "pw-rita"}, format="json")
    assert response.status_code == 429
    assert response.json()["code"] == "throttled"
    assert int(response["Retry-After"]) > 3000


@override_settings(REST_FRAMEWORK=RATES)
def test_it_does_not_limit_reads(default_tasks):
    client = APIClient()

    assert {client.get("/api/v1/tasks").status_code for _ in range(5)} == {200}
