"""``dynabench.backends.ModelBackend.get_user`` returns what Django's ``ModelBackend`` returns."""

from django.contrib.auth.backends import ModelBackend as DjangoModelBackend
from django.contrib.auth.models import User

from dynabench.backends import ModelBackend


def fields(user):
    return None if user is None else {f.attname: getattr(user, f.attname) for f in User._meta.concrete_fields}


def test_it_loads_the_same_user_as_django_s_backend(db):
    user = User.objects.create_user("zoë", email="z@example.org", password="long-enough-pass-1", first_name="Zoë")
    for user_id in (user.pk, str(user.pk)):  # the session keeps the id as a string
        assert fields(ModelBackend().get_user(user_id)) == fields(DjangoModelBackend().get_user(user_id))
    assert ModelBackend().get_user(user.pk).check_password("long-enough-pass-1")


def test_unknown_malformed_and_inactive_users_are_nobody(db):
    user = User.objects.create_user("gone", password="long-enough-pass-1", is_active=False)
    assert ModelBackend().get_user(user.pk) is None
    assert ModelBackend().get_user(user.pk + 1000) is None
    assert ModelBackend().get_user("not-a-number") is None


def test_a_logged_in_request_gets_its_user(client, db):
    user = User.objects.create_user("ann", password="long-enough-pass-1")
    logged_in = client.post("/accounts/login/", {"username": "ann", "password": "long-enough-pass-1"})
    assert logged_in.status_code == 302
    assert client.get("/").wsgi_request.user == user
