"""A gold item in the review queue looks like any pending example on the page and in the API;
its verdict stays on the server; a double-submitted gold answer counts once; skipping gives it back."""

from django.urls import reverse

from annotation.models import Example, ValidationState
from validation.models import GoldAssignment, Validation
from validation.queue import next_example_for
from validation.services import record_validation
from validation.tests.gold_helpers import configure, gold_items
from tests.html_support import without_csrf_tokens
from validation.tests.conftest import leased


def test_the_review_page_shows_a_gold_item_as_a_pending_example_without_its_verdict(client, sentiment_task, annotator, owner, validator):
    configure(sentiment_task, gold_rate=1.0)
    [(example, verdict)] = gold_items(sentiment_task, annotator, owner, 1, start=1)  # verdict: incorrect
    client.force_login(validator)

    page = client.get(reverse("validation:queue", args=["sentiment"]))
    body = page.content.decode()
    assert page.status_code == 200 and page.context["example"].pk == example.pk
    assert 'name="expected_state" value="pending"' in body
    shown = without_csrf_tokens(body)
    assert "verified" not in shown and "gold" not in shown.lower()
    # Reloading shows the same item, like a leased example.
    assert client.get(reverse("validation:queue", args=["sentiment"])).context["example"].pk == example.pk

    answer = client.post(reverse("validation:submit", args=["sentiment", example.pk]), {"label": "correct", "expected_state": "pending", "round": 1})
    assert answer.status_code == 200 and f"Saved: correct on example {example.pk}.".encode() in answer.content
    again = client.post(reverse("validation:submit", args=["sentiment", example.pk]), {"label": "incorrect", "expected_state": "pending", "round": 1})
    assert again.status_code == 400
    check = Validation.objects.get(example=example, validator=validator)
    assert (check.label, check.gold_check, check.counts) == ("correct", True, False)
    assert Example.objects.get(pk=example.pk).validation_state == ValidationState.VERIFIED_INCORRECT  # untouched


def test_the_api_hands_out_and_takes_a_gold_item_like_any_other(client, sentiment_task, annotator, owner, validator):
    configure(sentiment_task, gold_rate=1.0)
    [(example, verdict)] = gold_items(sentiment_task, annotator, owner, 1)
    client.force_login(validator)

    served = client.get("/api/v1/validations/next?task=sentiment").json()
    assert served["id"] == example.pk and served["validation_state"] == "pending" and "gold" not in str(served).lower()
    answer = client.post("/api/v1/validations", {"example": example.pk, "label": "correct"}, content_type="application/json")
    assert answer.status_code == 201 and answer.json()["example_state"] == "pending"
    twice = client.post("/api/v1/validations", {"example": example.pk, "label": "correct"}, content_type="application/json")
    assert twice.status_code == 400 and twice.json()["code"] == "already_validated"
    assert Validation.objects.filter(example=example, validator=validator).count() == 1


def test_a_gold_item_not_served_takes_no_answer_and_a_skip_gives_it_back(sentiment_task, annotator, owner, validator):
    configure(sentiment_task, gold_rate=1.0)
    [(first, _), (second, _)] = gold_items(sentiment_task, annotator, owner, 2)
    served = next_example_for(validator=validator, round=first.round)
    assert served.pk == first.pk
    # The other gold item was not handed to them: it is a settled example like any other.
    from dynabench.errors import RuleError
    import pytest

    with pytest.raises(RuleError) as settled:
        record_validation(example=leased(second, validator), validator=validator, label="correct")
    assert settled.value.code == "already_settled"

    from validation.queue import release_lease

    assert release_lease(example=served, validator=validator) is True
    assert not GoldAssignment.objects.filter(validator=validator).exists()
    assert next_example_for(validator=validator, round=first.round, exclude_ids=[first.pk]).pk == second.pk
