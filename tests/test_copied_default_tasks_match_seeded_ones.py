"""The tests' default tasks (``conftest.default_tasks``) are seeded once per process and copied after
(``tests/default_tasks.py``): a copy must hold what ``seed_default_tasks`` writes, field by field,
with the generated values (each round's secret, creation times) generated anew."""

from tasks.models import Context, Round, Task
from tasks.data.seed import DEFAULT_TASK_CODES, seed_default_tasks
from tests import default_tasks as copies


def _rows() -> list:
    """Every task, round and context, ordered, without keys and generated values."""
    def fields(obj, skip=()):
        return {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields
                if not (f.primary_key or f.is_relation or getattr(f, "auto_now_add", False) or f.name in skip)}

    return [(fields(task), [(fields(round_, skip=("secret",)), [fields(c) for c in round_.contexts.order_by("uid")])
                            for round_ in task.rounds.order_by("number")])
            for task in Task.objects.order_by("code")]


def test_a_copy_holds_what_the_seeding_writes(db):
    copies.default_tasks()  # seeds (the first time in this process) or copies
    Task.objects.all().delete()
    copied = copies.default_tasks()
    assert copies._seeded, "the copy is not in use: every test seeds the default tasks"
    assert list(copied) == list(DEFAULT_TASK_CODES) and all(t.pk for t in copied.values())
    copied_rows, secrets = _rows(), set(Round.objects.values_list("secret", flat=True))
    assert Context.objects.count() > 0

    Task.objects.all().delete()
    seed_default_tasks()
    assert _rows() == copied_rows
    assert len(secrets) == Round.objects.count() and not secrets & set(Round.objects.values_list("secret", flat=True))
