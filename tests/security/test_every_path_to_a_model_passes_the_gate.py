"""Every path that calls a model passes one gate (``tasks/loop/gate.py``): a researcher's endpoint is
called for a purpose only with their consent to it, whoever acts; the calls that are made are recorded
with their purpose; and nothing reaches an endpoint outside the gate.

The table: each path (the loop's answer, a chat turn's model, Suggest, generation, transfer, the AI
validator's vote, evaluation, *Test connection*) x each acting role x consented or not -> whether the call reaches the
real local endpoint (its recorded requests) and the audit row it leaves."""

import asyncio

import pytest

from dynabench.errors import RuleError
from tasks.loop import gate
from tasks.loop.endpoints.aio import acall
from tasks.loop.endpoints.calls import call, post_json
from tasks.loop.endpoints.probe import acheck_connection
from tasks.loop.registry import get_predictor
from tasks.models import Endpoint, ModelCall, Purpose

MESSAGES = [{"role": "user", "content": "Say yes."}]
ROLES = ("owner", "submitter", "annotator", "validator", "researcher")


@pytest.fixture
def people(owner, researcher, annotator, validator, django_user_model):
    other = django_user_model.objects.create_user("other-researcher", password="x-long-password-1")
    from dynabench.roles import ensure_role_groups
    from django.contrib.auth.models import Group

    ensure_role_groups()
    other.groups.add(Group.objects.get(name="researcher"))
    return {"owner": owner, "submitter": researcher, "annotator": annotator, "validator": validator, "researcher": other}


@pytest.fixture
def researchers_endpoint(sentiment_task, researcher, make_endpoint_model):
    return make_endpoint_model(sentiment_task, name="rita-endpoint", owner=researcher)


def _consent(model, purposes):
    Endpoint.objects.filter(model=model).update(consents=list(purposes))


def _by_path(path, model, user, client):
    """Drive ``path`` once for ``model`` on behalf of ``user``, as its service does (*Test connection*
    through the console's view, the one place it is offered)."""
    round = model.task.current_round()
    if path == "test":
        client.force_login(user)
        answer = client.post(f"/tasks/{model.task.code}/console/endpoints/{model.pk}/test")
        if answer.status_code == 403:
            raise RuleError(gate.CONSENT_MISSING, f"{model.name}: the console is the task owners'")
        if gate.CONSENT_MISSING in answer.content.decode() or "Only the submitter" in answer.content.decode():
            raise RuleError(gate.CONSENT_MISSING, f"{model.name}: refused at the gate")
        return answer
    if path == "judge":  # the AI validator's job (the platform's, for no one) votes on a new example
        return _judge_once(model, user)
    purpose = {"loop": Purpose.LOOP, "assist": Purpose.ASSIST, "generate": Purpose.GENERATE,
               "transfer": Purpose.TRANSFER, "evaluation": Purpose.EVALUATION}[path]
    with gate.admit(model, purpose, user=user, round=round):
        return get_predictor(model).predict([{"text": f"{path} by {getattr(user, 'username', '')}"}])


def _judge_once(model, user):
    from validation.judge import judge_examples
    from validation.judge_models import RoundJudge
    from validation.tests.conftest import make_example

    round = model.task.current_round()
    RoundJudge.objects.update_or_create(round=round, defaults={"model": model})
    example = make_example(model.task, user, text=f"judge by {user.username}")
    summary = judge_examples(round.pk, [example.pk])
    if "stopped" in summary:
        raise RuleError(gate.CONSENT_MISSING, summary)
    return summary


def _expected(path, role, consented) -> bool:
    if path == "evaluation":
        return True
    if path == "test":
        return False  # the console is the task owners'; the gate lets them test only the owners' own endpoints
    return consented


@pytest.mark.parametrize("consented", [False, True])
@pytest.mark.parametrize("path", ["loop", "assist", "generate", "transfer", "judge", "evaluation", "test"])
def test_a_researchers_endpoint_is_called_only_with_their_consent(path, consented, people, researchers_endpoint, endpoint_server,
                                                                  client):
    _consent(researchers_endpoint, gate.CONSENTABLE if consented else [])
    for role in ROLES:
        before = len(endpoint_server.requests)
        try:
            _by_path(path, researchers_endpoint, people[role], client)
            reached = True
        except RuleError as refused:
            assert refused.code == gate.CONSENT_MISSING and "rita-endpoint" in refused.message, refused.message
            reached = False
        sent = len(endpoint_server.requests) - before
        assert reached == _expected(path, role, consented), (path, role, consented)
        assert sent == (1 if reached else 0), (path, role, consented, sent)
    calls = ModelCall.objects.filter(model=researchers_endpoint)
    refused = calls.filter(status=ModelCall.Status.REFUSED_CONSENT).count()
    answered = calls.filter(status=ModelCall.Status.OK)
    assert answered.count() == sum(_expected(path, role, consented) for role in ROLES)
    assert refused == (0 if path == "evaluation" or consented and path != "test" else 1 if path == "test" else len(ROLES))
    assert set(answered.values_list("purpose", flat=True)) <= {path}


def test_a_revoked_consent_stops_the_next_call_in_a_running_round(people, researchers_endpoint, endpoint_server, client):
    round = researchers_endpoint.task.current_round()
    _consent(researchers_endpoint, ["loop"])
    round.target_models.add(researchers_endpoint)
    _by_path("loop", researchers_endpoint, people["annotator"], client)
    gate.set_consents(model=researchers_endpoint, acting_user=people["submitter"], consents=[])
    with pytest.raises(RuleError) as refused:
        _by_path("loop", researchers_endpoint, people["annotator"], client)
    assert refused.value.status_code == 403 and len(endpoint_server.requests) == 1


def test_only_the_submitter_gives_consent(people, researchers_endpoint):
    for role in ("owner", "annotator", "researcher"):
        with pytest.raises(RuleError) as refused:
            gate.set_consents(model=researchers_endpoint, acting_user=people[role], consents=["loop"])
        assert refused.value.status_code == 403
    assert gate.set_consents(model=researchers_endpoint, acting_user=people["submitter"], consents=["assist", "loop"]) == ["assist", "loop"]


def test_the_task_owners_own_endpoint_needs_no_one_elses_consent(people, sentiment_task, owner, make_endpoint_model, endpoint_server,
                                                                 client):
    own = make_endpoint_model(sentiment_task, name="owners-endpoint", owner=owner)
    for path in ("loop", "assist", "generate", "transfer", "test"):
        _by_path(path, own, people["owner"], client)
    assert len(endpoint_server.requests) == 5


def test_nothing_reaches_an_endpoint_outside_the_gate(researchers_endpoint, endpoint_server):
    endpoint = Endpoint.objects.select_related("model").get(model=researchers_endpoint)
    attempts = [
        lambda: call(endpoint, MESSAGES),
        lambda: post_json(endpoint, "images/generations", {"prompt": "a cat"}, max_bytes=1000),
        lambda: asyncio.run(acall(endpoint, MESSAGES)),
        lambda: asyncio.run(acheck_connection(endpoint)),
        lambda: get_predictor(researchers_endpoint).predict([{"text": "no gate"}]),
    ]
    for attempt in attempts:
        with pytest.raises(gate.GateBypassed):
            attempt()
    assert endpoint_server.requests == []


def test_the_gate_keeps_a_registry_of_its_purposes():
    assert set(gate.PURPOSES) == set(Purpose.values)
    assert set(gate.CONSENTABLE) == {"loop", "assist", "generate", "transfer", "judge"}
