"""Reads about examples: counts and the validated model error rate (vMER).

vMER (DESIGN.md, after Kiela et al., "Dynabench", NAACL 2021, section 3): examples that
fooled the model and were validated as correct, divided by all examples collected that
were not retracted. Every page, the API and the exports call these functions; none
keeps its own copy of the rule. A round's and a user's counts come from the running tallies
(``annotation/counters.py``); ``example_counts`` counts any other set of examples.
``needs_content_warning`` reads whether an annotator must see a task's content warning first.
"""

from dataclasses import astuple, dataclass

from django.db.models import Count, Q, QuerySet, Sum
from django.db.models.functions import Coalesce

from annotation.models import VALIDATED, AuthorTally, Example, RoundTally, ValidationState
from dynabench import hotsql
from tasks import access
from tasks.models import Task

_COUNTS = {
    "collected": Count("id"),
    "fooled": Count("id", filter=Q(model_wrong=True)),
    "verified_fooled": Count("id", filter=Q(model_wrong=True) & VALIDATED),
    "settled": Count("id", filter=~Q(validation_state=ValidationState.PENDING)),
}


@dataclass(frozen=True)
class ExampleCounts:
    """Counts over non-retracted examples; ``vmer`` is None when nothing was collected.

    ``settled``: examples whose validation is decided (verified correct or incorrect, or
    flagged), by validators or an owner.
    """

    collected: int
    fooled: int
    verified_fooled: int
    settled: int = 0

    @property
    def vmer(self) -> float | None:
        return self.verified_fooled / self.collected if self.collected else None

    @property
    def vmer_so_far(self) -> float | None:
        """The vMER once at least one example is settled; None before (a person's pages show "—").

        Before any validation a vMER of 0 would read as "none of your examples held up";
        it only means nobody has validated them yet.
        """
        return self.vmer if self.settled else None

    @property
    def mer(self) -> float | None:
        """Unvalidated model error rate: fooled / collected."""
        return self.fooled / self.collected if self.collected else None


def awaits_validation(example: Example) -> bool:
    """Whether ``example`` will go to the validators: not retracted, and fooling the model unless
    its task's ``validate_non_fooling`` sends every example (the review queue's rule)."""
    if example.retracted:
        return False
    return example.model_wrong or bool(example.round.task.config.get("validate_non_fooling"))


WAITING_LABEL = "Waiting for validation"
"""What a pending example that the review queue hands out is called, on every page (the author's
examples, the round page, the owner's dashboard: ``validation.round_statistics.round_states``)."""

NOT_VALIDATED_LABEL = "Not validated: it did not fool the model"
"""What a pending example no validator will see (it did not fool the model and the task validates
fooling examples only) is called, on every page."""


def validation_status(example: Example) -> str:
    """What an example's author reads about its validation, e.g. "Verified correct (3✓ 0✗)".

    A pending example that no validator will see (it did not fool the model and the task
    validates fooling examples only, or it was retracted) says so; one the queue hands out is
    ``WAITING_LABEL`` (the round page and the dashboard use the same words and counts).
    """
    if example.validation_state == ValidationState.PENDING:
        if example.retracted:
            return "Not validated: retracted"
        if not awaits_validation(example):
            return NOT_VALIDATED_LABEL
        text = WAITING_LABEL
    else:
        text = example.get_validation_state_display()
    if example.validation_count:
        text += f" ({example.correct_count}✓ {example.incorrect_count}✗)"
    return text


def example_counts(examples: QuerySet) -> ExampleCounts:
    """Return ``ExampleCounts`` over ``examples`` (retracted ones are left out), in one query."""
    return ExampleCounts(**examples.filter(retracted=False).aggregate(**_COUNTS))


def _from_tally(row) -> "ExampleCounts":
    """``ExampleCounts`` of a ``RoundTally`` (settled: collected examples no longer pending)."""
    if row is None:
        return ExampleCounts(0, 0, 0, 0)
    return ExampleCounts(row.collected, row.fooled, row.verified_fooled, row.collected - row.pending)


def round_counts(round) -> ExampleCounts:
    """``ExampleCounts`` of one round, from its running tally (``annotation.counters``), one query."""
    return _from_tally(RoundTally.objects.filter(round=round).first())


def _author_tally_sql() -> str:
    a = AuthorTally
    counts = ", ".join(hotsql.column(a, name) for name in ("collected", "fooled", "verified_fooled", "settled"))
    return f"SELECT {counts} FROM {hotsql.table(a)} WHERE {hotsql.column(a, 'round')} = %s AND {hotsql.column(a, 'author')} = %s"


def user_counts(user, *, task=None, round=None) -> ExampleCounts:
    """``ExampleCounts`` of ``user``'s examples (in ``task`` and/or ``round`` if given), summed
    over their per-round tallies (``AuthorTally``), one query. In one round (the write and review
    pages after each example or verdict) that is one row, read with a statement built once."""
    if round is not None and task is None:
        row = hotsql.fetch_one(hotsql.statement("annotation.author_tally", _author_tally_sql), [round.pk, user.pk])
        return ExampleCounts(*row) if row else ExampleCounts(0, 0, 0, 0)
    tallies = AuthorTally.objects.filter(author=user)
    if task is not None:
        tallies = tallies.filter(round__task=task)
    if round is not None:
        tallies = tallies.filter(round=round)
    row = tallies.aggregate(**{name: Coalesce(Sum(name), 0) for name in ("collected", "fooled", "verified_fooled", "settled")})
    return ExampleCounts(**row)


def author_counts(user, *, task=None) -> ExampleCounts:
    """``user``'s own figures as shown to them (``GET /api/v1/me``): ``user_counts`` less their examples
    in hidden splits (``tasks.access.hidden_example_filter``) of tasks they do not own. Those examples'
    outcomes stay on the server, from their author too (``tasks.selectors.example_labels_hidden``); counted
    here, the totals less the visible examples would tell them. Owners and admins see everything."""
    counts = user_counts(user, task=task)
    if getattr(user, "is_superuser", False):
        return counts
    hidden = Example.objects.filter(author=user).filter(access.hidden_example_filter()).exclude(round__task__owners=user)
    if task is not None:
        hidden = hidden.filter(round__task=task)
    if not hidden.exists():
        return counts
    less = example_counts(hidden)
    return ExampleCounts(*(max(a - b, 0) for a, b in zip(astuple(counts), astuple(less))))


def counts_by_round(rounds) -> dict[int, ExampleCounts]:
    """``{round_id: ExampleCounts}`` for many rounds in one query (rounds with none get zeros)."""
    found = {t.round_id: t for t in RoundTally.objects.filter(round__in=[r.pk for r in rounds])}
    return {r.pk: _from_tally(found.get(r.pk)) for r in rounds}


def counts_by_author(round, *, limit: int | None = None) -> list[tuple[int, ExampleCounts]]:
    """``[(author_id, ExampleCounts)]`` for one round, most verified fooled first (then most
    fooled, then author id); at most ``limit`` rows. From ``AuthorTally`` (its index
    ``author_tally_ranking``), so it reads ``limit`` rows, never the round's examples.
    Annotators whose examples are all retracted are left out."""
    rows = (
        AuthorTally.objects.filter(round=round, collected__gt=0)
        .order_by("-verified_fooled", "-fooled", "author_id")
        .values_list("author_id", "collected", "fooled", "verified_fooled", "settled")
    )
    if limit is not None:
        rows = rows[:limit]
    return [(author_id, ExampleCounts(*counts)) for author_id, *counts in rows]


def annotator_count(round) -> int:
    """How many people wrote a (non-retracted) example in ``round``."""
    return AuthorTally.objects.filter(round=round, collected__gt=0).count()


def needs_content_warning(*, user, task: Task, acknowledged: bool) -> bool:
    """True when ``user`` must see ``task``'s content warning before writing: the task has one,
    they have not acknowledged it in this session, and they have written no example of it yet."""
    if not task.content_warning or acknowledged:
        return False
    return not Example.objects.filter(author=user, round__task=task).exists()
