"""The dashboard's people-against-the-generator comparison shows no cost per validated example for
people when the round sets no pay ("no pay set", not "0.00 GBP"), and the cost once pay is set."""

from decimal import Decimal

import pytest

from annotation.models import GenerationRun
from tasks.models import MLModel
from validation.models import RoundPay
from validation.tests.conftest import make_example


@pytest.fixture
def compared(sentiment_task, annotator, owner):
    round = sentiment_task.current_round()
    generator = MLModel.objects.create(task=sentiment_task, name="generator", path="/nowhere")
    GenerationRun.objects.create(round=round, model=generator, requested_by=owner, status=GenerationRun.Status.DONE, candidates=2)
    make_example(sentiment_task, annotator, model_wrong=True, validation_state="verified_correct")
    return round


def _people_cost(client, owner, round):
    client.force_login(owner)
    page = client.get(f"/tasks/{round.task.code}/console/rounds/{round.number}/dashboard").content.decode()
    return page.split('data-generated-comparison')[1].split('data-label="Cost per validated example">')[1].split("</td>")[0]


def test_no_pay_set_says_so(client, owner, compared):
    assert "no pay set" in _people_cost(client, owner, compared)


def test_a_set_pay_gives_the_cost(client, owner, compared):
    RoundPay.objects.create(round=compared, per_example=Decimal("1.50"), currency="GBP")

    assert _people_cost(client, owner, compared).strip() == "1.50 GBP"
