"""The built-in open-ended definitions (a safety task with harm categories, a factual-QA task whose
failure is a wrong answer) are created by ``manage.py create_task`` with round 1 open and its contexts."""

from pathlib import Path

import pytest
from django.core.management import call_command

from tasks.models import Task

DEFINITIONS = Path(__file__).resolve().parents[1] / "data" / "task_definitions"


@pytest.mark.parametrize("name, category", [("adversarial-safety-chat", "self_harm"), ("factual-qa-chat", "wrong_answer")])
def test_create_task_makes_an_open_ended_task(db, name, category):
    call_command("create_task", str(DEFINITIONS / f"{name}.json"))
    task = Task.objects.get(code=name)
    assert task.spec.conversational and task.collecting
    assert category in {c["name"] for c in task.config["failure_categories"]}
    round = task.current_round()
    assert round.number == 1 and round.contexts.count() >= 3
