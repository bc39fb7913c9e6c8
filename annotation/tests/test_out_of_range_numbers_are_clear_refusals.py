"""Issue 28 (inputs): a QA answer with a huge ``answer_start`` (``float()`` of a 400-digit integer
raised ``OverflowError``) or nested answers, and ``write/context?exclude=`` with 2**100 (SQLite cannot
hold it: ``OverflowError``), answered 500. Each is now a clear 4xx and nothing is stored."""

import pytest

from annotation.models import Example
from annotation.services import create_example
from annotation.tests.helpers import HTMX
from dynabench.errors import RuleError
from tests.api.conftest import client_for

QUESTION = "When did the fire of London begin?"


@pytest.mark.parametrize("start, phrase", [
    (10**400, "past the end of the passage"),
    (10**18, "past the end of the passage"),
    (float("1e300"), "past the end of the passage"),
    ("9" * 5000, "must be a character position"),
    (-3, "must be a character position"),
    ({"nested": [[0]]}, "must be a character position"),
])
def test_a_huge_or_odd_answer_start_is_a_clear_refusal(annotator, qa_context, start, phrase):
    passage = qa_context.data["passage"]
    with pytest.raises(RuleError) as refused:
        create_example(user=annotator, context=qa_context, input={"question": QUESTION},
                       target={"answers": [{"text": passage[:8], "answer_start": start}]})
    assert phrase in refused.value.message and refused.value.status_code == 400
    assert not Example.objects.exists()


@pytest.mark.parametrize("answers", [
    [[{"text": "London", "answer_start": 0}]],
    [{"text": {"text": ["London"]}, "answer_start": 0}],
    {"answers": [{"text": "London", "answer_start": 0}]},
])
def test_nested_answers_through_the_api_are_a_400(annotator, qa_context, answers):
    response = client_for(annotator).post(
        "/api/v1/examples", {"context": qa_context.pk, "input": {"question": QUESTION}, "target": {"answers": answers}}, format="json",
    )
    assert response.status_code == 400, response.content[:300]
    assert response.json()["field"] == "answer"
    assert not Example.objects.exists()


@pytest.mark.parametrize("exclude", [str(2**100), str(2**63), "²", "-1"])
def test_an_excluded_context_id_out_of_range_is_a_400(client, annotator, sentiment_task, sentiment_context, exclude):
    client.force_login(annotator)

    response = client.get(f"/tasks/{sentiment_task.code}/write/context", {"exclude": exclude}, **HTMX)

    assert response.status_code == 400
    assert "context ids" in response.content.decode()


def test_an_excluded_context_id_in_range_still_gives_another_context(client, annotator, sentiment_task, sentiment_context):
    client.force_login(annotator)
    response = client.get(f"/tasks/{sentiment_task.code}/write/context", {"exclude": str(2**63 - 1)}, **HTMX)
    assert response.status_code == 200
