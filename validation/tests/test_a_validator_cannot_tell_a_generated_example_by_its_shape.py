"""Validated blind: what a validator is handed has the same shape whether a person wrote the example
or a generator made it: in the validation API the same keys and the same null fields, all the way
down; on the review page the same markup.

A person's example written through the API (with the seconds they spent on it) and a generator's
candidates (a real run against a real OpenAI-compatible server) are leased in turn; only their
contents may differ."""

import json
import re
from html.parser import HTMLParser

import pytest

from annotation.generation import run_generation, start_generation
from annotation.models import Example, Origin
from tasks.models import MLModel
from tests.api.conftest import client_for

TEXT = "the room was dirty and the service slow"


def _shape(value):
    """The value's keys and nulls, recursively: every other leaf is just "a value"."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return None if value is None else "value"


def _lease_all(api, code: str) -> dict[int, dict]:
    """Every example the validator is handed, by id: lease, answer, lease the next, until none is left."""
    handed = {}
    while (response := api.get("/api/v1/validations/next", {"task": code})).status_code == 200:
        body = response.json()
        assert body["id"] not in handed
        handed[body["id"]] = body
        assert api.post("/api/v1/validations", {"example": body["id"], "label": "correct"}, format="json").status_code == 201
    assert response.status_code == 204
    return handed


@pytest.fixture
def both_origins(sentiment_task, tiny_classifier_dir, make_endpoint_model, owner, annotator, endpoint_server):
    """Round 1 of sentiment with a tiny classifier in the loop, one context, two or more generated
    candidates that fooled it and one person's example."""
    round = sentiment_task.current_round()
    loop = MLModel.objects.create(task=sentiment_task, name="tiny-sentiment", kind=MLModel.Kind.HF_DIRECTORY, path=str(tiny_classifier_dir))
    round.target_models.set([loop])
    context = round.contexts.order_by("pk").first()
    round.contexts.exclude(pk=context.pk).update(active=False)
    generator = make_endpoint_model(sentiment_task, name="generator")
    endpoint_server.scripted = [json.dumps({"text": TEXT, "label": label}) for label in ("positive", "negative", "neutral")]
    run_generation(start_generation(round=round, model=generator, per_context=3, acting_user=owner).pk)
    written = client_for(annotator).post("/api/v1/examples", {
        "context": context.pk, "input": {"text": "the staff smiled but the soup was cold"}, "target": {"label": "neutral"},
        "time_spent": 41.5,
    }, format="json")
    assert written.status_code == 201, written.content
    return sentiment_task


def _by_origin(handed: dict) -> tuple[object, list]:
    origins = dict(Example.objects.filter(pk__in=handed).values_list("pk", "origin"))
    persons = [handed[pk] for pk, origin in origins.items() if origin == Origin.WRITTEN]
    generated = [handed[pk] for pk, origin in origins.items() if origin == Origin.GENERATED]
    assert len(persons) == 1 and generated
    return persons[0], generated


def test_the_api_hands_both_with_the_same_keys_and_nulls(both_origins, validator):
    handed = _lease_all(client_for(validator), both_origins.code)

    person, generated = _by_origin(handed)
    for candidate in generated:
        assert _shape(candidate) == _shape(person)
    for body in handed.values():
        assert "time_spent" not in body and "origin" not in body and "suggestion" not in json.dumps(body)


class _Markup(HTMLParser):
    """The tags and attribute names of a page, without its text or attribute values."""

    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, sorted(name for name, _ in attrs)))


def _card(page: str) -> list:
    """The markup of the review card: the example's section and the verdict form."""
    card = re.search(r'<section class="card" aria-labelledby="review-heading".*?</form>', page, re.S).group(0)
    parser = _Markup()
    parser.feed(card)
    return parser.tags


def test_the_review_page_shows_both_with_the_same_markup(both_origins, validator, client):
    client.force_login(validator)
    api = client_for(validator)
    handed = {}
    while (page := client.get(f"/tasks/{both_origins.code}/validate/")).context["example"] is not None:
        example = page.context["example"]
        handed[example.pk] = _card(page.content.decode())
        assert api.post("/api/v1/validations", {"example": example.pk, "label": "correct"}, format="json").status_code == 201

    person, generated = _by_origin(handed)
    for candidate in generated:
        assert candidate == person
