"""A round cannot be opened with no model in the loop, on any surface (service, API, console,
admin): its write page could take no example and it could never close. The message says what to do."""

import pytest

from dynabench.errors import RuleError
from tasks.models import MLModel, Round
from tasks.services import open_round, set_round_status
from tests.api.conftest import client_for


@pytest.fixture
def round1_closed(owner, sentiment_task):
    set_round_status(round=sentiment_task.current_round(), status=Round.Status.CLOSED, acting_user=owner)
    return sentiment_task


def test_the_service_refuses_it_with_what_to_do(owner, round1_closed):
    with pytest.raises(RuleError) as refused:
        open_round(task=round1_closed, acting_user=owner)

    assert refused.value.code == "no_model_in_loop" and refused.value.field == "target_models"
    assert "Choose at least one model in the loop" in refused.value.message
    assert round1_closed.rounds.count() == 1


def test_collecting_without_a_model_is_refused_where_the_kind_needs_one(owner, round1_closed):
    assert not round1_closed.spec.collects_without_model
    with pytest.raises(RuleError) as refused:
        open_round(task=round1_closed, acting_user=owner, without_model=True)

    assert refused.value.code == "kind_needs_a_model" and "cannot collect without a model" in refused.value.message


def test_the_api_and_the_console_say_so(client, owner, round1_closed):
    response = client_for(owner).post("/api/v1/tasks/sentiment/rounds", {}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "no_model_in_loop"

    client.force_login(owner)
    page = client.post("/tasks/sentiment/console/rounds/open", {"loop_rule": "round_robin"})
    assert page.status_code == 400
    assert 'data-error-for="target_models">Choose at least one model in the loop' in page.content.decode()
    assert round1_closed.rounds.count() == 1


def test_the_admin_cannot_reopen_a_round_left_without_a_model(owner, round1_closed):
    round2 = Round.objects.create(task=round1_closed, number=2, status=Round.Status.CLOSED)

    with pytest.raises(RuleError, match="has no model in the loop"):
        set_round_status(round=round2, status=Round.Status.OPEN, acting_user=owner)

    round2.target_models.add(MLModel.objects.create(task=round1_closed, name="in-loop", path="/models/in-loop"))
    assert set_round_status(round=round2, status=Round.Status.OPEN, acting_user=owner).status == Round.Status.OPEN


def test_a_new_round_carries_the_contexts_over_or_says_it_has_none(owner, round1_closed):
    from tasks.services import round_gaps

    model = MLModel.objects.create(task=round1_closed, name="in-loop", path="/models/in-loop")
    round1 = round1_closed.rounds.get(number=1)

    round2 = open_round(task=round1_closed, acting_user=owner, target_model_ids=[model.pk], contexts_from=1)
    assert round2.contexts.count() == round1.contexts.filter(active=True).count() > 0
    assert round_gaps(round2) == []

    set_round_status(round=round2, status=Round.Status.CLOSED, acting_user=owner)
    round3 = open_round(task=round1_closed, acting_user=owner, target_model_ids=[model.pk])
    assert round_gaps(round3) == ["No context yet: carry them over from an earlier round or upload a file (Uploads)."]
