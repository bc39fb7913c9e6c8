"""An AI validator's vote on an example is never shown to the people validating it: neither the review
page nor the validation API (the next example, the validator's validations) carries its label, its reason
or the judge's name, and the vote does not move the example's consensus."""

import pytest

from annotation.models import ValidationState
from tasks.models import MLModel
from tests.api.conftest import client_for
from validation.judge_models import AIVote
from validation.tests.conftest import make_example

SECRET_REASON = "zebra-reason-only-the-owner-reads"
JUDGE_NAME = "quokka-judge"


@pytest.fixture
def voted_example(sentiment_task, annotator):
    example = make_example(sentiment_task, annotator)
    judge = MLModel.objects.create(task=sentiment_task, name=JUDGE_NAME, kind=MLModel.Kind.ENDPOINT)
    AIVote.objects.create(example=example, round=example.round, model=judge, label="incorrect", reason=SECRET_REASON,
                          confidence=0.97)
    return example


def _hidden(text: str) -> bool:
    return SECRET_REASON not in text and JUDGE_NAME not in text and "ai_vote" not in text and "0.97" not in text


def test_the_review_page_does_not_show_it(voted_example, validator, client):
    client.force_login(validator)

    page = client.get(f"/tasks/{voted_example.round.task.code}/validate/")

    assert page.status_code == 200 and page.context["example"].pk == voted_example.pk
    assert _hidden(page.content.decode())


def test_the_api_does_not_show_it_and_it_does_not_count(voted_example, validator):
    api = client_for(validator)

    handed = api.get("/api/v1/validations/next", {"task": voted_example.round.task.code})
    assert handed.status_code == 200 and handed.json()["id"] == voted_example.pk
    assert _hidden(handed.content.decode())
    assert api.post("/api/v1/validations", {"example": voted_example.pk, "label": "correct"}, format="json").status_code == 201
    assert _hidden(api.get("/api/v1/validations").content.decode())

    voted_example.refresh_from_db()
    assert voted_example.validation_state == ValidationState.PENDING
    assert (voted_example.correct_count, voted_example.incorrect_count) == (1, 0)
