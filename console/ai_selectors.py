"""The owner's comparisons of AI help in one round (the round dashboard and the AI help page):

- **assisted against unassisted** (``assist_comparison``): with the round's A/B split on, the two arms
  (every example of a worker counts in their arm, whether or not they asked for a suggestion: a fair,
  randomised comparison); without it, examples written from a suggestion against those written unaided.
  Per group: validated model error rate (fooled and validated correct, per example), seconds per
  example, validator agreement (per validated example: the share of its votes for its most common
  label), and the transfer rate (``validation/transfer.py``) where examples have one; each a mean with its 95 % bootstrap interval
  (``annotation.calculations.mean_interval``).
- **people against the generator** (``generated_comparison``): validated fooling rate (of everything
  produced: people's examples, the generator's parsed candidates), cost per validated example (the
  round's pay per example and fooling bonus for people, endpoint tokens for the generator), and
  diversity of the texts (distinct-1/2, self-BLEU with sacreBLEU).
"""

from __future__ import annotations

from typing import NamedTuple

from django.db.models import Sum

from annotation.calculations import ab_arm, distinct_ngrams, mean_interval, self_bleu
from annotation.models import Example, GenerationRun, Origin, RoundAssistant, TransferRate, ValidationState

class _Row(NamedTuple):
    """The fields of one example the comparison reads (tuples, not model instances: a round may hold a million)."""

    pk: int
    author_id: int
    origin: str
    model_wrong: bool
    validation_state: str
    time_spent: float | None
    correct_count: int
    incorrect_count: int
    flagged_count: int
    validation_count: int


def _metrics(examples: list[_Row], rates: dict[int, float]) -> dict:
    """The group's figures; ``rates``: example id -> transfer rate, for the examples that have one
    (``validation/transfer.py``)."""
    validated_fooled = [1.0 if e.model_wrong and e.validation_state == ValidationState.VERIFIED_CORRECT else 0.0
                        for e in examples]
    agreement = [max(e.correct_count, e.incorrect_count, e.flagged_count) / e.validation_count
                 for e in examples if e.validation_count]
    metrics = {
        "vmer": mean_interval(validated_fooled),
        "seconds": mean_interval([e.time_spent for e in examples]),
        "agreement": mean_interval(agreement),
    }
    measured = [rates[e.pk] for e in examples if e.pk in rates]
    if measured:
        metrics["transfer"] = mean_interval(measured)
    return metrics


def assist_comparison(round) -> dict | None:
    """``{"by": "arm"|"origin", "groups": [{"key", "name", "n", "metrics": {name: Interval}}], "transfer": bool}``
    for ``round``, or None when the round has no assistant and no assisted example (two small queries then:
    the round dashboard asks on every visit)."""
    assistant = RoundAssistant.objects.filter(round=round).first()
    written = Example.objects.filter(round=round, retracted=False).exclude(origin=Origin.GENERATED)
    if assistant is None and not written.filter(origin=Origin.ASSISTED).exists():
        return None
    examples = [_Row(*row) for row in written.values_list(*_Row._fields)]
    by_arm = assistant is not None and assistant.ab_split
    groups = [("assisted", "Assisted arm" if by_arm else "Written with the assistant"),
              ("control" if by_arm else "written", "Unassisted arm" if by_arm else "Written unaided")]
    key = (lambda e: ab_arm(secret=round.secret, user_id=e.author_id)) if by_arm else (lambda e: e.origin)
    measured = TransferRate.objects.filter(example__in=written).values_list("example_id", "fooled", "tried")
    rates = {example_id: TransferRate(fooled=fooled, tried=tried).rate for example_id, fooled, tried in measured}
    rows = []
    for value, name in groups:
        chosen = [e for e in examples if key(e) == value]
        rows.append({"key": value, "name": name, "n": len(chosen), "metrics": _metrics(chosen, rates)})
    return {"by": "arm" if by_arm else "origin", "groups": rows, "transfer": bool(rates)}


def _texts(examples: list[Example], names: list[str]) -> list[str]:
    return [" ".join(str(e.input.get(n, "")) for n in names).strip() for e in examples]


def _diversity(texts: list[str]) -> dict:
    return {"distinct_1": distinct_ngrams(texts, 1), "distinct_2": distinct_ngrams(texts, 2), "self_bleu": self_bleu(texts)}


def generated_comparison(round) -> dict | None:
    """``{"people": {...}, "generator": {...}, "rows": [(key, name, side)], "runs": [GenerationRun]}`` for ``round``, or None without a
    generation run. Each side: ``n`` (produced), ``validated`` (fooled and validated correct),
    ``rate`` (``Interval`` of the validated fooling rate), ``cost`` (people: pay per validated example in
    ``currency``; the generator: tokens per validated example), and the diversity figures."""
    runs = list(GenerationRun.objects.filter(round=round).select_related("model"))
    if not runs:
        return None
    from validation.pay import round_pay

    names = [f["name"] for f in round.task.config["input_fields"]]
    examples = list(Example.objects.filter(round=round, retracted=False))
    people = [e for e in examples if e.origin != Origin.GENERATED]
    generated = [e for e in examples if e.origin == Origin.GENERATED]

    def validated(group):
        return [e for e in group if e.model_wrong and e.validation_state == ValidationState.VERIFIED_CORRECT]

    people_ok, generated_ok = validated(people), validated(generated)
    produced = sum(r.candidates for r in runs)
    pay = round_pay(round)
    accepted = sum(1 for e in people if e.validation_state == ValidationState.VERIFIED_CORRECT)
    paid = accepted * pay.per_example + len(people_ok) * pay.bonus_per_fooling  # validation/pay.py's amounts
    tokens = GenerationRun.objects.filter(round=round).aggregate(t=Sum("tokens"))["t"] or 0
    result = {
        "runs": runs,
        "people": {"n": len(people), "validated": len(people_ok),
                   "rate": mean_interval([1.0 if e in people_ok else 0.0 for e in people]),
                   # no pay set for the round: no cost to show, rather than 0.00
                   "cost": (paid / len(people_ok)) if people_ok and paid else None, "currency": pay.currency,
                   "unpaid": not (pay.per_example or pay.bonus_per_fooling),
                   **_diversity(_texts(people, names))},
        "generator": {"n": produced, "validated": len(generated_ok),
                      "rate": mean_interval([1.0] * len(generated_ok) + [0.0] * max(0, produced - len(generated_ok))),
                      "cost": (tokens / len(generated_ok)) if generated_ok else None, "tokens": tokens,
                      **_diversity(_texts(generated, names))},
    }
    result["rows"] = [("people", "People", result["people"]), ("generator", "Generator", result["generator"])]
    return result


def ab_arms_of(task, person) -> list[tuple[int, str]]:
    """``(round number, arm)`` for each round of ``task`` whose writing assistant splits workers, the arm
    ``person`` is in there (``"assisted"`` or ``"control"``, ``annotation.assist.arm_of``: stable per worker
    and round), oldest round first. One query."""
    from annotation.assist import arm_of
    from annotation.models import RoundAssistant

    split = RoundAssistant.objects.filter(round__task=task, ab_split=True).select_related("round").order_by("round__number")
    return [(a.round.number, arm_of(round=a.round, user=person, assistant=a)) for a in split]
