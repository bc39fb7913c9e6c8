"""API tokens: obtained with username + password or a session, used as ``Authorization: Token``, revoked."""

from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.api.conftest import client_for


def test_it_issues_a_token_for_username_and_password(researcher):
    response = APIClient().post("/api/v1/auth/token", {"username": "rita", "password": "pw-rita"}, format="json")

    assert response.status_code == 201
    assert response.json()["token"] == Token.objects.get(user=researcher).key
    me = APIClient(HTTP_AUTHORIZATION=f"Token {response.json()['token']}").get("/api/v1/me")
    assert me.status_code == 200 and me.json()["username"] == "rita"


def test_it_returns_the_same_token_when_asked_again(researcher):
    first = APIClient().post("/api/v1/auth/token", {"username": "rita", "password": "pw-rita"}, format="json")
    second = APIClient().post("/api/v1/auth/token", {"username": "rita", "password": "pw-rita"}, format="json")

    assert second.status_code == 200
    assert second.json()["token"] == first.json()["token"]


def test_it_refuses_a_wrong_password_with_a_message(researcher):
    response = APIClient().post("/api/v1/auth/token", {"username": "rita", "password": "nope"}, format="json")

    assert response.status_code == 401
    assert response.json() == {"code": "authentication_failed", "detail": "Wrong username or password."}
    assert not Token.objects.filter(user=researcher).exists()


def test_it_issues_a_token_to_a_logged_in_session(researcher):
    client = APIClient(enforce_csrf_checks=False)
    client.force_login(researcher)

    response = client.post("/api/v1/auth/token", {}, format="json")

    assert response.status_code == 201
    assert Token.objects.filter(user=researcher, key=response.json()["token"]).exists()


def test_it_asks_anonymous_callers_for_credentials(db):
    response = APIClient().post("/api/v1/auth/token", {}, format="json")

    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


def test_it_revokes_the_callers_token(researcher):
    client = client_for(researcher)

    response = client.delete("/api/v1/auth/token")

    assert response.status_code == 204
    assert not Token.objects.filter(user=researcher).exists()
    assert client.get("/api/v1/me").status_code == 401


def test_it_refuses_a_made_up_token(db):
    response = APIClient(HTTP_AUTHORIZATION="Token 0123456789abcdef").get("/api/v1/tasks")

    assert response.status_code == 401
    assert response.json() == {"code": "authentication_failed", "detail": "Invalid token."}
