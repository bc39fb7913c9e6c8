"""``/accounts/token/``: a signed-in person creates, reads and revokes their own API token."""

from rest_framework.authtoken.models import Token

from tests.api.conftest import client_for


def test_create_show_and_revoke(client, researcher):
    client.force_login(researcher)
    assert "You have no token yet." in client.get("/accounts/token/").content.decode()
    assert client.post("/accounts/token/", {"action": "create"}).status_code == 302
    token = Token.objects.get(user=researcher)
    assert token.key in client.get("/accounts/token/").content.decode()
    assert client_for().get("/api/v1/me", HTTP_AUTHORIZATION=f"Token {token.key}").status_code == 200
    client.post("/accounts/token/", {"action": "revoke"})
    assert not Token.objects.filter(user=researcher).exists()


def test_an_unknown_action_is_a_400(client, researcher):
    client.force_login(researcher)
    response = client.post("/accounts/token/", {"action": "steal"})
    assert response.status_code == 400 and b"action=create" in response.content


def test_visitors_are_sent_to_log_in(client, db):
    assert client.get("/accounts/token/").status_code == 302
