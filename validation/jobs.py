"""Jobs: plain functions that return a one-line summary (RQ, management commands and tests call them)."""

from itertools import groupby

from django.db import transaction
from django.db.models import Count

from annotation.models import Example
from tasks.models import Context, Task
from validation.calculations import derive_state, tally
from validation.models import Validation

_COLUMNS = ("validation_state", "validation_count", "correct_count", "incorrect_count", "flagged_count")


def reconcile_counters(*, fix: bool = True, batch_size: int = 2000) -> str:
    """Recompute every example's state and ``*_count`` columns from its validations, and every
    context's ``times_used`` from its examples (retracted ones included: a context was used
    when an example was written for it); report the drift and, with ``fix``, repair it.

    Uses ``calculations.derive_state`` and ``tally``, the functions ``record_validation``
    uses. Each batch is fixed under row locks so a validation recorded meanwhile is not lost.
    Returns e.g. ``"checked 1200 examples: 3 drifted (fixed); checked 40 contexts: 1 drifted (fixed)"``.
    """
    needed = {t.pk: t.validations_needed for t in Task.objects.all()}
    checked = drifted = 0
    ids = Example.objects.order_by("pk").values_list("pk", flat=True)
    for start in range(0, ids.count(), batch_size):
        chunk = list(ids[start : start + batch_size])
        with transaction.atomic():
            examples = Example.objects.filter(pk__in=chunk).order_by("pk")
            if fix:
                examples = examples.select_for_update(of=("self",))
            rows = list(examples.values_list("pk", "round__task_id", *_COLUMNS))
            votes = Validation.objects.filter(example_id__in=chunk).order_by("example_id", "id").values_list("example_id", "label", "mode")
            by_example = {k: [(label, mode) for _, label, mode in g] for k, g in groupby(votes, key=lambda r: r[0])}
            wrong = []
            for pk, task_id, *stored in rows:
                checked += 1
                found = by_example.get(pk, [])
                counts = tally(label for label, _ in found)
                expected = [derive_state(found, needed[task_id]), *(counts[c] for c in _COLUMNS[1:])]
                if list(stored) != expected:
                    wrong.append(Example(pk=pk, **dict(zip(_COLUMNS, expected))))
            drifted += len(wrong)
            if fix and wrong:
                Example.objects.bulk_update(wrong, list(_COLUMNS), batch_size=500)

    used = dict(Example.objects.values_list("context_id").annotate(n=Count("id")).values_list("context_id", "n"))
    contexts = Context.objects.values_list("pk", "times_used")
    stale = [Context(pk=pk, times_used=used.get(pk, 0)) for pk, times in contexts.iterator() if times != used.get(pk, 0)]
    if fix and stale:
        Context.objects.bulk_update(stale, ["times_used"], batch_size=1000)
    action = "fixed" if fix else "not fixed"
    return (
        f"checked {checked} examples: {drifted} drifted ({action}); "
        f"checked {Context.objects.count()} contexts: {len(stale)} drifted ({action})"
    )
