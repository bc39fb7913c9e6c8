"""The owner console's read models: a round's dashboard (per hour, per model in the loop, the
queue, flagged examples, contexts) and a task's people with their records. Reads only; the
counts come from the running tallies (``annotation/counters.py``) and the grouped figures from
``validation.round_statistics.round_figures_of``, so the console shows the same numbers as the round
page and the API."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db.models import Count, Max, Q

from annotation.models import VALIDATED, Example, RoundHourTally, ValidationState
from tasks.models import Context, MLModel
from validation.models import Validation
from validation.round_statistics import FLAGGED, RoundStats, round_figures_of, round_states, round_stats
from validation.selectors import AGREES


@dataclass(frozen=True)
class HourBucket:
    """One hour of a round: examples collected (not retracted), fooled, verified fooled, and
    the cumulative vMER up to the end of that hour (None before anything was collected)."""

    hour: object
    collected: int
    fooled: int
    verified_fooled: int
    cumulative_vmer: float | None

@dataclass(frozen=True)
class ModelInLoopStats:
    """A model in the loop's record in one round: examples it answered (not retracted), how many
    fooled it, and how many of those were validated correct; ``vmer`` and ``fooling_rate``."""

    model_id: int | None
    name: str
    collected: int
    fooled: int
    verified_fooled: int

    @property
    def vmer(self) -> float | None:
        return self.verified_fooled / self.collected if self.collected else None

    @property
    def fooling_rate(self) -> float | None:
        return self.fooled / self.collected if self.collected else None

@dataclass(frozen=True)
class RoundDashboard:
    """What a task owner watches while a round runs (``round_dashboard``). ``figures_as_of``:
    when the grouped figures (queue, flagged count) were computed by the
    job, None when computed for this request; ``figures_stale``: the round has changed since
    (a new computation has been asked for); ``figures_pending``: not computed yet."""

    stats: RoundStats
    per_hour: list[HourBucket]
    per_model: list[ModelInLoopStats]
    queue_depth: int
    oldest_pending: object
    flagged_count: int
    flagged: list
    unused_contexts: int
    unused_sample: list
    contexts: int
    vmer_over_time_by_model: list
    figures_as_of: datetime | None = None
    figures_stale: bool = False
    figures_pending: bool = False
    states: list = field(default_factory=list)
    """``validation.round_statistics.round_states``: the same states, words and counts as the round page."""

def per_model_hour(round) -> list[dict]:
    """``[{"hour": aware UTC hour, "model_id": id or None, "collected", "fooled",
    "verified_fooled"}]``: ``round``'s non-retracted examples per hour written and model, by
    hour then model, read from the running ``RoundHourTally`` rows (``annotation.counters``):
    exact and live at any round size, one query over a few rows per hour."""
    rows = RoundHourTally.objects.filter(round=round).order_by("hour", "model_id").values(
        "hour", "model_id", "collected", "fooled", "verified_fooled"
    )
    return [{**row, "model_id": row["model_id"] or None} for row in rows if row["collected"]]

def examples_per_hour(rows: list[dict]) -> list[HourBucket]:
    """The round's non-retracted examples grouped by the hour they were written (UTC), oldest
    first, with the cumulative vMER (verified fooled / collected so far) at each hour; hours
    without examples are left out. From ``rows`` (``per_model_hour``)."""
    hours: dict = {}
    for row in rows:
        bucket = hours.setdefault(row["hour"], Counter())
        bucket.update({k: row[k] for k in ("collected", "fooled", "verified_fooled")})
    buckets, collected, verified = [], 0, 0
    for hour in sorted(hours):
        row = hours[hour]
        collected += row["collected"]
        verified += row["verified_fooled"]
        buckets.append(HourBucket(
            hour=hour, collected=row["collected"], fooled=row["fooled"], verified_fooled=row["verified_fooled"],
            cumulative_vmer=verified / collected if collected else None,
        ))
    return buckets

def _model_names(round, model_ids) -> dict:

    return dict(MLModel.objects.filter(pk__in=[m for m in model_ids if m is not None]).values_list("pk", "name"))

def vmer_over_time_by_model(round, rows: list[dict], hours: list) -> list[dict]:
    """``[{"name": model name, "points": [(hour, cumulative vMER or None), ...]}]``, one per model
    that answered examples of ``round``, over ``hours`` (the round's hours with examples), from
    ``rows`` (``per_model_hour``)."""
    by_model: dict = {}
    for row in rows:
        by_model.setdefault(row["model_id"], {})[row["hour"]] = (row["collected"], row["verified_fooled"])
    names = _model_names(round, by_model)
    series = []
    for model_id in sorted(by_model, key=lambda m: (m is None, m or 0)):
        collected = verified = 0
        points = []
        for hour in hours:
            c, v = by_model[model_id].get(hour, (0, 0))
            collected, verified = collected + c, verified + v
            points.append((hour, verified / collected if collected else None))
        series.append({"name": names.get(model_id, "(no model)"), "points": points})
    return series

def stats_per_model(round, rows: list[dict]) -> list[ModelInLoopStats]:
    """Each model in the loop of ``round`` (and any other model that answered its examples) with
    its counts from ``rows`` (``per_model_hour``); models that answered nothing yet show zeros."""
    by_model: dict = {}
    for row in rows:
        by_model.setdefault(row["model_id"], Counter()).update({k: row[k] for k in ("collected", "fooled", "verified_fooled")})
    found = []
    for model in round.target_models.order_by("pk"):
        row = by_model.pop(model.pk, Counter())
        found.append(ModelInLoopStats(model.pk, model.name, row["collected"], row["fooled"], row["verified_fooled"]))
    names = _model_names(round, by_model)
    for model_id, row in sorted(by_model.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)):
        found.append(ModelInLoopStats(model_id, names.get(model_id, "(no model)"), row["collected"], row["fooled"], row["verified_fooled"]))
    return found

def round_dashboard(round, *, sample: int = 10) -> RoundDashboard:
    """Return the ``RoundDashboard`` of ``round``: a bounded number of queries whatever its size.

    - the round's counts, vMER and agreement (Fleiss' κ, Krippendorff's α) from ``round_stats``
      (running tallies; the agreement as last computed by its job);
    - from the running hour tallies (``per_model_hour``, exact at any size): examples per hour
      and the cumulative vMER over time, also per model in the loop; counts and vMER per model
      in the loop;
    - from ``round_figures_of`` (exact per request up to ``FIGURES_LIVE_LIMIT`` examples, else
      the job's last computation, "as of"): the validation queue's depth and oldest example;
      how many flagged examples wait for a decision;
    - the ``sample`` flagged examples to decide first (pending, most flags, oldest; an index
      serves them) and ``sample`` active contexts nobody has written against (``times_used`` 0).
    """
    stats = round_stats(round, annotators=0)
    figures = round_figures_of(round)
    rows = per_model_hour(round)
    per_hour = examples_per_hour(rows)
    data = figures.data or {"queue": {"depth": 0, "oldest": None}, "flagged_count": 0}
    oldest = data["queue"]["oldest"]
    flagged = (
        Example.objects.filter(round=round, retracted=False, validation_state=ValidationState.PENDING)
        .filter(FLAGGED).select_related("author").order_by("-flagged_count", "created_at")
    )
    unused = Context.objects.filter(round=round, active=True, times_used=0)
    return RoundDashboard(
        stats=stats,
        per_hour=per_hour,
        vmer_over_time_by_model=vmer_over_time_by_model(round, rows, [b.hour for b in per_hour]),
        per_model=stats_per_model(round, rows),
        queue_depth=data["queue"]["depth"],
        oldest_pending=datetime.fromisoformat(oldest) if oldest else None,
        flagged_count=data["flagged_count"],
        flagged=list(flagged[:sample]),
        states=round_states(round, stats=stats, figures=figures),
        unused_contexts=unused.count(),
        unused_sample=list(unused.order_by("pk")[:sample]),
        contexts=Context.objects.filter(round=round, active=True).count(),
        figures_as_of=figures.as_of,
        figures_stale=figures.stale,
        figures_pending=figures.data is None,
    )

@dataclass(frozen=True)
class PersonStats:
    """One person's record on a task: examples written (not retracted), how many fooled the model
    (``fooling_rate``), verified fooled (``vmer``), user-mode validations given, how many of
    those were on settled examples and agreed with the consensus (``validation_accuracy``), and
    their last example or validation (``last_active``)."""

    examples: int = 0
    fooled: int = 0
    verified_fooled: int = 0
    validations: int = 0
    on_settled: int = 0
    agreeing: int = 0
    last_active: object = None

    @property
    def fooling_rate(self) -> float | None:
        return self.fooled / self.examples if self.examples else None

    @property
    def vmer(self) -> float | None:
        return self.verified_fooled / self.examples if self.examples else None

    @property
    def validation_accuracy(self) -> float | None:
        return self.agreeing / self.on_settled if self.on_settled else None

def people_stats(task, user_ids) -> dict[int, PersonStats]:
    """``{user id: PersonStats}`` on ``task`` for ``user_ids``, in two grouped queries (examples
    by author, validations by validator); people with no activity get an empty record."""
    ids = list(user_ids)
    found = {pk: {} for pk in ids}
    rows = (
        Example.objects.filter(round__task=task, author_id__in=ids)
        .values("author_id")
        .annotate(
            examples=Count("id", filter=Q(retracted=False)),
            fooled=Count("id", filter=Q(retracted=False, model_wrong=True)),
            verified_fooled=Count("id", filter=Q(model_wrong=True) & VALIDATED),
            last=Max("created_at"),
        )
        .order_by()
    )
    for row in rows:
        found[row["author_id"]].update(
            examples=row["examples"], fooled=row["fooled"], verified_fooled=row["verified_fooled"], last_active=row["last"]
        )
    rows = (
        Validation.objects.filter(example__round__task=task, validator_id__in=ids, mode=Validation.Mode.USER)
        .values("validator_id")
        .annotate(
            validations=Count("id"),
            on_settled=Count("id", filter=~Q(example__validation_state=ValidationState.PENDING)),
            agreeing=Count("id", filter=AGREES),
            last=Max("created_at"),
        )
        .order_by()
    )
    for row in rows:
        record = found[row["validator_id"]]
        last = max(filter(None, [record.get("last_active"), row["last"]]), default=None)
        record.update(validations=row["validations"], on_settled=row["on_settled"], agreeing=row["agreeing"], last_active=last)
    return {pk: PersonStats(**values) for pk, values in found.items()}

def task_people(task, *, query: str = "", limit: int = 50) -> list:
    """The users to show on ``task``'s people page: with ``query``, users whose username or email
    contains it (any user, so an owner can grant a newcomer a role); without, the task's owners,
    the users granted a role or banned there, and its authors and validators, most recently
    joined first. At most ``limit``."""
    users = get_user_model().objects.all()
    if query:
        users = users.filter(Q(username__icontains=query) | Q(email__icontains=query))
    else:
        involved = (
            Q(owned_tasks=task) | Q(task_roles__task=task) | Q(task_bans__task=task)
            | Q(pk__in=Example.objects.filter(round__task=task).values("author_id"))
            | Q(pk__in=Validation.objects.filter(example__round__task=task).values("validator_id"))
        )
        users = users.filter(involved)
    return list(users.distinct().order_by("-date_joined", "pk")[:limit])
