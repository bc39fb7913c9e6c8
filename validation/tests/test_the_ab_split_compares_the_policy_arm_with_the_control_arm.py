"""With the judge's A/B split on, each example lands in a stable arm (a hash of the round's secret and
its id: the same every time, about half each), only the policy arm's votes may count, and the round's
judge figures compare the arms: people's votes per settled example, hours to settle, agreement with
gold and the judge's tokens, with intervals."""

from datetime import timedelta

from annotation.models import Example, ValidationState
from tasks.models import MLModel
from validation.judge_agreement import policy_arm
from validation.judge_models import AIVote, RoundJudge
from validation.judge_policy import counted_as
from validation.judge_selectors import judge_report
from validation.models import GoldItem, Validation
from validation.tests.conftest import make_example, make_user


def test_the_arm_is_stable_and_about_half():
    arms = [policy_arm(secret="s3cret", example_id=i) for i in range(1000)]
    assert arms == [policy_arm(secret="s3cret", example_id=i) for i in range(1000)]
    assert 450 <= arms.count("policy") <= 550


def test_a_control_vote_never_counts(sentiment_task):
    judge = RoundJudge(policy="one_vote", counting=True)
    assert counted_as(judge, AIVote(label="correct", arm="control")) == ""
    assert counted_as(judge, AIVote(label="correct", arm="policy")) == "vote"


def test_the_report_and_the_dashboard_compare_the_arms(sentiment_task, annotator, owner, client):
    round = sentiment_task.current_round()
    judge = MLModel.objects.create(task=sentiment_task, name="judge", kind=MLModel.Kind.ENDPOINT)
    people = [make_user(f"p{i}", "validator") for i in range(3)]
    for i in range(8):
        arm = "policy" if i % 2 else "control"
        example = make_example(sentiment_task, annotator)
        for person in people[: 2 if arm == "policy" else 3]:
            v = Validation.objects.create(example=example, validator=person, label="correct")
            Validation.objects.filter(pk=v.pk).update(created_at=example.created_at + timedelta(hours=1 if arm == "policy" else 3))
        Example.objects.filter(pk=example.pk).update(validation_state=ValidationState.VERIFIED_CORRECT)
        AIVote.objects.create(example=example, round=round, model=judge, label="correct", arm=arm, prompt_tokens=100,
                              completion_tokens=10, counted_as="vote" if arm == "policy" else "")
        if i < 2:
            GoldItem.objects.create(round=round, example=example, verdict="correct")

    ab = {a["arm"]: a for a in judge_report(round)["ab"]}

    assert ab["policy"]["examples"] == ab["control"]["examples"] == 4
    assert ab["policy"]["validations"]["mean"] == 2 and ab["control"]["validations"]["mean"] == 3
    assert ab["policy"]["hours_to_settle"]["mean"] == 1 and ab["control"]["hours_to_settle"]["mean"] == 3
    assert ab["policy"]["gold_agreement"] == {"n": 1, "mean": 1.0, "low": 1.0, "high": 1.0}
    assert ab["control"]["tokens"]["mean"] == 110
    client.force_login(owner)
    html = client.get(f"/tasks/{sentiment_task.code}/console/rounds/{round.number}/dashboard").content.decode()
    assert 'data-arm="policy"' in html and 'data-arm="control"' in html and 'data-metric="hours"' in html
