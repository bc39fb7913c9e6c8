"""Attack: three scripted crowd validators, entered through a Prolific study link from one
address, try to make a mislabelled example verified through the review page, and to be paid
for it. New crowd workers are on gold probation (the queue serves them gold first; their
votes count only after the owner's standing), and workers who entered from one address count
as one: the example stays pending, and the bonus files pay nothing for it."""

import re

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from annotation.models import CrowdWorker, Example
from annotation.tests.crowd_helpers import entry_throttles_off, enter, mturk_study, pid, prolific_study, prolific_url  # noqa: F401 (a fixture)
from validation import pay
from validation.models import GoldItem, Validation
from validation.tests.conftest import make_example
from validation.tests.gold_helpers import configure, gold_items

pytestmark = pytest.mark.usefixtures("entry_throttles_off")

ATTACKER_ADDRESS = "203.0.113.66"


@pytest.fixture
def campaign(sentiment_task, owner, annotator):
    configure(sentiment_task, gold_rate=0.1, gold_min_answers=3, gold_accuracy_threshold=0.7, validations_needed=3)
    round = sentiment_task.current_round()
    gold_items(sentiment_task, annotator, owner, 6)
    # The mislabelled example: a crowd author (an MTurk study) labels an obviously negative text positive.
    author_study = mturk_study(round)
    author = enter(author_study, "A1AUTHORWORKER", "3AUTHORASSIGN", address="198.51.100.20").worker.user
    bad = make_example(sentiment_task, author, model_wrong=True, label="positive", text="Vile, rude staff and a filthy room.")
    validate_study = prolific_study(round, activity="validate", required=3)
    pay.set_round_pay(round=round, acting_user=owner, currency="GBP", per_example="1.00", per_validation="0.10",
                      bonus_per_fooling="2.00")
    return round, bad, validate_study


def colluders(study, n=3):
    """``n`` browsers that entered the study from one address with made-up ids, granted the
    validator role (as a passed quiz would)."""
    clients = []
    for i in range(n):
        client = Client()
        assert client.get(prolific_url(study, pid(f"colluder-{i}")), REMOTE_ADDR=ATTACKER_ADDRESS).status_code == 302
        clients.append(client)
    for worker in CrowdWorker.objects.filter(platform="prolific"):
        worker.user.groups.add(Group.objects.get(name="validator"))
    return clients


def vote_until(client, target_id, answer) -> int:
    """Validate whatever the review page serves (``answer(example_id)`` gives the label) until the
    target example was voted on or nothing is left; return how many verdicts were posted."""
    posted = 0
    for _ in range(20):
        page = client.get("/tasks/sentiment/validate/?round=1")
        found = re.search(r'action="/tasks/sentiment/validate/(\d+)/"', page.content.decode())
        if found is None:
            return posted
        example_id = int(found.group(1))
        response = client.post(f"/tasks/sentiment/validate/{example_id}/", {"label": answer(example_id), "round": 1})
        assert response.status_code == 200, response.content[:500]
        posted += 1
        if example_id == target_id:
            return posted
    return posted


def assert_nothing_paid_for(bad, round):
    bad.refresh_from_db()
    assert bad.validation_state == "pending"
    rows = {r.username: r for p in ("prolific", "mturk") for r in pay.pay_rows(round, platform=p)}
    assert all(r.examples == 0 and r.fooling == 0 for r in rows.values())
    assert pay.bonus_file(round, platform="mturk")[1] == "WorkerId,AssignmentId,BonusAmount,Reason\n"
    voters = set(Validation.objects.filter(example=bad).values_list("validator__username", flat=True))
    assert all(rows[name].validations == 0 for name in voters)
    assert pay.bonus_file(round, platform="prolific")[1] == ""


def test_scripted_colluders_who_say_correct_to_everything_never_count(campaign):
    round, bad, study = campaign
    for client in colluders(study):
        vote_until(client, bad.pk, lambda _id: "correct")

    assert Validation.objects.filter(example=bad, label="correct").count() == 3
    assert not Validation.objects.filter(example=bad, counts=True).exists()  # all three on probation: gold 3 of 6 right
    assert_nothing_paid_for(bad, round)


def test_colluders_who_pass_gold_still_count_once_from_one_address(campaign):
    round, bad, study = campaign
    verdicts = dict(GoldItem.objects.values_list("example_id", "verdict"))
    for client in colluders(study):
        vote_until(client, bad.pk, lambda example_id: verdicts.get(example_id, "correct"))

    assert Validation.objects.filter(example=bad, label="correct").count() == 3
    assert Validation.objects.filter(example=bad, counts=True).count() == 1  # one person, one vote
    assert_nothing_paid_for(bad, round)


def test_three_honest_workers_from_three_addresses_do_settle_it(campaign, sentiment_task):
    round, bad, study = campaign
    verdicts = dict(GoldItem.objects.values_list("example_id", "verdict"))
    for i in range(3):
        client = Client()
        assert client.get(prolific_url(study, pid(f"honest-{i}")), REMOTE_ADDR=f"198.51.100.{i + 1}").status_code == 302
        CrowdWorker.objects.get(platform_worker_id=pid(f"honest-{i}")).user.groups.add(Group.objects.get(name="validator"))
        vote_until(client, bad.pk, lambda example_id: verdicts.get(example_id, "incorrect"))

    assert Example.objects.get(pk=bad.pk).validation_state == "verified_incorrect"
    rows = pay.pay_rows(round, platform="prolific")
    assert sorted(str(r.total) for r in rows) == ["0.10", "0.10", "0.10"]
