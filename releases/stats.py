"""The datasheet's figures of a release, read from the platform's records when it is built (the
owner cannot edit them): per round its dates, models in the loop, examples collected, fooled and
verified fooled (vMER), counted validations per example, agreement (as last computed by
``validation.jobs.compute_round_agreement``), pay, and the share of examples written with AI help.
"""

from __future__ import annotations

from django.db.models import Count, Q

from annotation.models import Example, Origin
from annotation.selectors import counts_by_round
from tasks.models import Round, Task
from validation.models import RoundAgreement, RoundPay, Validation


def release_stats(task: Task, round_numbers: list[int], split_rows: dict[str, int]) -> dict:
    """Return ``{"consensus": {...}, "splits": {split: rows}, "rounds": [...]}`` for ``task``'s rounds
    ``round_numbers``. Each round: ``{"number", "start", "end" (ISO 8601 or None), "models" (names in
    the loop), "collected", "fooled", "verified_fooled", "vmer" (0..1 or None: nothing collected),
    "validations_per_example" (counted user validations / examples, or None), "agreement"
    ({"fleiss_kappa", "krippendorff_alpha", "n_items"} or None: never computed), "pay"
    ({"currency", "per_example", "per_validation", "bonus_per_fooling"} as strings, or None: unpaid),
    "ai_assisted_share" (examples written from a suggestion or generated / collected, or None)}``."""
    rounds = list(Round.objects.filter(task=task, number__in=round_numbers).prefetch_related("target_models").order_by("number"))
    counts = counts_by_round(rounds)
    agreements = {a.round_id: a for a in RoundAgreement.objects.filter(round__in=rounds)}
    pays = {p.round_id: p for p in RoundPay.objects.filter(round__in=rounds)}
    origins = dict(
        Example.objects.filter(round__in=rounds, retracted=False).values_list("round_id")
        .annotate(helped=Count("pk", filter=Q(origin__in=[Origin.ASSISTED, Origin.GENERATED]))).values_list("round_id", "helped")
    )
    validations = dict(
        Validation.objects.filter(example__round__in=rounds, example__retracted=False, mode=Validation.Mode.USER, counts=True)
        .values_list("example__round_id").annotate(n=Count("pk")).values_list("example__round_id", "n")
    )
    out = []
    for r in rounds:
        c = counts[r.pk]
        verdicts = (agreements.get(r.pk).verdicts or None) if r.pk in agreements else None
        pay = pays.get(r.pk)
        out.append({
            "number": r.number,
            "start": r.start.isoformat() if r.start else None,
            "end": r.end.isoformat() if r.end else None,
            "models": [m.name for m in r.target_models.all()],
            "collected": c.collected, "fooled": c.fooled, "verified_fooled": c.verified_fooled, "vmer": c.vmer,
            "validations_per_example": validations.get(r.pk, 0) / c.collected if c.collected else None,
            "agreement": {k: verdicts.get(k) for k in ("fleiss_kappa", "krippendorff_alpha", "n_items")} if verdicts else None,
            "pay": {"currency": pay.currency, "per_example": str(pay.per_example), "per_validation": str(pay.per_validation),
                    "bonus_per_fooling": str(pay.bonus_per_fooling)} if pay else None,
            "ai_assisted_share": origins.get(r.pk, 0) / c.collected if c.collected else None,
        })
    return {
        "consensus": {"validations_needed": task.validations_needed,
                      "rule": (f"An example is validated correct when {task.validations_needed} validators mark it correct, "
                               f"or an owner does; rejected when {task.validations_needed} mark it incorrect or flagged, "
                               "or an owner does. Its final label: owner correction > validator consensus > annotator's label.")},
        "splits": dict(split_rows),
        "rounds": out,
    }
