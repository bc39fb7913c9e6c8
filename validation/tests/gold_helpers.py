"""Gold items for the gold tests: settled examples an owner marks as gold."""

from annotation.models import Example
from validation.gold import mark_gold
from validation.services import record_validation
from validation.tests.conftest import make_example


def configure(task, **config):
    """Set gold and consensus keys of ``task.config`` (checked by the config schema on save)."""
    task.config = {**task.config, **config}
    task.save()
    return task


def gold_items(task, author, owner, n, *, start=0):
    """``n`` gold items of ``task``'s current round: examples by ``author`` decided by ``owner``,
    alternately correct and incorrect; returns ``[(example, verdict)]``."""
    made = []
    for i in range(start, start + n):
        example = make_example(task, author, model_wrong=True, text=f"A sentence to check, number {i}")
        verdict = "correct" if i % 2 == 0 else "incorrect"
        record_validation(example=example, validator=owner, label=verdict, mode="owner")
        example = Example.objects.get(pk=example.pk)
        mark_gold(example=example, acting_user=owner)
        made.append((example, verdict))
    return made
