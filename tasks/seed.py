"""Create the default tasks from ``tasks/default_tasks/*.json`` (idempotent)."""

import json
from pathlib import Path

from django.db import transaction

from tasks.models import Context, Round, Task

DEFAULT_TASKS_DIR = Path(__file__).resolve().parent / "default_tasks"
DEFAULT_TASK_CODES = ("nli", "qa", "sentiment", "hate-speech")


def load_task_definition(code: str) -> dict:
    """Return the parsed definition of default task ``code`` (raises ``FileNotFoundError``)."""
    return json.loads((DEFAULT_TASKS_DIR / f"{code}.json").read_text(encoding="utf-8"))


@transaction.atomic
def seed_task(code: str) -> tuple[Task, bool]:
    """Create or update default task ``code`` with round 1 open and its starter contexts.

    Returns ``(task, created)``. Re-running updates the name, kind, instructions and config
    from the file and adds missing contexts; it never duplicates rounds or contexts and
    never reopens a round that an owner closed.
    """
    spec = load_task_definition(code)
    task = Task.objects.filter(code=code).first()
    created = task is None
    if created:
        task = Task(code=code)
    task.name, task.kind = spec["name"], spec["kind"]
    task.instructions, task.config = spec["instructions"], spec["config"]
    task.save()
    round1, _ = Round.objects.get_or_create(task=task, number=1)
    existing = set(round1.contexts.values_list("uid", flat=True))
    Context.objects.bulk_create(
        [Context(round=round1, uid=c["uid"], data=c["data"], tag=c.get("tag", "")) for c in spec.get("contexts", []) if c["uid"] not in existing]
    )
    return task, created


def seed_default_tasks() -> list[Task]:
    """Seed all four default tasks; return them in ``DEFAULT_TASK_CODES`` order."""
    return [seed_task(code)[0] for code in DEFAULT_TASK_CODES]
