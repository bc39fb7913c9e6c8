"""A writing assistant in the browser: the owner turns one on with an A/B split; a worker of the
assisted arm asks for a suggestion (a real local OpenAI-compatible server answers), edits it and
submits; a worker of the other arm sees no *Suggest* and writes unaided; validators settle both; the
owner's round dashboard shows both arms with 95 % intervals, with no browser console error."""

import json
import re

import pytest
from playwright.sync_api import expect
from django.contrib.auth.models import Group, User

from annotation.calculations import ab_arm
from annotation.models import Example, RoundAssistant
from tasks.models import MLModel
from tests.browser_support import HANG_MS, browser_only, log_in, start_over
from validation.services import record_validation
from validation.tests.conftest import leased

pytestmark = [*browser_only, pytest.mark.django_db(transaction=True)]
SUGGESTION = {"hypothesis": "The man plays music", "label": "entailment"}


def _one_worker_per_arm(round) -> dict:
    group = Group.objects.get(name="annotator")
    workers, n = {}, 0
    while len(workers) < 2:
        user = User.objects.create_user(username=f"worker{n}", password="pw")
        user.groups.add(group)
        workers.setdefault(ab_arm(secret=round.secret, user_id=user.pk), user)
        n += 1
    return workers


def _submit(page) -> None:
    page.click("button[aria-keyshortcuts='Control+Enter']")
    page.wait_for_selector("[data-example-id]", timeout=HANG_MS)


def test_an_assisted_and_an_unassisted_worker_are_compared_on_the_dashboard(page, client, live_server, owner, nli_task,
                                                                            tiny_nli_dir, make_endpoint_model, endpoint_server):
    round = nli_task.current_round()
    round.target_models.add(MLModel.objects.create(task=nli_task, name="tiny-nli", kind=MLModel.Kind.HF_DIRECTORY,
                                                   path=str(tiny_nli_dir)))
    assistant = make_endpoint_model(nli_task, name="assistant")
    RoundAssistant.objects.create(round=round, model=assistant, enabled=True, ab_split=True)
    workers = _one_worker_per_arm(round)
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)

    # The assisted arm: Suggest, edit, submit.
    log_in(page, client, workers["assisted"], live_server)
    page.goto(f"/tasks/{nli_task.code}/write/")
    endpoint_server.scripted = [json.dumps(SUGGESTION)]
    page.click("[data-suggest]")
    expect(page.locator("[name=hypothesis]")).to_have_value(re.compile("plays music"), timeout=HANG_MS)
    page.fill("[name=hypothesis]", "The man plays loud music")
    page.check("input[name=label][value=entailment]")
    _submit(page)

    # The other arm: no Suggest; written unaided.
    start_over(page, client, workers["control"], live_server)
    page.goto(f"/tasks/{nli_task.code}/write/")
    assert page.locator("[data-suggest]").count() == 0
    page.fill("[name=hypothesis]", "Nobody is outside")
    page.check("input[name=label][value=contradiction]")
    _submit(page)

    assisted, unaided = Example.objects.get(author=workers["assisted"]), Example.objects.get(author=workers["control"])
    assert assisted.origin == "assisted" and assisted.suggestion_distance == len("loud ")
    assert unaided.origin == "written" and not unaided.suggestion
    validators = [User.objects.create_user(username=f"val{i}", password="pw") for i in range(3)]
    for validator in validators:
        validator.groups.add(Group.objects.get(name="validator"))
        for example in (assisted, unaided):
            record_validation(example=leased(Example.objects.get(pk=example.pk), validator), validator=validator, label="correct")

    # The owner compares the arms.
    start_over(page, client, owner, live_server)
    page.goto(f"/tasks/{nli_task.code}/console/rounds/{round.number}/dashboard")
    for arm in ("assisted", "control"):
        row = page.locator(f"[data-assist-comparison] tr[data-group='{arm}']")
        assert row.locator("[data-interval]").count() == 3
    assert errors == []
