"""Admin actions open and close rounds through ``tasks.services.set_round_status``."""

from django.urls import reverse

from tasks.models import Round


def _act(client, action, *rounds):
    return client.post(
        reverse("admin:tasks_round_changelist"),
        {"action": action, "_selected_action": [r.pk for r in rounds]},
        follow=True,
    )


def test_it_closes_the_selected_rounds_and_records_when(client, admin_user, nli_task, qa_task):
    nli_round, qa_round = nli_task.current_round(), qa_task.current_round()
    client.force_login(admin_user)

    response = _act(client, "close_rounds", nli_round, qa_round)

    assert response.status_code == 200
    assert "2 round(s) closed." in response.content.decode()
    nli_round.refresh_from_db()
    assert nli_round.status == Round.Status.CLOSED and nli_round.end is not None


def test_it_opens_a_closed_round(client, admin_user, nli_task):
    round2 = Round.objects.create(task=nli_task, number=2, status=Round.Status.CLOSED)
    client.force_login(admin_user)

    _act(client, "open_rounds", round2)

    round2.refresh_from_db()
    assert round2.status == Round.Status.OPEN and round2.start is not None and round2.end is None
    assert nli_task.current_round() == round2
