"""Badges, as Dynabench had them, computed from running tallies kept in the same transaction as every
example write and validation: never a rescan of the examples or validations.

- per-round ``annotation.models.AuthorTally`` (collected, fooled, verified fooled): first example,
  first example that fooled the model, 10 / 100 / 1,000 examples validated as fooling it, top of a
  round's annotators (most verified fooling examples in the round, at least one);
- per-day ``annotation.models.AuthorDayTally`` (examples written per task and day): streaks of 3, 7
  and 30 days in a row with at least one example (the longest run ever, so a badge once earned stays);
- per-task ``validation.models.ValidatorStanding`` (gold checks answered and answered correctly):
  validator accuracy on gold items, at least ``GOLD_MIN_ANSWERS`` answered and 80 % / 95 % right.

``badges_from`` is the rule (pure), ``longest_streak`` the streak arithmetic (pure);
``badges_of_many`` reads the tallies of many users in a fixed number of queries (the round page's
top-annotators list), of the tasks whose owners keep badges on (``TaskBadges``), or of one task.
"""

from __future__ import annotations

import datetime
from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Max, Sum

from annotation.models import AuthorDayTally, AuthorTally
from community.models import TaskBadges
from dynabench.errors import NotAllowed
from validation.models import ValidatorStanding

FOOLED_MILESTONES = (10, 100, 1000)
STREAK_DAYS = (3, 7, 30)
GOLD_MIN_ANSWERS = 10
GOLD_TIERS = ((0.8, "gold_80", "Reliable validator"), (0.95, "gold_95", "Gold-standard validator"))


@dataclass(frozen=True)
class Badge:
    """One badge: a stable ``code``, its ``name`` and what earned it (``detail``)."""

    code: str
    name: str
    detail: str


def longest_streak(days) -> int:
    """Return the longest run of consecutive calendar days in ``days`` (``datetime.date`` values, any
    order, repeats allowed); 0 for none."""
    best = run = 0
    previous = None
    for day in sorted(set(days)):
        run = run + 1 if previous is not None and day - previous == datetime.timedelta(days=1) else 1
        best, previous = max(best, run), day
    return best


def badges_from(*, collected: int, fooled: int, verified_fooled: int, top_rounds: list[str], streak_days: int = 0,
                gold_answered: int = 0, gold_correct: int = 0) -> list[Badge]:
    """Return the badges earned with these totals; ``top_rounds`` names the rounds whose annotators
    they top, ``streak_days`` is their longest run of days with an example, ``gold_answered`` /
    ``gold_correct`` their gold checks as a validator."""
    out = []
    if collected >= 1:
        out.append(Badge("first_example", "First example", "Wrote a first example."))
    if fooled >= 1:
        out.append(Badge("first_fooled", "Model fooler", "Wrote a first example that fooled the model."))
    for milestone in FOOLED_MILESTONES:
        if verified_fooled >= milestone:
            out.append(Badge(f"verified_fooled_{milestone}", f"{milestone:,} verified", f"{milestone:,} examples validated as fooling the model."))
    for days in STREAK_DAYS:
        if streak_days >= days:
            out.append(Badge(f"streak_{days}", f"{days}-day streak", f"Wrote examples {days} days in a row."))
    if gold_answered >= GOLD_MIN_ANSWERS:
        for share, code, name in GOLD_TIERS:
            if gold_correct >= share * gold_answered:
                out.append(Badge(code, name, f"Answered {gold_correct} of {gold_answered} gold checks right ({gold_correct / gold_answered:.0%})."))
    for name in top_rounds:
        out.append(Badge("top_of_round", f"Top of {name}", f"Most examples validated as fooling the model in {name}."))
    return out


def badges_of_many(user_ids, *, task=None) -> dict[int, list[Badge]]:
    """The badges of each user in ``user_ids`` (``{user_id: [Badge]}``), earned on ``task`` alone (none
    when its owners turned badges off) or on every task that keeps badges on; five queries in all."""
    ids = list(user_ids)
    off = list(TaskBadges.objects.filter(enabled=False).values_list("task_id", flat=True))
    if task is not None and task.pk in off:
        return {pk: [] for pk in ids}
    scope = {"round__task": task} if task is not None else {}
    tallies = AuthorTally.objects.filter(author_id__in=ids, **scope).exclude(round__task_id__in=off)
    totals = {row["author_id"]: row for row in tallies.values("author_id").annotate(
        collected=Sum("collected"), fooled=Sum("fooled"), verified_fooled=Sum("verified_fooled"))}
    leading = list(tallies.filter(verified_fooled__gt=0).values_list("author_id", "round_id", "verified_fooled",
                                                                      "round__task__name", "round__number"))
    best = dict(AuthorTally.objects.filter(round_id__in={r[1] for r in leading}).values("round_id")
                .annotate(best=Max("verified_fooled")).values_list("round_id", "best"))
    days = defaultdict(list)
    day_scope = {"task": task} if task is not None else {}
    for author_id, day in (AuthorDayTally.objects.filter(author_id__in=ids, written__gt=0, **day_scope)
                           .exclude(task_id__in=off).values_list("author_id", "day")):
        days[author_id].append(day)
    gold = {row["validator_id"]: row for row in ValidatorStanding.objects.filter(validator_id__in=ids, **day_scope)
            .exclude(task_id__in=off).values("validator_id").annotate(answered=Sum("answered"), correct=Sum("correct"))}
    out = {}
    for pk in ids:
        total = totals.get(pk, {})
        top = [f"{name} round {number}" for author, round_id, verified, name, number in leading
               if author == pk and verified == best.get(round_id)]
        out[pk] = badges_from(
            collected=total.get("collected") or 0, fooled=total.get("fooled") or 0,
            verified_fooled=total.get("verified_fooled") or 0, top_rounds=top, streak_days=longest_streak(days[pk]),
            gold_answered=(gold.get(pk) or {}).get("answered") or 0, gold_correct=(gold.get(pk) or {}).get("correct") or 0,
        )
    return out


def badges_of(user) -> list[Badge]:
    """The badges ``user`` earned on tasks that keep badges on (``badges_of_many`` for one user)."""
    return badges_of_many([user.pk])[user.pk]


def set_task_badges(*, task, actor, enabled: bool) -> TaskBadges:
    """Turn badges on or off for ``task``; only its owners (and admins) may (``NotAllowed``)."""
    if not task.is_owner(actor):
        raise NotAllowed("not_owner", f"Only an owner of task '{task.code}' can turn its badges on or off.")
    setting, _ = TaskBadges.objects.update_or_create(task=task, defaults={"enabled": enabled})
    return setting
