"""Reads of the transfer rates (``validation/transfer.py`` stores them): a round's distribution for
the owner's console, per annotator and per model in the loop; each example's rate for the export
and the API; the examples that earn a round's transfer bonus (``validation/pay.py``).

Every figure here comes from the stored ``TransferRate`` rows (``annotation.models``); nothing
runs a model.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import F

from annotation.models import Example, TransferRate, TransferResult
from tasks.models import Round
from validation.models import RoundPay
from validation.selectors import validated_queryset
from validation.transfer import CountedModels, counted_models, ready_models

#: The distribution's buckets, in order (``bucket_of``).
BUCKETS = ("none", "up to 1/4", "up to 1/2", "up to 3/4", "more, not all", "all")


def bucket_of(fooled: int, tried: int) -> str:
    """The ``BUCKETS`` label of an example that fooled ``fooled`` of ``tried`` other models: ``none``
    (0), ``all`` (every one), else by the rate's quarter (``up to 1/4`` is 0 < rate ≤ 0.25, ...)."""
    if fooled == 0:
        return BUCKETS[0]
    if fooled == tried:
        return BUCKETS[-1]
    rate = fooled / tried
    return next(label for label, high in zip(BUCKETS[1:4], (0.25, 0.5, 0.75)) if rate <= high) if rate <= 0.75 else BUCKETS[4]


def transfer_of(rate: TransferRate | None) -> dict | None:
    """The shape an example's transfer takes in the export and the API: ``{"rate", "fooled",
    "tried"}`` (``rate`` = fooled / tried, a float in 0..1), or None when none is measured."""
    return None if rate is None else rate.as_dict()


@dataclass
class Group:
    """One row of a breakdown: ``name``, ``examples`` rated, their mean transfer rate, and how many
    fool at least one other model (``transferring``)."""

    name: str
    examples: int = 0
    rate_sum: float = 0.0
    transferring: int = 0

    @property
    def mean_rate(self) -> float | None:
        return self.rate_sum / self.examples if self.examples else None

    def add(self, fooled: int, tried: int) -> None:
        self.examples += 1
        self.rate_sum += fooled / tried
        self.transferring += int(fooled > 0)


@dataclass
class RoundTransfer:
    """A round's transfer figures: ``overall`` (a ``Group``), ``buckets`` (label, examples) of the
    rate, ``by_annotator`` and ``by_loop_model`` (``Group`` rows, most examples first), and
    ``by_other_model``: per counted model tried, the share of the examples put to it that fooled it;
    ``models``: which models the rates count and which are left out, with why (``counted_models``)."""

    overall: Group
    buckets: list[tuple[str, int]]
    by_annotator: list[Group]
    by_loop_model: list[Group]
    by_other_model: list[dict] = field(default_factory=list)
    models: CountedModels | None = None


def round_transfer(round) -> RoundTransfer:
    """Return ``RoundTransfer`` for ``round`` from its stored rates and results (of the counted models only)."""
    rows = TransferRate.objects.filter(example__round=round).values_list(
        "fooled", "tried", "example__author__username", "example__model__name"
    )
    overall = Group(name=str(round))
    counts = dict.fromkeys(BUCKETS, 0)
    annotators: dict[str, Group] = {}
    loop_models: dict[str, Group] = {}
    for fooled, tried, author, loop_model in rows.iterator(chunk_size=5000):
        overall.add(fooled, tried)
        counts[bucket_of(fooled, tried)] += 1
        annotators.setdefault(author, Group(name=author)).add(fooled, tried)
        name = loop_model or "(no model)"
        loop_models.setdefault(name, Group(name=name)).add(fooled, tried)
    others = defaultdict(lambda: [0, 0])
    counted = [m.pk for m in ready_models(round.task, round=round)]
    results = TransferResult.objects.filter(example__round=round, example__transfer__isnull=False, model_id__in=counted).exclude(
        model_id=F("example__model_id")
    )
    for name, was_fooled in results.values_list("model__name", "fooled").iterator(chunk_size=5000):
        others[name][0] += 1
        others[name][1] += int(was_fooled)
    by_size = lambda groups: sorted(groups.values(), key=lambda g: (-g.examples, g.name))  # noqa: E731
    return RoundTransfer(
        overall=overall, buckets=list(counts.items()), by_annotator=by_size(annotators), by_loop_model=by_size(loop_models),
        by_other_model=[{"name": n, "tried": t, "fooled": f, "rate": f / t} for n, (t, f) in sorted(others.items())],
        models=counted_models(round),
    )


@dataclass(frozen=True)
class EarnedTransfer:
    """A validated example that earns the transfer bonus: it fooled ``fooled`` of ``tried`` other models."""

    example_id: int
    author_id: int
    fooled: int
    tried: int


def transfer_earners(round, *, min_models: int) -> list[EarnedTransfer]:
    """The validated examples of ``round`` (``selectors.validated_queryset``) that fooled at least
    ``min_models`` other models (their stored ``TransferRate.fooled``), by id."""
    rows = (
        validated_queryset(round=round).filter(transfer__fooled__gte=min_models)
        .order_by("pk").values_list("pk", "author_id", "transfer__fooled", "transfer__tried")
    )
    return [EarnedTransfer(example_id=pk, author_id=a, fooled=f, tried=t) for pk, a, f, t in rows]


@dataclass
class PersonRoundTransfer:
    """One round of a person's rated examples: ``rows`` of ``(example id, fooled, tried, earned)``
    (``earned``: it earns the round's transfer bonus), the round's rule ``min_models`` (None: no
    transfer bonus), the ``bonus`` per example and its ``currency``."""

    round: object
    rows: list[tuple[int, int, int, bool]]
    min_models: int | None
    bonus: object
    currency: str

    @property
    def earned(self) -> int:
        return sum(1 for *_, e in self.rows if e)


def person_transfer(person) -> list[PersonRoundTransfer]:
    """The transfer rates of ``person``'s validated examples, per round (task code, then number), with
    the round's transfer bonus rule and which examples earned it (``transfer_earners``'s rule: validated,
    at least ``RoundPay.transfer_min_models`` other models fooled). Three queries."""
    rated = (
        validated_queryset(examples=Example.objects.filter(author=person))
        .filter(transfer__isnull=False)
        .order_by("round__task__code", "round__number", "pk").values_list("round", "pk", "transfer__fooled", "transfer__tried")
    )
    per_round: dict[int, list[tuple[int, int, int]]] = {}
    for round_id, pk, fooled, tried in rated:
        per_round.setdefault(round_id, []).append((pk, fooled, tried))
    pays = {p.round_id: p for p in RoundPay.objects.filter(round_id__in=list(per_round))}
    rounds = {r.pk: r for r in Round.objects.filter(pk__in=list(per_round)).select_related("task")}
    found = []
    for round_id, rows in per_round.items():
        pay = pays.get(round_id)
        k = pay.transfer_min_models if pay else None
        found.append(PersonRoundTransfer(
            round=rounds[round_id], rows=[(pk, f, t, k is not None and f >= k) for pk, f, t in rows], min_models=k,
            bonus=pay.transfer_bonus if pay else None, currency=pay.currency if pay else "",
        ))
    return found
