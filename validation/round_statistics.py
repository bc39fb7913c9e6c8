"""A round's statistics: one selector for every page and the API.

``round_stats`` (counts, vMER, states, validations, top annotators, agreement) and the grouped
figures the tallies do not hold (``round_figures_of``: the queue's depth and age, flagged
examples) are read from the running tallies (``annotation.counters``) and from the last
``RoundAgreement`` the job ``validation.jobs.compute_round_agreement`` computed (asked for here when
stale); ``round_states`` names the validation states as every page shows them. Also the agreement
itself (``round_agreement``: Fleiss' κ, Krippendorff's α) and the adaptive vote budget
(``vote_budget``). The round page, the owner's dashboard (``console/selectors.py``) and the API
read them.
"""

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from dataclasses import field as dataclass_field
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Count, Min, Q
from django.db.models.fields.json import KT
from django.utils import timezone

from annotation.models import Example, RoundTally, RoundVoteTally, ValidationState
from annotation.selectors import NOT_VALIDATED_LABEL, WAITING_LABEL, ExampleCounts, annotator_count, counts_by_author
from validation.calculations import VALIDATION_LABELS, Agreement, ConsensusPolicy, agreement_from_ratings, saved_votes
from validation.models import GoldItem, RoundAgreement, Validation


def round_agreement(round, *, field: str = "label") -> Agreement:
    """Return Fleiss' κ and Krippendorff's α over ``round``'s user-mode validations.

    ``field``: ``"label"`` (the verdicts correct/incorrect/flagged) or ``"voted_label"``
    (the category each validator voted, stored in ``metadata["voted_label"]`` by the vote
    importer, e.g. DynaSent's positive/negative/neutral/mixed). Owner decisions are not
    independent ratings and are left out, as are retracted examples and votes that do not
    count (gold checks, validators below the task's gold threshold). Each example's ratings
    are taken in recorded order. See ``calculations.agreement_from_ratings`` for the
    coefficients and the too-little-data rules (figures None with a reason).
    """
    validations = Validation.objects.filter(
        example__round=round, example__retracted=False, mode=Validation.Mode.USER, counts=True
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


def vote_budget(round) -> dict:
    """Return what the task's adaptive validation budget saved in ``round``: ``policy`` (its
    ``ConsensusPolicy``) plus ``calculations.saved_votes`` over the round's settled examples
    (retracted ones and gold items left out; each example's votes counted up to the policy's
    ``max_votes``), and ``exhausted``: pending examples that used up the budget unsettled and
    wait for an owner. Exact and live at any size: read from the running ``RoundVoteTally``
    rows (``annotation.counters``), less the round's few gold items; two queries."""
    policy = ConsensusPolicy.from_config(round.task.config)
    buckets = Counter()
    for settled, votes, n in RoundVoteTally.objects.filter(round=round).values_list("settled", "votes", "examples"):
        buckets[(settled, votes)] += n
    gold_items = GoldItem.objects.filter(example__round=round, example__retracted=False)
    for state, votes in gold_items.values_list("example__validation_state", "example__validation_count"):
        buckets[(state != ValidationState.PENDING, votes)] -= 1
    settled = sum(n for (is_settled, _), n in buckets.items() if is_settled)
    used = sum(n * min(votes, policy.max_votes) for (is_settled, votes), n in buckets.items() if is_settled)
    exhausted = sum(n for (is_settled, votes), n in buckets.items() if not is_settled and votes >= policy.max_votes)
    return {"policy": policy, "exhausted": exhausted, **saved_votes(settled=settled, votes_used=used, max_votes=policy.max_votes)}


def state_counts(round) -> dict[str, int]:
    """Return ``{state: n}`` over ``round``'s non-retracted examples, every state present
    (from the round's tally, ``annotation.counters``)."""
    tally = RoundTally.objects.filter(round=round).first()
    return {state: getattr(tally, state, 0) if tally else 0 for state in ValidationState.values}


# --- a round's statistics: one selector for every page and the API --------------------------

AGREEMENT_MIN_INTERVAL = timedelta(seconds=60)
"""A stale round agreement is recomputed at most this often (``round_stats`` asks the job)."""
AGREEMENT_JOB = "validation.jobs.compute_round_agreement"


@dataclass(frozen=True)
class RoundStats:
    """What the round page, the owner's dashboard and the API show about a round.

    ``counts``: ``ExampleCounts`` (collected, fooled, verified fooled, vMER) of non-retracted
    examples; ``states``: ``{validation state: n}``; ``validations``: validations recorded
    (every mode); ``retracted``: retracted examples; ``annotators``: the top
    ``[(author_id, ExampleCounts)]``, most verified fooled first, of ``annotator_total``.
    All of these come from the running tallies (exact as of the last commit).
    ``agreement``/``voted_agreement``: ``Agreement`` over verdicts / imported category votes
    as last computed by the job (None before the first run; ``voted_agreement`` None when the
    round has no votes), ``agreement_as_of`` when, ``agreement_stale`` True when validations
    were recorded or examples retracted since (a new computation has then been asked for).
    """

    counts: ExampleCounts
    states: dict[str, int]
    validations: int
    retracted: int
    annotators: list[tuple[int, ExampleCounts]] = dataclass_field(default_factory=list)
    annotator_total: int = 0
    agreement: Agreement | None = None
    voted_agreement: Agreement | None = None
    agreement_as_of: datetime | None = None
    agreement_stale: bool = False

    @property
    def more_annotators(self) -> int:
        return max(0, self.annotator_total - len(self.annotators))


def _agreement(data) -> Agreement | None:
    if data is None:
        return None
    return Agreement(**{**data, "categories": tuple(data.get("categories", ()))})


def round_stats(round, *, annotators: int = 50) -> RoundStats:
    """Return ``RoundStats`` for ``round`` in four queries whatever its size: its tally, its
    cached agreement, its top ``annotators`` annotators (0: none) and their number. (With
    fewer than two validations the agreement is "too little data" without any query.)

    Never rescans the round: counts come from ``annotation.counters``' tallies, agreement
    from ``RoundAgreement``. When the agreement is missing or older than the tally, and was
    not asked for in the last ``AGREEMENT_MIN_INTERVAL``, the job
    ``validation.jobs.compute_round_agreement`` is queued once the transaction commits
    (a conditional update makes concurrent readers queue it once).
    """
    tally = RoundTally.objects.filter(round=round).first() or RoundTally(round=round)
    if tally.validations < 2:  # no example has two ratings: the answer needs no scan
        cached = RoundAgreement(round=round, verdicts=asdict(agreement_from_ratings([], categories=VALIDATION_LABELS)))
        stale = False
    else:
        cached = RoundAgreement.objects.filter(round=round).first()
        stale = cached is None or (cached.validations, cached.retracted) != (tally.validations, tally.retracted)
        if stale:
            request_agreement(round, cached=cached)
    return RoundStats(
        counts=ExampleCounts(tally.collected, tally.fooled, tally.verified_fooled),
        states={state: getattr(tally, state) for state in ValidationState.values},
        validations=tally.validations,
        retracted=tally.retracted,
        annotators=counts_by_author(round, limit=annotators) if annotators else [],
        annotator_total=annotator_count(round) if annotators else 0,
        agreement=_agreement(cached.verdicts) if cached else None,
        voted_agreement=_agreement(cached.voted) if cached else None,
        agreement_as_of=cached.computed_at if cached else None,
        agreement_stale=stale,
    )


def request_agreement(round, *, cached: RoundAgreement | None = None) -> bool:
    """Queue ``compute_round_agreement`` for ``round`` unless it was asked for within
    ``AGREEMENT_MIN_INTERVAL``; True if queued. The job is named by its dotted path (RQ's
    ``default`` queue), enqueued when the current transaction commits."""
    now = timezone.now()
    if cached is not None and cached.requested_at is not None and cached.requested_at > now - AGREEMENT_MIN_INTERVAL:
        return False
    if cached is None:
        _, created = RoundAgreement.objects.get_or_create(round_id=round.pk, defaults={"requested_at": now})
        claimed = created
    else:
        claimed = bool(
            RoundAgreement.objects.filter(round_id=round.pk)
            .filter(Q(requested_at__isnull=True) | Q(requested_at__lte=now - AGREEMENT_MIN_INTERVAL))
            .update(requested_at=now)
        )
    if claimed:
        round_id = round.pk
        transaction.on_commit(lambda: _enqueue_agreement(round_id))
    return claimed


def _enqueue_agreement(round_id: int) -> None:
    import django_rq

    django_rq.get_queue("default").enqueue(
        AGREEMENT_JOB, round_id, job_id=f"round-agreement-{round_id}-{timezone.now():%Y%m%d%H%M%S%f}",
        description=f"agreement of round {round_id}",
    )


# --- a round's grouped figures (the owner's console reads them: console/selectors.py) ------


FIGURES_LIVE_LIMIT = 20_000
"""Rounds of at most this many examples (retracted ones included) get their grouped figures
(``round_figures``) computed per request, exact; larger rounds read them from the job's last
``RoundAgreement.figures`` ("as of"), since grouping a round takes seconds at a million examples."""

FLAGGED = Q(flagged_count__gte=1) | Q(flagged=True)


def round_figures(round) -> dict:
    """Aggregate ``round``'s examples for the figures the tallies do not hold: a JSON-safe dict
    with ``queue`` (``{"depth", "oldest"}``: pending examples the review queue will hand out,
    the oldest one's ISO time) and ``flagged_count`` (pending examples flagged by a validator
    or their author). Two aggregate queries over the round: ``compute_round_agreement`` calls it for large rounds,
    ``round_figures_of`` per request for small ones."""
    alive = Example.objects.filter(round=round, retracted=False)
    pending = alive.filter(validation_state=ValidationState.PENDING)
    queued = pending if round.task.config.get("validate_non_fooling") else pending.filter(model_wrong=True)
    queue = queued.aggregate(depth=Count("id"), oldest=Min("created_at"))
    return {
        "queue": {"depth": queue["depth"], "oldest": queue["oldest"].isoformat() if queue["oldest"] else None},
        "flagged_count": pending.filter(FLAGGED).count(),
    }


@dataclass(frozen=True)
class StateCount:
    """One line of a round's validation states as every page shows it: ``key`` (a
    ``ValidationState`` value, or ``waiting`` / ``not_validated`` for the two kinds of pending),
    ``label`` (the words the author's page uses too) and ``n``."""

    key: str
    label: str
    n: int


def round_states(round, *, stats: "RoundStats | None" = None, figures: "Figures | None" = None) -> list[StateCount]:
    """Return the validation states of ``round``'s examples (retracted ones left out) as the round
    page, the owner's dashboard and the author's page name them: pending examples split into
    ``waiting`` (the review queue hands them out: ``round_figures``' queue depth, the dashboard's
    "waiting for validation") and ``not_validated`` (pending examples no validator will see: they
    did not fool the model and the task validates fooling examples only; the words of
    ``annotation.selectors.validation_status``), then verified correct, verified incorrect, flagged.
    Counts from the tally (``stats``, else ``round_stats``) and ``figures`` (else
    ``round_figures_of``); while a large round's figures are being computed, pending stays one line.
    """
    stats = stats or round_stats(round, annotators=0)
    figures = figures or round_figures_of(round)
    states = stats.states
    pending = states.get(ValidationState.PENDING, 0)
    if figures.data is None:
        rows = [StateCount("pending", "Pending (being sorted into waiting and not validated)", pending)]
    else:
        waiting = min(pending, figures.data["queue"]["depth"])
        rows = [StateCount("waiting", WAITING_LABEL, waiting), StateCount("not_validated", NOT_VALIDATED_LABEL, pending - waiting)]
    labels = dict(ValidationState.choices)
    rows += [StateCount(s, labels[s], states.get(s, 0)) for s in ValidationState.values if s != ValidationState.PENDING]
    return rows


@dataclass(frozen=True)
class Figures:
    """``round_figures`` of a round as a page reads them: ``data`` (None when a large round's
    have not been computed yet), ``as_of`` (the job's time; None when computed for this
    request) and ``stale`` (the round changed since; a new computation was asked for)."""

    data: dict | None
    as_of: datetime | None = None
    stale: bool = False


def round_figures_of(round, *, tally: RoundTally | None = None) -> Figures:
    """``Figures`` of ``round``: computed now when it has at most ``FIGURES_LIVE_LIMIT``
    examples, else the job's last ``RoundAgreement.figures``, asking for a new computation
    (``request_agreement``) when the tally has moved on since."""
    tally = tally or RoundTally.objects.filter(round=round).first() or RoundTally(round=round)
    if tally.collected + tally.retracted <= FIGURES_LIVE_LIMIT:
        return Figures(round_figures(round))
    cached = RoundAgreement.objects.filter(round=round).first()
    stale = (
        cached is None or cached.figures is None
        or (cached.validations, cached.retracted, cached.collected) != (tally.validations, tally.retracted, tally.collected)
    )
    if stale:
        request_agreement(round, cached=cached)
    if cached is None or cached.figures is None:
        return Figures(None, stale=True)
    return Figures(cached.figures, as_of=cached.computed_at, stale=stale)
