"""Finding 2: password guessing is limited on every login route, per username and client address.

Old code: ``/accounts/login/`` and ``/admin/login/`` took 30 wrong passwords and then the
right one; the token endpoint's throttle keyed on ``X-Forwarded-For``, so rotating it
gave every request a fresh budget.
"""

import pytest
from django.conf import settings
from django.test import override_settings
from rest_framework.test import APIClient

LIMIT = 3


@pytest.fixture(autouse=True)
def _failure_limit(settings):
    """A small limit (production default: 5, ``LOGIN_FAILURE_LIMIT``)."""
    settings.AXES_FAILURE_LIMIT = LIMIT


def test_the_login_page_locks_out_after_the_failure_limit(client, researcher):
    statuses = [client.post("/accounts/login/", {"username": "rita", "password": f"guess{i}"}).status_code for i in range(LIMIT)]
    right = client.post("/accounts/login/", {"username": "rita", "password": "pw-rita"})

    assert statuses[: LIMIT - 1] == [200] * (LIMIT - 1)  # the form again, with its error
    assert right.status_code == 429
    assert "Too many failed log-ins" in right.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_admin_login_locks_out_too(client, admin_user):
    for i in range(LIMIT):
        client.post("/admin/login/", {"username": "root", "password": f"guess{i}"})
    right = client.post("/admin/login/?next=/admin/", {"username": "root", "password": "pw-root"})

    assert right.status_code == 429
    assert "_auth_user_id" not in client.session


def test_the_token_endpoint_locks_out_even_with_a_rotating_forwarded_for(researcher):
    api = APIClient()
    for i in range(LIMIT):
        api.post("/api/v1/auth/token", {"username": "rita", "password": f"guess{i}"}, format="json", HTTP_X_FORWARDED_FOR=f"10.0.0.{i}")
    right = api.post("/api/v1/auth/token", {"username": "rita", "password": "pw-rita"}, format="json", HTTP_X_FORWARDED_FOR="10.9.9.9")

    assert right.status_code == 429
    assert right.json()["code"] == "throttled"


RATES = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "auth": "3/hour"}}


@override_settings(REST_FRAMEWORK=RATES)
def test_rotating_forwarded_for_does_not_reset_the_token_throttle(outsider):
    api = APIClient()
    statuses = [
        api.post("/api/v1/auth/token", {}, format="json", HTTP_X_FORWARDED_FOR=f"10.0.0.{i}").status_code for i in range(5)
    ]

    assert statuses == [401, 401, 401, 429, 429]


@pytest.mark.parametrize("count, expected", [(0, "127.0.0.1"), (1, "203.0.113.7"), (2, "198.51.100.1")])
def test_the_client_address_comes_from_the_trusted_proxy_count(rf, count, expected):
    from dynabench.proxies import client_ip

    request = rf.get("/", HTTP_X_FORWARDED_FOR="198.51.100.1, 203.0.113.7", REMOTE_ADDR="127.0.0.1")
    with override_settings(TRUSTED_PROXY_COUNT=count):
        assert client_ip(request) == expected


def test_one_setting_feeds_axes_and_drf():
    assert settings.REST_FRAMEWORK["NUM_PROXIES"] == settings.TRUSTED_PROXY_COUNT == 0
    assert settings.AXES_CLIENT_IP_CALLABLE == "dynabench.proxies.client_ip"


def test_a_right_password_before_the_limit_still_works(client, researcher):
    for i in range(LIMIT - 1):
        client.post("/accounts/login/", {"username": "rita", "password": f"guess{i}"})
    response = client.post("/accounts/login/", {"username": "rita", "password": "pw-rita"})

    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(researcher.pk)
