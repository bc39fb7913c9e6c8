"""Issue 19 (worth a look): the login lockout's JSON reply (XMLHttpRequest) carries no
``Access-Control-Allow-*`` headers, so no other site may read it; pages get the lockout page.

Old code: django-axes' own reply sent ``Access-Control-Allow-Origin: *``.
"""

import pytest

LIMIT = 2


@pytest.fixture(autouse=True)
def _failure_limit(settings):
    settings.AXES_FAILURE_LIMIT = LIMIT


def _lock_out(client):
    for i in range(LIMIT):
        client.post("/accounts/login/", {"username": "rita", "password": f"guess{i}"})


def test_the_json_lockout_reply_has_no_cross_origin_headers(client, researcher):
    _lock_out(client)
    reply = client.post(
        "/accounts/login/", {"username": "rita", "password": "pw-rita"},
        HTTP_X_REQUESTED_WITH="XMLHttpRequest", HTTP_ORIGIN="https://evil.example",
    )

    assert reply.status_code == 429
    assert not [h for h in reply.headers if h.lower().startswith("access-control-")]
    body = reply.json()
    assert body["code"] == "locked_out" and body["failure_limit"] == LIMIT and body["cooloff_seconds"] == 15 * 60
    assert "try again in" in body["detail"]


def test_the_lockout_page_is_unchanged(client, researcher):
    _lock_out(client)
    page = client.post("/accounts/login/", {"username": "rita", "password": "pw-rita"})

    assert page.status_code == 429 and "Too many failed log-ins" in page.content.decode()
    assert "After 2 wrong passwords for “rita”" in page.content.decode()
