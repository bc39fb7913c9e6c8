"""Create the default tasks from ``tasks/default_tasks/*.json`` and the demo users (both idempotent)."""

import json
import secrets
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth.models import Group, User
from django.db import transaction

from dynabench.roles import ensure_role_groups
from tasks.models import Context, Round, Task
from tasks.services import add_task_owner

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


@dataclass(frozen=True)
class DemoUser:
    """A demo login: ``password`` is set only when the user was created by this call."""

    username: str
    roles: str
    password: str | None


# (username, groups, what they are for); the admin and the owner are handled specially.
DEMO_USERS = (
    ("admin", (), "admin (superuser)"),
    ("owner", ("annotator", "validator"), "owner of every task (admin pages for their tasks)"),
    ("annotator1", ("annotator",), "annotator"),
    ("annotator2", ("annotator",), "annotator"),
    ("validator1", ("validator",), "validator"),
    ("validator2", ("validator",), "validator"),
    ("researcher", ("researcher",), "researcher"),
)


@transaction.atomic
def seed_demo_users() -> list[DemoUser]:
    """Create the demo users with random passwords; return them in ``DEMO_USERS`` order.

    Existing demo users keep their password (returned as ``None``) and their roles are
    re-applied. The owner owns every task that exists (seed the tasks first).
    """
    ensure_role_groups()
    result = []
    for username, groups, roles in DEMO_USERS:
        user = User.objects.filter(username=username).first()
        password = None
        if user is None:
            password = secrets.token_urlsafe(12)
            user = User.objects.create_user(username=username, password=password, email=f"{username}@demo.invalid")
        if username == "admin" and not (user.is_superuser and user.is_staff):
            user.is_superuser = user.is_staff = True
            user.save(update_fields=["is_superuser", "is_staff"])
        user.groups.add(*Group.objects.filter(name__in=groups))
        result.append(DemoUser(username, roles, password))
    admin = User.objects.get(username="admin")
    owner = User.objects.get(username="owner")
    for task in Task.objects.all():
        add_task_owner(task=task, user=owner, acting_user=admin)
    return result
