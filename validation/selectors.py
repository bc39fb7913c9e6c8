"""Reads about validations: agreement per round, the owner queue, export rows, user stats.

Counts and vMER come from ``annotation/selectors.py``; this module never recounts them.
"""

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count, F, IntegerField, Q, QuerySet, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Greatest

from annotation.models import Example, ValidationState
from validation.calculations import VALIDATION_LABELS, Agreement, agreement_from_ratings, anonymise
from validation.models import Validation


def round_agreement(round, *, field: str = "label") -> Agreement:
    """Return Fleiss' κ and Krippendorff's α over ``round``'s user-mode validations.

    ``field``: ``"label"`` (the verdicts correct/incorrect/flagged) or ``"voted_label"``
    (the category each validator voted, stored in ``metadata["voted_label"]`` by the vote
    importer, e.g. DynaSent's positive/negative/neutral/mixed). Owner decisions are not
    independent ratings and are left out, as are retracted examples. Each example's ratings
    are taken in recorded order. See ``calculations.agreement_from_ratings`` for the
    coefficients and the too-little-data rules (figures None with a reason).
    """
    validations = Validation.objects.filter(
        example__round=round, example__retracted=False, mode=Validation.Mode.USER
    ).order_by("example_id", "id")
    if field == "label":
        rows = validations.values_list("example_id", "label")
        categories = VALIDATION_LABELS
    elif field == "voted_label":
        rows = validations.filter(metadata__has_key="voted_label").values_list("example_id", KT("metadata__voted_label"))
        categories = None
    else:
        raise ValueError(f"field must be 'label' or 'voted_label', not {field!r}")
    per_example = defaultdict(list)
    for example_id, value in rows.iterator(chunk_size=5000):
        per_example[example_id].append(value)
    return agreement_from_ratings(per_example.values(), categories=categories)


def has_voted_labels(round) -> bool:
    """True if some validation of ``round`` carries an imported ``voted_label``."""
    return Validation.objects.filter(example__round=round, metadata__has_key="voted_label").exists()


def state_counts(round) -> dict[str, int]:
    """Return ``{state: n}`` over ``round``'s non-retracted examples, every state present."""
    rows = dict(
        Example.objects.filter(round=round, retracted=False)
        .values_list("validation_state")
        .annotate(n=Count("id"))
        .values_list("validation_state", "n")
    )
    return {state: rows.get(state, 0) for state in ValidationState.values}


def owner_queue(round, *, min_flags: int = 0, disagreement: bool = False, state: str | None = None) -> QuerySet:
    """Return ``round``'s non-retracted examples for owner review, most contested first.

    ``min_flags``: at least that many ``flagged`` validations. ``disagreement``: validations
    with two or more different labels. ``state``: one ``ValidationState`` value or None for all.
    Annotated with ``disagreeing`` = validations minus the largest label count.
    """
    examples = Example.objects.filter(round=round, retracted=False).select_related("author", "context")
    examples = examples.annotate(
        disagreeing=F("validation_count")
        - Greatest(F("correct_count"), F("incorrect_count"), F("flagged_count"), Value(0), output_field=IntegerField())
    )
    if min_flags:
        examples = examples.filter(flagged_count__gte=min_flags)
    if disagreement:
        examples = examples.filter(disagreeing__gt=0)
    if state:
        examples = examples.filter(validation_state=state)
    return examples.order_by("-flagged_count", "-disagreeing", "created_at", "pk")


def export_rows(examples: QuerySet):
    """Yield one JSON-ready dict per example of ``examples`` (retracted ones included, marked),
    with its validations; user ids anonymised as ``sha256(round.secret + user id)[:16]``.

    Shape: ``{"id", "task", "round", "context": {"uid", "data", "tag"}, "annotator", "input",
    "target", "model_output", "model_wrong", "metadata", "tag", "retracted", "flagged",
    "split", "validation_state", "created_at", "time_spent", "validations": [{"validator",
    "label", "mode", "metadata", "created_at"}]}``. Streams in chunks of 500 examples.
    """
    examples = (
        examples.select_related("round__task", "context")
        .prefetch_related("validations")
        .order_by("round_id", "pk")
    )
    for e in examples.iterator(chunk_size=500):
        secret = e.round.secret
        yield {
            "id": e.pk,
            "task": e.round.task.code,
            "round": e.round.number,
            "context": {"uid": e.context.uid, "data": e.context.data, "tag": e.context.tag},
            "annotator": anonymise(secret, e.author_id),
            "input": e.input,
            "target": e.target,
            "model_output": e.model_output,
            "model_wrong": e.model_wrong,
            "metadata": e.metadata,
            "tag": e.tag,
            "retracted": e.retracted,
            "flagged": e.flagged,
            "split": e.split,
            "validation_state": e.validation_state,
            "created_at": e.created_at.isoformat(),
            "time_spent": e.time_spent,
            "validations": [
                {
                    "validator": anonymise(secret, v.validator_id),
                    "label": v.label,
                    "mode": v.mode,
                    "metadata": v.metadata,
                    "created_at": v.created_at.isoformat(),
                }
                for v in sorted(e.validations.all(), key=lambda v: v.pk)
            ],
        }


@dataclass(frozen=True)
class ValidatorStats:
    """A validator's record: user-mode validations given, how many were on examples now
    settled, and how many of those agreed with the settled outcome (``agreement_rate``)."""

    given: int
    on_settled: int
    agreeing: int

    @property
    def agreement_rate(self) -> float | None:
        return self.agreeing / self.on_settled if self.on_settled else None


_AGREES = (
    Q(label="correct", example__validation_state=ValidationState.VERIFIED_CORRECT)
    | Q(label="incorrect", example__validation_state=ValidationState.VERIFIED_INCORRECT)
    | Q(label="flagged", example__validation_state=ValidationState.FLAGGED)
)


def validator_stats(user, *, round=None) -> ValidatorStats:
    """Return ``ValidatorStats`` for ``user``'s user-mode validations (in ``round`` if given)."""
    validations = Validation.objects.filter(validator=user, mode=Validation.Mode.USER)
    if round is not None:
        validations = validations.filter(example__round=round)
    row = validations.aggregate(
        given=Count("id"),
        on_settled=Count("id", filter=~Q(example__validation_state=ValidationState.PENDING)),
        agreeing=Count("id", filter=_AGREES),
    )
    return ValidatorStats(**row)
