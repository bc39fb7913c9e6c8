"""A researcher's endpoint goes into an annotation loop only if the researcher allowed it when
submitting it: in the loop, annotators' texts go to the researcher's server under the researcher's
key. Without that consent a task owner's attempt is refused with 400 ``model_consent_missing``
(through the service, the console's loop form and the rounds API) and the loop is unchanged; with
it, or for an endpoint the task's own owner added, the model joins the loop."""

import pytest

from dynabench.errors import RuleError
from tasks import services
from tasks.models import Round
from tests.api.conftest import client_for


@pytest.fixture
def open_round(sentiment_task):
    return sentiment_task.rounds.get(status=Round.Status.OPEN)


def test_the_service_refuses_a_researchers_endpoint_without_consent(owner, researcher, sentiment_task, open_round, make_endpoint_model):
    model = make_endpoint_model(sentiment_task, name="rita's endpoint", owner=researcher)
    before = set(open_round.target_models.values_list("pk", flat=True))

    with pytest.raises(RuleError) as refused:
        services.add_loop_model(round=open_round, model_id=model.pk, acting_user=owner)

    assert refused.value.code == "model_consent_missing" and refused.value.status_code == 400
    assert "rita" in refused.value.message and "has not consented to its use" in refused.value.message
    assert set(open_round.target_models.values_list("pk", flat=True)) == before


def test_the_service_takes_it_with_consent_or_when_the_owner_added_it(owner, researcher, sentiment_task, open_round, make_endpoint_model):
    allowed = make_endpoint_model(sentiment_task, name="rita's allowed endpoint", owner=researcher, loop_allowed=True)
    owners_own = make_endpoint_model(sentiment_task, name="olga's endpoint", owner=owner)

    services.add_loop_model(round=open_round, model_id=allowed.pk, acting_user=owner)
    services.add_loop_model(round=open_round, model_id=owners_own.pk, acting_user=owner)

    assert {allowed.pk, owners_own.pk} <= set(open_round.target_models.values_list("pk", flat=True))


def test_the_console_loop_form_refuses_without_consent_and_adds_with_it(client, owner, researcher, sentiment_task, open_round, make_endpoint_model):
    refused_model = make_endpoint_model(sentiment_task, name="rita's endpoint", owner=researcher)
    allowed_model = make_endpoint_model(sentiment_task, name="rita's allowed endpoint", owner=researcher, loop_allowed=True)
    url = f"/tasks/{sentiment_task.code}/console/rounds/{open_round.number}/loop/add"
    client.force_login(owner)

    refused = client.post(url, {"model": refused_model.pk})
    assert refused.status_code == 400 and "has not consented to its use" in refused.content.decode()
    assert not open_round.target_models.filter(pk=refused_model.pk).exists()

    assert client.post(url, {"model": allowed_model.pk}).status_code == 302
    assert open_round.target_models.filter(pk=allowed_model.pk).exists()


def test_opening_a_round_through_the_api_refuses_without_consent(owner, researcher, sentiment_task, open_round, make_endpoint_model):
    model = make_endpoint_model(sentiment_task, name="rita's endpoint", owner=researcher)
    services.set_round_status(round=open_round, status=Round.Status.CLOSED, acting_user=owner)
    rounds = Round.objects.filter(task=sentiment_task).count()

    response = client_for(owner).post(f"/api/v1/tasks/{sentiment_task.code}/rounds", {"target_models": [model.pk]}, format="json")

    assert response.status_code == 400 and response.json()["code"] == "model_consent_missing"
    assert Round.objects.filter(task=sentiment_task).count() == rounds
