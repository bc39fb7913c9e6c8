"""Issue 14: a validation submit reads and writes a bounded number of queries, through the API
and the review page, whatever the round holds (no per-vote or per-example scan)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Example
from tests.api.conftest import client_for
from validation.models import Validation
from validation.tests.conftest import make_example

API_BOUND = 25  # session, user, task, the example (view, then locked), owner/ban/role/quiz checks, earlier vote, gold,
# standing, the vote, tallies (round, hour and vote buckets: a bucket's first row is an INSERT in a savepoint), crowd progress, settle
PAGE_BOUND = 33  # the same, plus the next example leased (its candidates read and claimed) and shown


@pytest.mark.parametrize("earlier", [1, 30])
def test_an_api_verdict_takes_a_bounded_number_of_queries(sentiment_task, annotator, validator, earlier):
    for _ in range(earlier):
        make_example(sentiment_task, annotator, model_wrong=True)
    api = client_for(validator)
    handed = api.get("/api/v1/validations/next?task=sentiment").json()["id"]

    with CaptureQueriesContext(connection) as queries:
        answer = api.post("/api/v1/validations", {"example": handed, "label": "correct"}, format="json")

    assert answer.status_code == 201
    assert len(queries) <= API_BOUND, "\n".join(q["sql"][:160] for q in queries.captured_queries)


@pytest.mark.parametrize("earlier", [1, 30])
def test_a_page_verdict_takes_a_bounded_number_of_queries(client, sentiment_task, annotator, validator, earlier):
    for _ in range(earlier):
        make_example(sentiment_task, annotator, model_wrong=True)
    client.force_login(validator)
    client.get("/tasks/sentiment/validate/")
    handed = Example.objects.get(leased_to=validator)  # what the page's queue leased

    with CaptureQueriesContext(connection) as queries:
        answer = client.post(f"/tasks/sentiment/validate/{handed.pk}/", {"label": "correct", "expected_state": "pending"}, HTTP_HX_REQUEST="true")

    assert answer.status_code == 200 and Validation.objects.filter(example=handed, validator=validator).exists()
    assert len(queries) <= PAGE_BOUND, "\n".join(q["sql"][:160] for q in queries.captured_queries)
