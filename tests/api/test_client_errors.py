"""The client raises ``DynabenchError`` subclasses carrying the server's ``code`` and ``detail``."""

import pytest

from dynabench_client import AuthenticationError, BadRequest, DynabenchClient, NotFound, PermissionDenied
from tasks.models import Round


def test_it_logs_in_with_username_and_password(live_server, researcher):
    client = DynabenchClient.login("rita", "pw-rita", base_url=live_server.url)

    assert client.me()["username"] == "rita"


def test_a_wrong_password_raises_an_authentication_error(live_server, researcher):
    with pytest.raises(AuthenticationError) as error:
        DynabenchClient.login("rita", "wrong", base_url=live_server.url)

    assert (error.value.status, error.value.code, error.value.detail) == (401, "authentication_failed", "Wrong username or password.")


def test_an_unknown_round_raises_not_found(live_server, researcher, sentiment_task):
    client = DynabenchClient.login("rita", "pw-rita", base_url=live_server.url)

    with pytest.raises(NotFound) as error:
        client.download_round("sentiment", 7)

    assert error.value.code == "not_found"


def test_a_refused_rule_raises_bad_request_with_the_services_code(live_server, owner, sentiment_task):
    client = DynabenchClient.login("olga", "pw-olga", base_url=live_server.url)

    with pytest.raises(BadRequest) as error:
        client._request("POST", "/tasks/sentiment/rounds", json={})

    assert error.value.code == "other_round_open"
    assert error.value.detail == "round 1 of sentiment is still open; close it first"


def test_a_forbidden_action_raises_permission_denied(live_server, researcher, sentiment_task):
    Round.objects.filter(task=sentiment_task).update(status=Round.Status.CLOSED)
    client = DynabenchClient.login("rita", "pw-rita", base_url=live_server.url)

    with pytest.raises(PermissionDenied) as error:
        client._request("POST", "/tasks/sentiment/rounds", json={})

    assert error.value.detail == "Only an owner of this task may do this."
    assert sentiment_task.rounds.count() == 1


def test_a_revoked_token_stops_working(live_server, researcher):
    client = DynabenchClient.login("rita", "pw-rita", base_url=live_server.url)

    client.revoke_token()

    with pytest.raises(AuthenticationError):
        client.me()
