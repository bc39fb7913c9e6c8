"""An owner turns on a writing assistant with an A/B split from the console; scripted annotators of
each arm write examples through the create page (the assistant is a real OpenAI-compatible server);
validators settle them; the round dashboard compares the arms with 95 % bootstrap intervals. A round
without an assistant shows no comparison."""

import json
import re

import pytest
from django.contrib.auth.models import Group, User

from annotation.calculations import ab_arm
from annotation.models import Example, RoundAssistant
from tasks.models import MLModel
from validation.services import record_validation
from validation.tests.conftest import leased

HTMX = {"HTTP_HX_REQUEST": "true"}


def _token(response) -> str:
    return re.search(r'name="token" value="([^"]+)"', response.content.decode()).group(1)


@pytest.fixture
def nli_round(nli_task, tiny_nli_dir):
    round = nli_task.current_round()
    round.target_models.add(MLModel.objects.create(task=nli_task, name="tiny-nli", kind=MLModel.Kind.HF_DIRECTORY,
                                                   path=str(tiny_nli_dir)))
    return round


def _workers(round, per_arm=3):
    """Workers signed up one by one until each arm of the round's split holds ``per_arm`` of them."""
    group = Group.objects.get(name="annotator")
    users, arms = [], {}
    while min(list(arms.values()).count("assisted"), list(arms.values()).count("control")) < per_arm:
        user = User.objects.create_user(username=f"worker{len(users)}", password="pw")
        user.groups.add(group)
        users.append(user)
        arms[user.pk] = ab_arm(secret=round.secret, user_id=user.pk)
    return users, arms


def _write(client, user, task, *, assisted, server):
    client.force_login(user)
    page = client.get(f"/tasks/{task.code}/write/")
    data = {"token": _token(page), "hypothesis": f"{user.username} says the man plays music", "label": "entailment"}
    if assisted:
        assert "data-suggest" in page.content.decode()
        server.scripted = [json.dumps({"hypothesis": "The man plays music", "label": "entailment"})]
        suggested = client.post(f"/tasks/{task.code}/write/suggest", {"token": data["token"]}, **HTMX)
        data["suggestion"] = re.search(r'name="suggestion" value="([^"]+)"', suggested.content.decode()).group(1)
    else:
        assert "data-suggest" not in page.content.decode()
        assert client.post(f"/tasks/{task.code}/write/suggest", {"token": data["token"]}, **HTMX).status_code == 409
    assert client.post(f"/tasks/{task.code}/write/submit", data, **HTMX).status_code == 200


def test_the_dashboard_shows_both_arms_with_intervals(client, owner, nli_task, nli_round, make_endpoint_model,
                                                      endpoint_server):
    assistant = make_endpoint_model(nli_task, name="assistant")
    client.force_login(owner)
    saved = client.post(f"/tasks/{nli_task.code}/console/rounds/{nli_round.number}/ai/assistant",
                        {"model": assistant.pk, "enabled": "on", "ab_split": "on"})
    assert saved.status_code == 302 and RoundAssistant.objects.get(round=nli_round).ab_split
    users, arms = _workers(nli_round)

    for user in users:
        _write(client, user, nli_task, assisted=arms[user.pk] == "assisted", server=endpoint_server)
    validators = [User.objects.create_user(username=f"val{i}", password="pw") for i in range(3)]
    for validator in validators:
        validator.groups.add(Group.objects.get(name="validator"))
    for example in Example.objects.filter(round=nli_round):
        for validator in validators:
            record_validation(example=leased(example, validator), validator=validator, label="correct")

    examples = Example.objects.filter(round=nli_round)
    assert {e.origin for e in examples if arms[e.author_id] == "assisted"} == {"assisted"}
    assert {e.origin for e in examples if arms[e.author_id] == "control"} == {"written"}
    client.force_login(owner)
    html = client.get(f"/tasks/{nli_task.code}/console/rounds/{nli_round.number}/dashboard").content.decode()
    table = html[html.index("data-assist-comparison"):]
    for arm in ("assisted", "control"):
        row = table[table.index(f'data-group="{arm}"'):]
        row = row[:row.index("</tr>")]
        assert row.count("data-interval") == 3, row


def test_a_round_without_an_assistant_shows_no_comparison(client, owner, nli_task, nli_round, annotator, endpoint_server):
    _write(client, annotator, nli_task, assisted=False, server=endpoint_server)
    client.force_login(owner)

    html = client.get(f"/tasks/{nli_task.code}/console/rounds/{nli_round.number}/dashboard").content.decode()

    assert "data-assist-comparison" not in html and Example.objects.get().origin == "written"
