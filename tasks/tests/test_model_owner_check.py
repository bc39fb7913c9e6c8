"""``access.owns_model``: the one model-owner check (the submitter or an admin; never anonymous)."""

from django.contrib.auth.models import AnonymousUser

from tasks import access
from tasks.models import MLModel


def test_the_submitter_and_admins_own_a_model_others_do_not(sentiment_task, researcher, outsider, admin_user, owner):
    model = MLModel.objects.create(task=sentiment_task, owner=researcher, name="mine", path="/tmp/none")

    assert access.owns_model(researcher, model)
    assert access.owns_model(admin_user, model)
    assert not access.owns_model(outsider, model)
    assert not access.owns_model(owner, model)  # owning the task is not owning the model
    assert not access.owns_model(AnonymousUser(), model)


def test_a_model_without_owner_belongs_to_admins_only(sentiment_task, researcher, admin_user):
    model = MLModel.objects.create(task=sentiment_task, owner=None, name="seed", path="/tmp/none")

    assert access.owns_model(admin_user, model) and not access.owns_model(researcher, model)
