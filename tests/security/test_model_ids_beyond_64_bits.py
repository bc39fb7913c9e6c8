"""Finding 8: a model id beyond 64 bits in ``target_models`` is a 400 naming the field.

Old code: ``open_round`` passed it to the database, which raised ``OverflowError`` (a 500).
"""

import pytest

from dynabench.errors import RuleError
from tasks.models import Round
from tasks.services import open_round
from tests.api.conftest import client_for


@pytest.fixture
def round_one_closed(sentiment_task):
    Round.objects.filter(task=sentiment_task, number=1).update(status=Round.Status.CLOSED)
    return sentiment_task


def test_the_api_answers_400(owner, round_one_closed):
    response = client_for(owner).post("/api/v1/tasks/sentiment/rounds", {"target_models": [2**64]}, format="json")

    assert response.status_code == 400
    assert response.json()["field"].startswith("target_models")
    assert round_one_closed.rounds.count() == 1


def test_the_service_refuses_it_for_every_surface(owner, round_one_closed):
    with pytest.raises(RuleError) as refused:
        open_round(task=round_one_closed, acting_user=owner, target_model_ids=[2**70])

    assert refused.value.field == "target_models"
    assert "integers from 1 to 9223372036854775807" in refused.value.message
    assert round_one_closed.rounds.count() == 1
