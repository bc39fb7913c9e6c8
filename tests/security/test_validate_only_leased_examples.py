"""Issue 19 finding 4: a validator validates only the example the review queue leased to them.

Old code: three fresh validator accounts posted verdicts on a fourth account's example by
its id, through the API and the review page, and settled it "verified fooled" between them.
Now each such verdict is a 403 ``not_leased`` and nothing is written; through the queue the
same verdicts are taken. A lease that ran out still counts until the queue hands the example
to somebody else.
"""

from datetime import timedelta

from django.contrib.auth.models import Group, User
from django.utils import timezone

from annotation.models import Example, ValidationState
from tests.api.conftest import client_for
from validation.models import Validation
from validation.tests.conftest import make_example


def _validators(n):
    group = Group.objects.get(name="validator")
    people = [User.objects.create_user(f"sock{i}", password="pw-sock-puppet-1") for i in range(n)]
    for person in people:
        person.groups.add(group)
    return people


def test_verdicts_by_id_without_the_queue_are_refused_and_change_nothing(sentiment_task, annotator, client):
    example = make_example(sentiment_task, annotator, model_wrong=True)
    first, second, third = _validators(3)

    answers = [client_for(first).post("/api/v1/validations", {"example": example.pk, "label": "correct"}, format="json")]
    client.force_login(second)
    answers.append(client.post(f"/tasks/sentiment/validate/{example.pk}/", {"label": "correct", "expected_state": "pending"}, HTTP_HX_REQUEST="true"))
    answers.append(client_for(third).post("/api/v1/validations", {"example": example.pk, "label": "correct"}, format="json"))

    assert [a.status_code for a in answers] == [403, 403, 403]
    assert answers[0].json()["code"] == "not_leased"
    assert "did not hand you this example" in answers[1].content.decode()
    assert not Validation.objects.exists()
    assert Example.objects.get(pk=example.pk).validation_state == ValidationState.PENDING


def test_the_same_verdicts_through_the_queue_are_taken(sentiment_task, annotator):
    example = make_example(sentiment_task, annotator, model_wrong=True)

    for person in _validators(3):
        api = client_for(person)
        assert api.get("/api/v1/validations/next?task=sentiment").json()["id"] == example.pk
        assert api.post("/api/v1/validations", {"example": example.pk, "label": "correct"}, format="json").status_code == 201

    assert Example.objects.get(pk=example.pk).validation_state == ValidationState.VERIFIED_CORRECT


def test_a_lapsed_lease_counts_until_the_queue_hands_the_example_to_someone_else(sentiment_task, annotator):
    example = make_example(sentiment_task, annotator, model_wrong=True)
    slow, quick = _validators(2)
    slow_api, quick_api = client_for(slow), client_for(quick)
    slow_api.get("/api/v1/validations/next?task=sentiment")
    Example.objects.filter(pk=example.pk).update(leased_until=timezone.now() - timedelta(minutes=1))

    assert quick_api.get("/api/v1/validations/next?task=sentiment").json()["id"] == example.pk  # re-leased to quick
    late = slow_api.post("/api/v1/validations", {"example": example.pk, "label": "incorrect"}, format="json")
    on_time = quick_api.post("/api/v1/validations", {"example": example.pk, "label": "correct"}, format="json")

    assert (late.status_code, late.json()["code"]) == (403, "not_leased")
    assert on_time.status_code == 201
    assert list(Validation.objects.values_list("validator__username", flat=True)) == ["sock1"]
