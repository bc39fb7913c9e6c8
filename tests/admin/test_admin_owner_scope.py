"""A task owner uses the admin for the tasks they own, and sees nothing of the others."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from tasks.models import Round
from tasks.services import add_task_owner


@pytest.fixture
def nli_owner(db, nli_task, admin_user):
    user = User.objects.create_user(username="nora", password="pw-nora")
    add_task_owner(task=nli_task, user=user, acting_user=admin_user)
    return user


def test_it_lists_only_the_owned_tasks_rounds(client, nli_owner, nli_task, qa_task):
    client.force_login(nli_owner)

    response = client.get(reverse("admin:tasks_round_changelist"))

    assert response.status_code == 200
    assert list(response.context["cl"].result_list) == list(nli_task.rounds.all())


def test_it_hides_another_tasks_round(client, nli_owner, qa_task):
    client.force_login(nli_owner)

    response = client.get(reverse("admin:tasks_round_change", args=[qa_task.current_round().pk]))

    assert response.status_code == 302  # the admin redirects a missing object to its index


def test_it_lets_the_owner_close_their_round_but_not_add_a_task(client, nli_owner, nli_task):
    client.force_login(nli_owner)

    response = client.post(
        reverse("admin:tasks_round_changelist"),
        {"action": "close_rounds_into_datasets", "_selected_action": [nli_task.current_round().pk], "confirm": "yes"},
        follow=True,
    )

    # The owner's action reaches the close service, which refuses a round with nothing to split.
    assert "its dev and test splits would be empty" in response.content.decode()
    assert nli_task.rounds.get(number=1).status == Round.Status.OPEN
    assert client.get(reverse("admin:tasks_task_add")).status_code == 403


def test_it_offers_only_owned_tasks_when_adding_a_dataset(client, nli_owner, nli_task):
    client.force_login(nli_owner)

    response = client.get(reverse("admin:tasks_dataset_add"))

    assert list(response.context["adminform"].form.fields["task"].queryset) == [nli_task]
