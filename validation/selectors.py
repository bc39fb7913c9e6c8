"""Reads about validations: the validated examples with their final labels, and a validator's record.

``validated_examples`` is the one definition of "a validated example and its final label"
(DESIGN.md): round close, the round download and export, retraining and crowd statistics
all call it. Counts and vMER come from ``annotation/selectors.py`` (with the same
``annotation.models.VALIDATED`` predicate); this module never recounts them. A round's
statistics are ``validation/round_statistics.py``; the export ``validation/export.py``; what the
review and owner queues show ``validation/queue_selectors.py``.
"""

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from annotation.label_changes import MARK_KEY
from annotation.models import VALIDATED, Example, ValidationState
from tasks import access
from validation.models import Validation
from validation.own_answers import with_own_answers

OWNER_CORRECTION = "owner_correction"
ANNOTATOR = "annotator"


# --- the validated examples and their final labels -----------------------------------------


def validated_queryset(*, task=None, round=None, examples: QuerySet | None = None) -> QuerySet:
    """Return the validated examples (``annotation.models.VALIDATED``: verified correct by
    validator consensus or an owner, not retracted) of ``task`` and/or ``round``, or among
    ``examples``; ordered by round number, then id. Their final labels: ``validated_examples``.
    """
    chosen = (examples if examples is not None else Example.objects.all()).filter(VALIDATED)
    chosen = chosen.exclude(metadata__has_key=MARK_KEY)  # its label was removed from the task without a replacement
    if task is not None:
        chosen = chosen.filter(round__task=task)
    if round is not None:
        chosen = chosen.filter(round=round)
    return chosen.order_by("round__number", "pk")


def final_target(example, owner_decision: dict | None) -> dict:
    """Return the final label of a validated ``example``: the owner's correction when the
    latest owner decision carries one (``corrected_label`` -> ``{"label"}``,
    ``corrected_answer`` -> ``{"answers": [..]}``), else the annotator's ``target``, the label
    the validators' consensus confirmed (a validator who corrects a label votes ``incorrect``,
    so consensus never yields another label). ``owner_decision``: that validation's metadata.
    """
    meta = owner_decision or {}
    if "corrected_label" in meta:
        return {"label": meta["corrected_label"]}
    if "corrected_answer" in meta:
        return {"answers": [meta["corrected_answer"]]}
    return example.target


@dataclass(frozen=True)
class ValidatedExample:
    """A validated example with its final label. ``target``: ``{"label"}`` or ``{"answers"}``;
    ``label_source``: ``"owner_correction"`` or ``"annotator"`` (confirmed by the validators)."""

    example: Example
    target: dict
    label_source: str


def owner_decisions(example_ids) -> dict[int, dict]:
    """``{example id: metadata of its latest owner-mode validation}`` for ``example_ids``, in one query."""
    return dict(
        Validation.objects.filter(example_id__in=list(example_ids), mode=Validation.Mode.OWNER)
        .order_by("id")
        .values_list("example_id", "metadata")
    )


def validated_examples(*, task=None, round=None, examples: QuerySet | None = None) -> list[ValidatedExample]:
    """Return the validated examples (see ``validated_queryset``, same arguments) with their
    final labels (owner correction > validator consensus > annotator's label, ``final_target``;
    on a kind that keeps validators' own answers, those answers after it,
    ``validation.own_answers``), in two or three queries. Order: round number, then id.
    """
    chosen = list(validated_queryset(task=task, round=round, examples=examples).select_related("round__task", "context"))
    decisions = owner_decisions(e.pk for e in chosen)
    targets = [(e, final_target(e, decisions.get(e.pk))) for e in chosen]
    added = {}  # validators' own answers (VQA), per task of the examples
    for task_id, task_of in {e.round.task_id: e.round.task for e in chosen}.items():
        added.update(with_own_answers(task_of, [(e, t) for e, t in targets if e.round.task_id == task_id]))
    return [ValidatedExample(example=e, target=added.get(e.pk, target), label_source=ANNOTATOR if target is e.target else OWNER_CORRECTION)
            for e, target in targets]


def retraining_rows(task) -> list[dict]:
    """Return the rows a retrained target model of ``task`` learns from: its validated examples
    of every round with their final labels (``validated_examples``), except those a closed
    round put in its dev or test split, so a retrained model is never scored on data it was
    trained on. Each row: ``{"id", "round" (number), "input", "target"}``, for
    ``tasks.loop.training.examples.validated_training_examples``.
    """
    not_held_out = Example.objects.exclude(split__in=("dev", "test"))
    return [
        {"id": v.example.pk, "round": v.example.round.number, "input": v.example.input, "target": v.target}
        for v in validated_examples(task=task, examples=not_held_out)
    ]


def downloadable_examples(round) -> QuerySet:
    """Return the round's validated examples, hidden splits left out (``tasks.access``), by id.

    The caller checks ``tasks.access.can_download_round_examples`` first.
    """
    return validated_queryset(round=round).exclude(access.hidden_example_filter()).order_by("id")


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


AGREES = (
    Q(label="correct", example__validation_state=ValidationState.VERIFIED_CORRECT)
    | Q(label="incorrect", example__validation_state=ValidationState.VERIFIED_INCORRECT)
    | Q(label="flagged", example__validation_state=ValidationState.FLAGGED)
)


def validator_stats(user, *, round=None) -> ValidatorStats:
    """Return ``ValidatorStats`` for ``user``'s user-mode validations (in ``round`` if given)."""
    validations = Validation.objects.filter(validator=user, mode=Validation.Mode.USER, gold_check=False)
    if round is not None:
        validations = validations.filter(example__round=round)
    row = validations.aggregate(
        given=Count("id"),
        on_settled=Count("id", filter=~Q(example__validation_state=ValidationState.PENDING)),
        agreeing=Count("id", filter=AGREES),
    )
    return ValidatorStats(**row)
