"""Badges, as Dynabench had them, computed from the running per-round tallies of each annotator
(``annotation.models.AuthorTally``, kept in the same transaction as every example write and
validation): never a rescan of the examples.

``badges_from(totals, *, top_rounds)`` is the rule (pure): first example, first example that
fooled the model, 10 / 100 / 1,000 examples validated as fooling it, and top of a round's
annotators (most verified fooling examples in a closed or open round, at least one). ``badges_of(user)``
reads the tallies of the tasks whose owners keep badges on (``TaskBadges``).
Not yet: streaks and validator accuracy on gold items.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Max, Sum

from annotation.models import AuthorTally
from dynabench.errors import NotAllowed
from community.models import TaskBadges

FOOLED_MILESTONES = (10, 100, 1000)


@dataclass(frozen=True)
class Badge:
    """One badge: a stable ``code``, its ``name`` and what earned it (``detail``)."""

    code: str
    name: str
    detail: str


def badges_from(*, collected: int, fooled: int, verified_fooled: int, top_rounds: list[str]) -> list[Badge]:
    """Return the badges earned by an annotator with these totals; ``top_rounds`` names the rounds
    whose annotators they top."""
    out = []
    if collected >= 1:
        out.append(Badge("first_example", "First example", "Wrote a first example."))
    if fooled >= 1:
        out.append(Badge("first_fooled", "Model fooler", "Wrote a first example that fooled the model."))
    for milestone in FOOLED_MILESTONES:
        if verified_fooled >= milestone:
            out.append(Badge(f"verified_fooled_{milestone}", f"{milestone:,} verified", f"{milestone:,} examples validated as fooling the model."))
    for name in top_rounds:
        out.append(Badge("top_of_round", f"Top of {name}", f"Most examples validated as fooling the model in {name}."))
    return out


def badges_of(user) -> list[Badge]:
    """The badges ``user`` earned on tasks that keep badges on, from their ``AuthorTally`` rows."""
    off = TaskBadges.objects.filter(enabled=False).values_list("task_id", flat=True)
    tallies = AuthorTally.objects.filter(author=user).exclude(round__task_id__in=off)
    totals = tallies.aggregate(collected=Sum("collected"), fooled=Sum("fooled"), verified_fooled=Sum("verified_fooled"))
    top_rounds = []
    for tally in tallies.filter(verified_fooled__gt=0).select_related("round__task"):
        best = AuthorTally.objects.filter(round_id=tally.round_id).aggregate(best=Max("verified_fooled"))["best"]
        if tally.verified_fooled == best:
            top_rounds.append(f"{tally.round.task.name} round {tally.round.number}")
    return badges_from(
        collected=totals["collected"] or 0, fooled=totals["fooled"] or 0, verified_fooled=totals["verified_fooled"] or 0,
        top_rounds=top_rounds,
    )


def set_task_badges(*, task, actor, enabled: bool) -> TaskBadges:
    """Turn badges on or off for ``task``; only its owners (and admins) may (``NotAllowed``)."""
    if not task.is_owner(actor):
        raise NotAllowed("not_owner", f"Only an owner of task '{task.code}' can turn its badges on or off.")
    setting, _ = TaskBadges.objects.update_or_create(task=task, defaults={"enabled": enabled})
    return setting
