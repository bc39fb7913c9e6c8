"""Admin actions open rounds (``tasks.services.set_round_status``) and close them into datasets
(``validation.round_close.close_round``, which sets the status through the same service)."""

from django.urls import reverse

from tasks.models import MLModel, Round
from tasks.services import set_round_status


def _act(client, action, *rounds, **extra):
    return client.post(
        reverse("admin:tasks_round_changelist"),
        {"action": action, "_selected_action": [r.pk for r in rounds], **extra},
        follow=True,
    )


def test_closing_asks_for_confirmation_with_each_rounds_preview_first(client, admin_user, nli_task, qa_task):
    nli_round, qa_round = nli_task.current_round(), qa_task.current_round()
    client.force_login(admin_user)

    page = _act(client, "close_rounds_into_datasets", nli_round, qa_round).content.decode()

    assert "Yes, close 2 rounds" in page and 'name="confirm" value="yes"' in page
    assert f'data-close-preview="{nli_round.pk}"' in page and "nli-r1-test" in page
    assert "The dev split would be empty" in page and "The test split would be empty" in page  # what refuses it
    assert Round.objects.filter(status=Round.Status.OPEN, pk__in=[nli_round.pk, qa_round.pk]).count() == 2


def test_it_refuses_to_close_rounds_whose_dev_and_test_splits_would_be_empty(client, admin_user, nli_task, qa_task):
    nli_round, qa_round = nli_task.current_round(), qa_task.current_round()
    client.force_login(admin_user)

    response = _act(client, "close_rounds_into_datasets", nli_round, qa_round, confirm="yes")

    assert response.status_code == 200
    assert "its dev and test splits would be empty" in response.content.decode()
    nli_round.refresh_from_db()
    assert nli_round.status == Round.Status.OPEN
    assert not qa_task.datasets.filter(round=qa_round).exists()


def test_it_opens_a_closed_round(client, admin_user, nli_task):
    round2 = Round.objects.create(task=nli_task, number=2, status=Round.Status.CLOSED)
    round2.target_models.add(MLModel.objects.create(task=nli_task, name="in-loop", path="/models/in-loop"))
    client.force_login(admin_user)
    set_round_status(round=nli_task.rounds.get(number=1), status=Round.Status.CLOSED, acting_user=admin_user)

    _act(client, "open_rounds", round2)

    round2.refresh_from_db()
    assert round2.status == Round.Status.OPEN and round2.start is not None and round2.end is None
    assert nli_task.current_round() == round2


def test_it_shows_why_a_round_cannot_be_opened(client, admin_user, nli_task):
    round2 = Round.objects.create(task=nli_task, number=2, status=Round.Status.CLOSED)
    client.force_login(admin_user)

    response = _act(client, "open_rounds", round2)

    assert "round 2: round 1 of nli is still open; close it first" in response.content.decode()
    assert "0 round(s) opened." in response.content.decode()
    round2.refresh_from_db()
    assert round2.status == Round.Status.CLOSED
