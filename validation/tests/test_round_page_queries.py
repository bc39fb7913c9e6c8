"""The round page's query count does not grow with the number of examples, validations or annotators."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from validation.jobs import compute_round_agreement
from validation.services import record_validation
from validation.tests.conftest import make_example, make_user, leased


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def _grow(task, authors, validators, n):
    for i in range(n):
        example = make_example(task, authors[i % len(authors)], model_wrong=i % 3 != 0)
        for person, label in zip(validators, ("correct", "incorrect", "correct")[: 1 + i % 3]):
            record_validation(example=leased(example, person), validator=person, label=label)


def test_round_page_queries_stay_constant_as_the_round_grows(client, sentiment_task, annotator, owner):
    url = f"/tasks/{sentiment_task.code}/rounds/1/"
    validators = [make_user(f"rater{i}", "validator") for i in range(3)]
    _grow(sentiment_task, [annotator], validators, 3)
    compute_round_agreement(sentiment_task.current_round().pk)
    client.force_login(owner)
    small = _queries(client, url)

    authors = [annotator] + [make_user(f"writer{i}", "annotator") for i in range(12)]
    _grow(sentiment_task, authors, validators, 60)
    compute_round_agreement(sentiment_task.current_round().pk)
    large = _queries(client, url)

    html = client.get(url).content.decode()
    assert '<td id="collected">63</td>' in html and html.count("data-annotator=") == 13
    assert large == small, f"{small} queries with 3 examples, {large} with 63"
