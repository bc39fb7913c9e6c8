"""The owner's gold page lists pairs of validators who agree with each other far more often than
with gold or with the other validators (``gold.collusion_report``), and no pair when votes are honest."""

from django.urls import reverse

from validation.models import Validation
from validation.tests.conftest import make_example, make_user
from validation.tests.gold_helpers import gold_items


def test_a_pair_voting_together_against_everyone_is_flagged_on_the_gold_page(client, sentiment_task, annotator, owner):
    honest = [make_user(f"honest{i}", "validator") for i in range(2)]
    pair = [make_user(f"pair{i}", "validator") for i in range(2)]
    for example, verdict in gold_items(sentiment_task, annotator, owner, 4):
        for user in honest:
            Validation.objects.create(example=example, validator=user, label=verdict, gold_check=True, counts=False)
        for user in pair:
            Validation.objects.create(example=example, validator=user, label="correct" if verdict == "incorrect" else "incorrect",
                                      gold_check=True, counts=False)
    for n in range(6):
        example = make_example(sentiment_task, annotator, text=f"Plainly negative text {n}")
        for user in honest:
            Validation.objects.create(example=example, validator=user, label="incorrect")
        for user in pair:
            Validation.objects.create(example=example, validator=user, label="correct")
    client.force_login(owner)

    page = client.get(reverse("validation:gold", args=["sentiment"]))

    assert page.status_code == 200
    body = page.content.decode()
    assert 'data-pair="pair0 pair1"' in body and "honest0 honest1" not in body


def test_no_pair_stands_out_when_votes_are_honest(client, sentiment_task, annotator, owner):
    for n in range(6):
        example = make_example(sentiment_task, annotator, text=f"Text {n}")
        for i in range(3):
            Validation.objects.create(example=example, validator=make_user(f"v{n}-{i}", "validator"), label="correct")
    client.force_login(owner)
    assert 'id="collusion-none"' in client.get(reverse("validation:gold", args=["sentiment"])).content.decode()
