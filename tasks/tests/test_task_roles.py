"""Owners grant and revoke annotator, validator and owner roles on their task, and ban users;
``tasks.access.has_task_role`` is the one check every surface asks."""

import pytest
from django.contrib.auth.models import User

from dynabench.errors import NotAllowed, RuleError
from tasks import access
from tasks.models import TaskBan


@pytest.fixture
def newcomer(db):
    return User.objects.create_user(username="nina", password="pw-nina")


def test_a_granted_role_holds_on_that_task_only(owner, newcomer, sentiment_task, nli_task):
    assert not access.has_task_role(newcomer, sentiment_task, "annotator")

    assert access.grant_role(task=sentiment_task, user=newcomer, role="annotator", acting_user=owner) is True
    assert access.grant_role(task=sentiment_task, user=newcomer, role="annotator", acting_user=owner) is False

    assert access.has_task_role(newcomer, sentiment_task, "annotator")
    assert not access.has_task_role(newcomer, nli_task, "annotator")
    assert not access.has_task_role(newcomer, sentiment_task, "validator")
    assert access.revoke_role(task=sentiment_task, user=newcomer, role="annotator", acting_user=owner) is True
    assert not access.has_task_role(newcomer, sentiment_task, "annotator")


def test_granting_owner_makes_them_an_owner_and_the_last_owner_stays(owner, newcomer, sentiment_task):
    sentiment_task.owners.set([owner])
    access.grant_role(task=sentiment_task, user=newcomer, role="owner", acting_user=owner)
    newcomer.refresh_from_db()
    assert sentiment_task.is_owner(newcomer) and newcomer.is_staff

    access.revoke_role(task=sentiment_task, user=owner, role="owner", acting_user=newcomer)
    with pytest.raises(RuleError) as refused:
        access.revoke_role(task=sentiment_task, user=newcomer, role="owner", acting_user=newcomer)
    assert refused.value.code == "last_owner"


def test_a_ban_takes_every_role_on_the_task_even_a_site_wide_one(owner, annotator, sentiment_task, nli_task):
    assert access.has_task_role(annotator, sentiment_task, "annotator")

    access.ban_user(task=sentiment_task, user=annotator, acting_user=owner, reason="spam")

    assert not access.has_task_role(annotator, sentiment_task, "annotator")
    assert access.has_task_role(annotator, nli_task, "annotator")
    with pytest.raises(RuleError) as refused:
        access.grant_role(task=sentiment_task, user=annotator, role="validator", acting_user=owner)
    assert refused.value.code == "user_banned"
    assert access.lift_ban(task=sentiment_task, user=annotator, acting_user=owner)
    assert access.has_task_role(annotator, sentiment_task, "annotator")


def test_only_owners_grant_and_owners_cannot_be_banned(owner, annotator, newcomer, sentiment_task):
    with pytest.raises(NotAllowed):
        access.grant_role(task=sentiment_task, user=newcomer, role="annotator", acting_user=annotator)
    with pytest.raises(RuleError) as refused:
        access.ban_user(task=sentiment_task, user=owner, acting_user=owner)
    assert refused.value.code == "cannot_ban_owner"
    with pytest.raises(RuleError) as refused:
        access.grant_role(task=sentiment_task, user=newcomer, role="admin", acting_user=owner)
    assert refused.value.code == "unknown_role"
    assert not TaskBan.objects.exists()
