"""Fixtures shared by every app's tests: people in each role, the default tasks, tiny models."""

import pytest
from django.contrib.auth.models import Group, User

from tests.tiny_models import build_tiny_classifier, build_tiny_qa_model


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Tests create many users: hash their passwords cheaply (production keeps Django's default)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _user(username, *roles, **extra):
    user = User.objects.create_user(username=username, password="pw-" + username, **extra)
    user.groups.add(*Group.objects.filter(name__in=roles))
    return user


@pytest.fixture
def annotator(db):
    return _user("annie", "annotator")


@pytest.fixture
def validator(db):
    return _user("val", "validator")


@pytest.fixture
def researcher(db):
    return _user("rita", "researcher")


@pytest.fixture
def outsider(db):
    return _user("otto")


@pytest.fixture
def admin_user(db):
    return User.objects.create_superuser(username="root", password="pw-root", email="root@example.org")


@pytest.fixture
def default_tasks(db):
    from tasks.seed import seed_default_tasks

    return {t.code: t for t in seed_default_tasks()}


@pytest.fixture
def sentiment_task(default_tasks):
    return default_tasks["sentiment"]


@pytest.fixture
def nli_task(default_tasks):
    return default_tasks["nli"]


@pytest.fixture
def qa_task(default_tasks):
    return default_tasks["qa"]


@pytest.fixture
def hate_task(default_tasks):
    return default_tasks["hate-speech"]


@pytest.fixture
def owner(db, default_tasks):
    """A user who owns every default task."""
    user = _user("olga", "annotator", "validator")
    for task in default_tasks.values():
        task.owners.add(user)
    return user


@pytest.fixture(scope="session")
def tiny_classifier_dir(tmp_path_factory):
    """A tiny sentiment classifier directory (labels positive/negative/neutral)."""
    return build_tiny_classifier(tmp_path_factory.mktemp("tiny-sentiment"), ["positive", "negative", "neutral"])


@pytest.fixture(scope="session")
def tiny_qa_dir(tmp_path_factory):
    return build_tiny_qa_model(tmp_path_factory.mktemp("tiny-qa"))
