"""The console's role, ban and loop actions answer only to their known names: any other name is a
404 that changes nothing (it never falls through to a revoke or a lifted ban); a person page whose
name holds a NUL character (which PostgreSQL refuses in a query) is a 404, not a 500."""

import pytest

from tasks import access
from tasks.models import MLModel


@pytest.mark.parametrize("url", ["role/revokeX", "role/anything", "ban/unban", "ban/anything"])
def test_an_unknown_people_action_is_a_404_that_changes_nothing(client, owner, validator, annotator, sentiment_task, url):
    access.grant_role(task=sentiment_task, user=validator, role="validator", acting_user=owner)
    access.ban_user(task=sentiment_task, user=annotator, acting_user=owner, reason="spam")
    client.force_login(owner)
    person = validator if url.startswith("role/") else annotator

    response = client.post(f"/tasks/sentiment/console/people/{url}", {"user": person.pk, "role": "validator"})

    assert response.status_code == 404
    assert sentiment_task.bans.filter(user=annotator).exists()
    assert "validator" in access.task_roles_of(sentiment_task, [validator.pk])[validator.pk]


def test_an_unknown_loop_action_is_a_404(client, owner, sentiment_task):
    model = MLModel.objects.create(task=sentiment_task, name="m", path="/models/m")
    client.force_login(owner)

    response = client.post("/tasks/sentiment/console/rounds/1/loop/swap", {"model": model.pk})

    assert response.status_code == 404 and not sentiment_task.current_round().target_models.filter(pk=model.pk).exists()


def test_a_person_page_with_a_nul_in_the_name_is_a_404(client, owner, sentiment_task):
    client.force_login(owner)

    assert client.get("/tasks/sentiment/console/people/%00/").status_code == 404
    assert client.get("/tasks/sentiment/console/people/an%00ie/").status_code == 404
