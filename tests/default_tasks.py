"""The four default tasks for the tests that ask for them (``conftest.default_tasks``: over a thousand
tests), seeded by ``tasks.data.seed.seed_default_tasks`` once per pytest process and copied after.

Seeding runs about 30 queries (a look-up, a validated save, a round's get-or-create and the
starter contexts, per task, each in a savepoint): 15 to 35 ms a test on the 2-core machine, a
quarter of that for a copy. The first test of a process that asks for the tasks on a database
without any seeds them and keeps what the seeding wrote; each later test on a database without
tasks gets copies of those rows in three bulk inserts (tasks, rounds, contexts), with new primary
keys and each value the model generates (a round's secret, a creation time) generated again. The
copy is used only where it is exact: the seeding must have written rows of those three tables and
of no other (checked once, by counting every table's rows before and after), and the database
must return the keys of bulk-inserted rows; otherwise every test seeds.
``tests/test_copied_default_tasks_match_seeded_ones.py`` compares a copy with a seeding.
"""

import copy

from django.apps import apps
from django.db import connection

_seeded: list | None = None
"""``[(task fields, [(round fields, [context fields, ...]), ...]), ...]`` in seeding order; ``[]``
once the copy is found not to be exact (every test seeds then)."""


def _copied_fields(model, *, parent: str | None = None) -> list[str]:
    """The attribute names of ``model``'s concrete fields a copy keeps: not the primary key, the
    key of ``parent`` (set to the copied parent's), nor a field whose value the model generates (a
    creation time, or a field no form edits with a callable default: a round's secret). A field
    with an ordinary default (``config``, ``default=dict``) is kept."""
    kept = []
    for field in model._meta.concrete_fields:
        generated = getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False) or (
            not field.editable and field.has_default() and callable(field.default))  # a round's secret, say
        if not (field.primary_key or field.name == parent or generated):
            kept.append(field.attname)
    return kept


def _row_counts() -> dict[str, int]:
    return {model._meta.label: model._base_manager.count() for model in apps.get_models(include_auto_created=True)
            if model._meta.managed and not model._meta.proxy}


def _snapshot(tasks) -> list:
    from tasks.models import Context, Round, Task

    task_fields, round_fields, context_fields = (
        _copied_fields(Task), _copied_fields(Round, parent="task"), _copied_fields(Context, parent="round"))
    return [
        ({name: getattr(task, name) for name in task_fields},
         [({name: getattr(round_, name) for name in round_fields},
           [{name: getattr(context, name) for name in context_fields} for context in round_.contexts.order_by("pk")])
          for round_ in task.rounds.order_by("pk")])
        for task in tasks
    ]


def default_tasks() -> dict:
    """``{code: Task}`` of the four default tasks on the test's database, seeded or copied (see the
    module docstring). The database may hold other rows; where it holds a task, the tasks are
    seeded as ``seed_default_tasks`` does (it keeps existing ones)."""
    global _seeded
    from tasks.models import Context, Round, Task
    from tasks.data.seed import seed_default_tasks

    if _seeded and not Task.objects.exists():
        seeded = copy.deepcopy(_seeded)  # a test may change a task's config or a context's data in place
        tasks = Task.objects.bulk_create([Task(**fields) for fields, _ in seeded])
        rounds = Round.objects.bulk_create([Round(task_id=task.pk, **fields) for task, (_, rounds) in zip(tasks, seeded)
                                            for fields, _ in rounds])
        contexts = [contexts for _, task_rounds in seeded for _, contexts in task_rounds]
        Context.objects.bulk_create([Context(round_id=round_.pk, **fields) for round_, fields_of in zip(rounds, contexts)
                                     for fields in fields_of])
        return {task.code: task for task in tasks}
    if _seeded is None and not Task.objects.exists() and connection.features.can_return_rows_from_bulk_insert:
        before = _row_counts()
        tasks = seed_default_tasks()
        after = _row_counts()
        written = {label for label in after if after[label] != before[label]}
        _seeded = _snapshot(tasks) if written <= {Task._meta.label, Round._meta.label, Context._meta.label} else []
        return {task.code: task for task in tasks}
    return {task.code: task for task in seed_default_tasks()}
