"""An owner picks a round's AI validator on the console's AI help page; the round dashboard, the API
(``GET /api/v1/rounds/{id}/judge``) and the client's ``judge_agreement()`` then show the judge's κ against
the consensus beside each validator's, with intervals, the confusion matrix and the judge's reasons where
it disagreed. Other people get a 403."""

import pytest
from rest_framework.authtoken.models import Token

from annotation.models import Example, ValidationState
from dynabench_client import DynabenchClient
from tests.api.conftest import client_for
from validation.judge_models import AIVote, RoundJudge
from validation.models import Validation
from validation.tests.conftest import make_example, make_user

STATE = {"correct": ValidationState.VERIFIED_CORRECT, "incorrect": ValidationState.VERIFIED_INCORRECT}


@pytest.fixture
def judged_round(sentiment_task, annotator, owner, make_endpoint_model):
    """12 settled examples, three validators (the third disagrees on 4), a judge that disagrees on 2."""
    round = sentiment_task.current_round()
    judge = make_endpoint_model(sentiment_task, name="judge-model")
    people = [make_user(name, "validator") for name in ("vera", "viktor", "wanda")]
    for i in range(12):
        truth = "correct" if i % 3 else "incorrect"
        other = "incorrect" if truth == "correct" else "correct"
        example = make_example(sentiment_task, annotator)
        for n, person in enumerate(people):
            Validation.objects.create(example=example, validator=person, label=other if n == 2 and i < 4 else truth)
        Example.objects.filter(pk=example.pk).update(validation_state=STATE[truth])
        AIVote.objects.create(example=example, round=round, model=judge, label=other if i < 2 else truth,
                              reason="the label does not fit" if i < 2 else "fits")
    return round, judge


def test_the_owner_turns_the_judge_on_and_the_dashboard_shows_it_beside_each_validator(judged_round, owner, client):
    round, judge = judged_round
    client.force_login(owner)

    page = client.get(f"/tasks/{round.task.code}/console/rounds/{round.number}/ai/")
    assert 'action="/tasks/sentiment/console/rounds/1/ai/judge"' in page.content.decode()
    saved = client.post(f"/tasks/{round.task.code}/console/rounds/{round.number}/ai/judge", {"model": judge.pk, "policy": "one_vote", "kappa_threshold": 0.5,
                                                                                          "min_settled": 10, "triage_confidence": 0.9})
    assert saved.status_code == 302
    assert RoundJudge.objects.get(round=round).model == judge
    page = client.get(f"/tasks/{round.task.code}/console/rounds/{round.number}/ai/").content.decode()
    # κ = 0.625 exactly: rounded as the dashboard's table rounds it
    assert "Counting: its κ against people is 0.63 on 12 settled examples" in page, page[page.find("data-judge-counting"):][:200]

    html = client.get(f"/tasks/{round.task.code}/console/rounds/{round.number}/dashboard").content.decode()
    assert 'data-rater="judge" data-model="judge-model"' in html
    for name in ("vera", "viktor", "wanda"):
        assert f'data-rater="person" data-validator="{name}"' in html
    assert html.count("data-kappa") == 4
    assert "the label does not fit" in html


def test_the_api_and_the_client_give_the_figures_to_owners_only(judged_round, owner, validator, live_server):
    round, _ = judged_round

    assert client_for(validator).get(f"/api/v1/rounds/{round.pk}/judge").status_code == 403
    report = DynabenchClient(api_key=Token.objects.create(user=owner).key, base_url=live_server.url).judge_agreement(round.pk)

    judge = report["judges"][0]
    assert judge["vs_consensus"]["n"] == 12 and judge["vs_consensus"]["accuracy"]["value"] == pytest.approx(10 / 12)
    assert judge["vs_consensus"]["confusion"]["matrix"][:2] == [[7, 1, 0], [1, 3, 0]]
    assert [d["reason"] for d in judge["disagreements"]] == ["the label does not fit"] * 2
    people = {p["validator"]: p["vs_consensus"] for p in report["validators"]}
    assert people["vera"]["accuracy"]["value"] == 1.0 and people["vera"]["kappa"]["value"] == pytest.approx(1.0)
    assert people["wanda"]["accuracy"]["value"] == pytest.approx(8 / 12)
    assert people["vera"]["kappa"]["low"] is not None
