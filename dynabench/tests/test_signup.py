"""People sign up as annotators (researchers if they tick it), never as validators, and are logged in straight away."""

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.urls import reverse

from dynabench.roles import has_role

PASSWORD = "a-long-enough-passphrase-42"


@pytest.fixture(autouse=True)
def _fresh_signup_counts():
    cache.clear()  # the per-address sign-up limit counts in the cache, which outlives a test's database
    yield
    cache.clear()


def _signup(client, **overrides):
    data = {"username": "newbie", "email": "newbie@example.org", "password1": PASSWORD, "password2": PASSWORD,
            "roles": ["researcher"], **overrides}
    return client.post(reverse("signup"), data)


def test_the_sign_up_page_renders(client, db):
    response = client.get(reverse("signup"))

    assert response.status_code == 200
    assert b"Create account" in response.content


def test_it_creates_an_annotator_account_in_the_optional_roles_and_logs_it_in(client, db):
    response = _signup(client)

    assert response.status_code == 302 and response.url == reverse("annotation:task_list")
    user = User.objects.get(username="newbie")
    assert has_role(user, "annotator") and has_role(user, "researcher") and not has_role(user, "validator")
    assert not user.is_staff
    assert client.get(reverse("annotation:task_list")).context["user"] == user


def test_it_goes_on_to_a_local_next_page_but_not_to_another_site(client, db):
    assert _signup(client, next="/tasks/nli/").url == "/tasks/nli/"
    client.logout()
    assert _signup(client, username="other", next="https://evil.example/").url == reverse("annotation:task_list")


def test_it_refuses_mismatched_passwords_and_creates_nothing(client, db):
    response = _signup(client, password2="something-else-entirely")

    assert response.status_code == 200
    assert "password2" in response.context["form"].errors
    assert not User.objects.filter(username="newbie").exists()


def test_it_refuses_a_taken_username(client, annotator):
    response = _signup(client, username=annotator.username)

    assert response.status_code == 200
    assert "username" in response.context["form"].errors


def test_an_account_without_optional_roles_is_an_annotator_only(client, db):
    _signup(client, roles=[])

    user = User.objects.get(username="newbie")
    assert has_role(user, "annotator") and not has_role(user, "researcher") and not has_role(user, "validator")


def test_it_refuses_a_role_that_is_not_offered(client, db):
    response = _signup(client, roles=["validator"])

    assert response.status_code == 200
    assert "roles" in response.context["form"].errors
    assert not User.objects.filter(username="newbie").exists()
