"""Reads about examples: counts and the validated model error rate (vMER).

vMER (DESIGN.md, after Kiela et al., "Dynabench", NAACL 2021, section 3): examples that
fooled the model and were validated as correct, divided by all examples collected that
were not retracted. Every page, the API and the exports call these functions; none
keeps its own copy of the rule.
"""

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from annotation.models import Example, ValidationState

_COUNTS = {
    "collected": Count("id"),
    "fooled": Count("id", filter=Q(model_wrong=True)),
    "verified_fooled": Count("id", filter=Q(model_wrong=True, validation_state=ValidationState.VERIFIED_CORRECT)),
}


@dataclass(frozen=True)
class ExampleCounts:
    """Counts over non-retracted examples; ``vmer`` is None when nothing was collected."""

    collected: int
    fooled: int
    verified_fooled: int

    @property
    def vmer(self) -> float | None:
        return self.verified_fooled / self.collected if self.collected else None

    @property
    def mer(self) -> float | None:
        """Unvalidated model error rate: fooled / collected."""
        return self.fooled / self.collected if self.collected else None


def example_counts(examples: QuerySet) -> ExampleCounts:
    """Return ``ExampleCounts`` over ``examples`` (retracted ones are left out), in one query."""
    return ExampleCounts(**examples.filter(retracted=False).aggregate(**_COUNTS))


def round_counts(round) -> ExampleCounts:
    return example_counts(Example.objects.filter(round=round))


def user_counts(user, *, task=None, round=None) -> ExampleCounts:
    examples = Example.objects.filter(author=user)
    if task is not None:
        examples = examples.filter(round__task=task)
    if round is not None:
        examples = examples.filter(round=round)
    return example_counts(examples)


def counts_by_round(rounds) -> dict[int, ExampleCounts]:
    """``{round_id: ExampleCounts}`` for many rounds in one query (rounds with none get zeros)."""
    rows = (
        Example.objects.filter(round__in=rounds, retracted=False)
        .values("round_id")
        .annotate(**_COUNTS)
    )
    found = {row.pop("round_id"): ExampleCounts(**row) for row in rows}
    return {r.pk: found.get(r.pk, ExampleCounts(0, 0, 0)) for r in rounds}


def counts_by_author(round) -> list[tuple[int, ExampleCounts]]:
    """``[(author_id, ExampleCounts)]`` for one round, most verified fooled first."""
    rows = (
        Example.objects.filter(round=round, retracted=False)
        .values("author_id")
        .annotate(**_COUNTS)
        .order_by("-verified_fooled", "-fooled", "author_id")
    )
    return [(row.pop("author_id"), ExampleCounts(**row)) for row in rows]
