"""Create the default tasks from ``tasks/data/default_tasks/*.json``, their seed scoring datasets and the
demo users (all idempotent)."""

import json
import logging
import secrets
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth.models import Group, User
from django.core.exceptions import ValidationError
from django.db import transaction

from dynabench.errors import NotAllowed, RuleError
from dynabench.roles import ensure_role_groups
from tasks.data.definitions import DefinitionProblems, check_definition_file
from tasks.error_codes import TaskErrorCode
from tasks.data.importers.datasets import import_dataset
from tasks.data.importers.files import FileSpec
from tasks.models import Context, Dataset, Round, Task
from tasks.services import add_task_owner, grant_owner_admin_access
from tasks.data.seed_split import SEED_DEV_PERCENT, SEED_TEST_PERCENT, seed_data_path

logger = logging.getLogger(__name__)

DEFAULT_TASKS_DIR = Path(__file__).resolve().parent / "default_tasks"
DEFAULT_TASK_CODES = ("nli", "qa", "sentiment", "hate-speech")


def load_task_definition(code: str) -> dict:
    """Return the parsed definition of default task ``code`` (raises ``FileNotFoundError``)."""
    return json.loads((DEFAULT_TASKS_DIR / f"{code}.json").read_text(encoding="utf-8"))


@transaction.atomic
def seed_task(code: str) -> tuple[Task, bool]:
    """Create default task ``code`` if it is missing, with round 1 open and its starter contexts.

    Returns ``(task, created)``. An existing task keeps its settings (name, instructions,
    labels, config, content warning: an owner may have changed them on the console); re-running
    only adds a missing round 1 and missing starter contexts. It never duplicates rounds or
    contexts and never reopens a round that an owner closed.
    """
    return create_task(load_task_definition(code))


@transaction.atomic
def create_task(spec: dict) -> tuple[Task, bool]:
    """Create the task a definition describes if it is missing; return ``(task, created)``.

    ``spec``: ``{"code", "name", "kind", "instructions", "config"}`` plus optional
    ``content_warning``, ``collecting`` (default true; false: an evaluation-only benchmark) and
    ``contexts`` (``[{"uid", "data", "tag"?}]``, added to round 1). A collecting task gets round
    1 open; an evaluation-only task gets no round. Idempotent as ``seed_task`` (an existing
    task keeps its settings). Raises ``django.core.exceptions.ValidationError`` naming the
    config field at fault, and ``KeyError`` for a missing key.
    """
    code = spec["code"]
    task = Task.objects.filter(code=code).first()
    created = task is None
    if created:
        task = Task(
            code=code, name=spec["name"], kind=spec["kind"], instructions=spec["instructions"], config=spec["config"],
            content_warning=spec.get("content_warning", ""), collecting=bool(spec.get("collecting", True)),
        )
        task.save()
    if not task.collecting:
        return task, created
    round1, _ = Round.objects.get_or_create(task=task, number=1)
    existing = set(round1.contexts.values_list("uid", flat=True))
    Context.objects.bulk_create(
        [Context(round=round1, uid=c["uid"], data=c["data"], tag=c.get("tag", "")) for c in spec.get("contexts", []) if c["uid"] not in existing]
    )
    return task, created


def create_task_from_definition(*, definition: bytes | str, acting_user) -> Task:
    """Create a new task from the text of a definition file and make ``acting_user`` its owner.

    ``definition``: the JSON a ``manage.py create_task`` file holds (code, name, kind,
    instructions, config, plus ``content_warning``, ``collecting``, ``contexts``; see
    ``create_task``), checked by ``tasks.data.definitions.check_definition_file`` (bounded JSON, the
    kind's schema), the same check as a task proposal's. A collecting task gets round 1 open with
    the file's contexts and no model in the loop yet. Raises ``NotAllowed`` unless ``acting_user``
    may add tasks (Django permission ``tasks.add_task``; admins may); ``RuleError``
    ``bad_definition`` (every problem on its line: ``line 7: config.labels: ...``) or
    ``task_exists`` (the code is taken: unlike the command, the page never keeps an existing task
    silently). Nothing is stored when refused.
    """
    if not (acting_user.is_active and acting_user.has_perm("tasks.add_task")):
        raise NotAllowed("cannot_add_task", "only admins and people an admin allowed to add tasks may create one")
    try:
        text = definition.decode("utf-8") if isinstance(definition, bytes) else definition
        spec = check_definition_file(text)
    except UnicodeDecodeError:
        raise RuleError(TaskErrorCode.BAD_DEFINITION, "the definition is not UTF-8 text", field="definition") from None
    except DefinitionProblems as problems:
        raise RuleError(TaskErrorCode.BAD_DEFINITION, f"the definition is refused: {'; '.join(problems.problems)}",
                        field="definition") from None
    if Task.objects.filter(code=spec["code"]).exists():
        raise RuleError(TaskErrorCode.TASK_EXISTS, f"a task with code {spec['code']!r} exists already: choose another code",
                        field="definition")
    try:
        with transaction.atomic():
            task, _ = create_task(spec)
            task.owners.add(acting_user)
            grant_owner_admin_access(acting_user)
    except ValidationError as error:
        raise RuleError(TaskErrorCode.BAD_DEFINITION, f"the definition is refused: {'; '.join(error.messages)}",
                        field="definition") from None
    except (KeyError, TypeError, AttributeError) as error:
        raise RuleError(TaskErrorCode.BAD_DEFINITION, f"unknown task kind or missing key in the definition: {error}",
                        field="definition") from None
    return task


def seed_default_tasks() -> list[Task]:
    """Seed all four default tasks; return them in ``DEFAULT_TASK_CODES`` order."""
    return [seed_task(code)[0] for code in DEFAULT_TASK_CODES]


#: The seed scoring datasets of every default task: the split held out of the seed data, and its description.
SEED_LABEL_VISIBILITY = {"dev": Dataset.LabelVisibility.PUBLIC, "test": Dataset.LabelVisibility.HIDDEN}
SEED_SCORING_SPLITS = {
    "dev": f"Public dev set: the {SEED_DEV_PERCENT}% of the seed examples held out by the fixed seed split "
           "(tasks/data/seed_split.py:seed_split). No default model was trained on it; its labels are public.",
    "test": f"Hidden test set: the {SEED_TEST_PERCENT}% of the seed examples held out by the fixed seed split "
            "(tasks/data/seed_split.py:seed_split). No default model was trained on it; its labels never leave the server.",
}


def seed_dataset_name(task: Task, split: str) -> str:
    """Return the name of ``task``'s seed scoring dataset of ``split`` (``<code>-seed-dev``, ``<code>-seed-test``)."""
    return f"{task.code}-seed-{split}"


def seed_scoring_datasets(task: Task) -> list[Dataset]:
    """Create or complete ``task``'s seed scoring datasets (dev, then test); return them.

    Each holds the seed rows (``tasks/data/seed_data/<code>.jsonl``) whose ``split`` field is
    ``dev`` or ``test`` (the fixed seed split, ``tasks.data.seed_split.seed_split``), imported with the
    importer's own rules (``tasks.data.importers.datasets.import_dataset``: idempotent, all-or-nothing, the
    file's sha256 recorded). Both count toward the Dynascore with weight 1; the dev set's labels
    are public, the test set's hidden. Models trained from the seed data use only the train
    split (``tasks.loop.training.examples.seed_examples``), so none has seen these items.

    Like the tasks, a dataset is created only when it is missing: one that exists is left as its
    owner keeps it. When the task's settings no longer fit the seed rows (an owner removed a
    label), the dataset is not created and a warning is logged.
    """
    datasets = []
    for split, description in SEED_SCORING_SPLITS.items():
        name = seed_dataset_name(task, split)
        dataset = Dataset.objects.filter(task=task, name=name).first()
        if dataset is None:
            spec = FileSpec(path=seed_data_path(task), uid_field="uid", tag_field="tag", filters={"split": split})
            try:
                import_dataset(
                    task=task, name=name, spec=spec, access=Dataset.Access.SCORING, split=split,
                    label_visibility=SEED_LABEL_VISIBILITY[split], progress=False,
                )
            except RuleError as error:
                logger.warning("seed dataset %s of task %s not created: %s", name, task.code, error.message)
                continue
            dataset = Dataset.objects.get(task=task, name=name)
            dataset.description = description
            dataset.save(update_fields=["description"])
        datasets.append(dataset)
    return datasets


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
