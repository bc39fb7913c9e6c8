"""``manage.py create_task FILE --owner USERNAME`` makes that user an owner of the new task (with the
admin access owners get); an unknown username is refused with a message that says what to do, and
no task is created."""

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tasks.models import Task

DEFINITION = Path(__file__).resolve().parents[1] / "data" / "task_definitions" / "flores-mini.json"


def test_the_named_user_owns_the_created_task(annotator):
    summary = call_command("create_task", str(DEFINITION), "--owner", annotator.username)

    task = Task.objects.get(code="flores-mini")
    assert list(task.owners.all()) == [annotator]
    annotator.refresh_from_db()
    assert annotator.is_staff and task.is_owner(annotator)
    assert f"owned by {annotator.username}" in summary


def test_an_unknown_owner_is_refused_before_anything_is_stored(db):
    with pytest.raises(CommandError, match="no user named 'nobody-here'.*--owner"):
        call_command("create_task", str(DEFINITION), "--owner", "nobody-here")

    assert not Task.objects.filter(code="flores-mini").exists()


def test_without_an_owner_the_summary_says_how_to_add_one(db):
    summary = call_command("create_task", str(DEFINITION))

    assert not Task.objects.get(code="flores-mini").owners.exists()
    assert "no owner yet (add one with --owner USERNAME" in summary
