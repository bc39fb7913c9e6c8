"""Reads about validations: the validated examples with their final labels, agreement per
round, the owner queue, export rows, user stats.

``validated_examples`` is the one definition of "a validated example and its final label"
(DESIGN.md): round close, the round download and export, retraining and crowd statistics
all call it. Counts and vMER come from ``annotation/selectors.py`` (with the same
``annotation.models.VALIDATED`` predicate); this module never recounts them.
"""

import json
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from dataclasses import field as dataclass_field
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.db.models import Count, Min, Q, QuerySet
from django.db.models.fields.json import KT
from django.utils import timezone

from annotation.label_changes import MARK_KEY
from annotation.models import VALIDATED, Example, RoundTally, RoundVoteTally, ValidationState
from annotation.selectors import NOT_VALIDATED_LABEL, WAITING_LABEL, ExampleCounts, annotator_count, counts_by_author
from tasks import access
from tasks.kinds.display import field_label, review_label
from tasks.data.images import image_context_fields
from tasks.models import Context, Round, Task
from validation.calculations import VALIDATION_LABELS, Agreement, ConsensusPolicy, agreement_from_ratings, anonymise, saved_votes
from validation.models import GoldItem, RoundAgreement, Validation

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
    final labels (owner correction > validator consensus > annotator's label, ``final_target``),
    in two queries. Order: round number, then id.
    """
    chosen = list(validated_queryset(task=task, round=round, examples=examples).select_related("round", "context"))
    decisions = owner_decisions(e.pk for e in chosen)
    found = []
    for e in chosen:
        target = final_target(e, decisions.get(e.pk))
        found.append(ValidatedExample(example=e, target=target, label_source=ANNOTATOR if target is e.target else OWNER_CORRECTION))
    return found


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


def owner_queue(round, *, min_flags: int = 0, disagreement: bool = False, state: str | None = None) -> QuerySet:
    """Return ``round``'s non-retracted examples for owner review, most contested first.

    ``min_flags``: at least that many ``flagged`` validations. ``disagreement``: validations
    with two or more different labels. ``state``: one ``ValidationState`` value or None for all.
    ``Example.disagreeing`` (a stored generated column) = validations minus the largest label
    count; the order fits the partial index ``example_owner_queue``, so the first page reads
    25 rows of the index, never the whole round.
    """
    examples = Example.objects.filter(round=round, retracted=False).select_related("author", "context", "round__task")
    if min_flags:
        examples = examples.filter(flagged_count__gte=min_flags)
    if disagreement:
        examples = examples.filter(disagreeing__gt=0)
    if state:
        examples = examples.filter(validation_state=state)
    return examples.order_by("-flagged_count", "-disagreeing", "created_at", "pk")


def owner_queue_size(round, *, min_flags: int = 0, disagreement: bool = False, state: str | None = None) -> int | None:
    """The number of examples ``owner_queue`` returns with these filters when the round's tally
    knows it (no flag or disagreement filter: all non-retracted examples, or those in
    ``state``); None otherwise (count the queryset)."""
    if min_flags or disagreement:
        return None
    tally = RoundTally.objects.filter(round=round).first()
    if tally is None:
        return 0
    return getattr(tally, state) if state else tally.collected


def export_rows(examples: QuerySet):
    """Yield one JSON-ready dict per example of ``examples`` (retracted ones included, marked),
    with its validations; user ids anonymised as ``sha256(round.secret + user id)[:16]``.

    Shape: ``{"id", "task", "round", "context": {"uid", "data", "tag"}, "annotator", "input",
    "target", "model_output", "model_wrong", "metadata", "tag", "retracted", "flagged",
    "split", "validation_state", "final_target", "created_at", "time_spent", "validations":
    [{"validator", "label", "mode", "counts", "gold_check", "metadata", "created_at"}]}``
    (``counts``: the vote counted toward consensus; ``gold_check``: an answer to a gold item); ``final_target`` is the
    final label of a validated example (``final_target``), null for the others. Streams in
    chunks of 500 examples.
    """
    examples = (
        examples.select_related("round__task", "context")
        .prefetch_related("validations")
        .order_by("round_id", "pk")
    )
    for e in examples.iterator(chunk_size=500):
        secret = e.round.secret
        validations = sorted(e.validations.all(), key=lambda v: v.pk)
        owner = [v.metadata for v in validations if v.mode == Validation.Mode.OWNER]
        validated = e.validation_state == ValidationState.VERIFIED_CORRECT and not e.retracted
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
            "final_target": final_target(e, owner[-1] if owner else None) if validated else None,
            "created_at": e.created_at.isoformat(),
            "time_spent": e.time_spent,
            "validations": [
                {
                    "validator": anonymise(secret, v.validator_id),
                    "label": v.label,
                    "mode": v.mode,
                    "counts": v.counts,
                    "gold_check": v.gold_check,
                    "metadata": v.metadata,
                    "created_at": v.created_at.isoformat(),
                }
                for v in validations
            ],
        }


EXPORT_CHUNK = 5000
"""Examples per export chunk: the most a streaming export holds in memory at once."""

EXPORT_WORKERS = 2
"""Chunks an export builds at once on PostgreSQL, each on its own connection (see ``export_lines``)."""


def export_lines(rounds, *, after: int = 0, chunk: int | None = None) -> Iterator[bytes]:
    """Yield the export of the examples of ``rounds`` (a list or queryset of ``Round``;
    retracted examples included) as UTF-8 JSON Lines, in id order, starting after example id
    ``after`` (resume an interrupted download with the last id received). Each yielded block
    holds up to ``chunk`` lines (default ``EXPORT_CHUNK``).

    Same content as ``export_rows`` (user ids anonymised with each round's secret). Memory is
    bounded by ``chunk`` whatever the size of the export: each chunk is read by its own short
    statements (keyset on the id: the chunk's last id, then its lines), so between two blocks
    no cursor or transaction is open and a client that goes away leaves nothing behind on the
    database. On PostgreSQL the database builds each line itself (``_postgres_lines``, one
    statement per chunk), and outside a transaction up to ``EXPORT_WORKERS`` chunks are built
    at once, each on a connection of its own that is closed when its chunk is read (so at
    most ``EXPORT_WORKERS`` chunks are held; blocks still come in id order). Inside a
    transaction (whose uncommitted rows other connections cannot see) and elsewhere, one
    chunk at a time; off PostgreSQL each chunk goes through ``export_rows``.
    """
    chunk = chunk or EXPORT_CHUNK
    round_ids = [r.pk for r in rounds]
    bounds = _chunk_bounds(round_ids, after, chunk)
    if connection.vendor != "postgresql":
        for start, last in bounds:
            yield _python_lines(round_ids, start, last)
    elif connection.in_atomic_block or EXPORT_WORKERS < 2:
        for start, last in bounds:
            yield _postgres_lines(round_ids, start, last)
    else:
        yield from _parallel_postgres_lines(round_ids, bounds)


def _chunk_bounds(round_ids: list[int], after: int, chunk: int) -> Iterator[tuple[int, int]]:
    """``(after, last)`` example-id bounds of each chunk of at most ``chunk`` examples, in order."""
    examples = Example.objects.filter(round_id__in=round_ids).order_by("pk").values_list("pk", flat=True)
    while True:
        last = examples.filter(pk__gt=after)[chunk - 1 : chunk].first() or examples.filter(pk__gt=after).last()
        if last is None:
            return
        yield after, last
        after = last


def _parallel_postgres_lines(round_ids: list[int], bounds: Iterator[tuple[int, int]]) -> Iterator[bytes]:
    """``_postgres_lines`` of each chunk, ``EXPORT_WORKERS`` at once in threads, yielded in order."""
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    def build(start: int, last: int) -> bytes:
        try:
            return _postgres_lines(round_ids, start, last)
        finally:
            connection.close()  # this thread's own connection: nothing stays open between chunks

    pool, pending = ThreadPoolExecutor(max_workers=EXPORT_WORKERS, thread_name_prefix="export"), deque()
    try:
        for start, last in bounds:
            pending.append(pool.submit(build, start, last))
            if len(pending) >= EXPORT_WORKERS:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:  # also when the client goes away mid-download (GeneratorExit)
        pool.shutdown(wait=True, cancel_futures=True)


def _python_lines(round_ids: list[int], after: int, last: int) -> bytes:
    rows = export_rows(Example.objects.filter(round_id__in=round_ids, pk__gt=after, pk__lte=last))
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


def _iso(column: str) -> str:
    """SQL for ``datetime.isoformat()`` of an aware UTC timestamp (the fraction left out when
    it is zero, as Python does)."""
    return f"replace(to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US'), '.000000', '') || '+00:00'"


def _anonymised(secret: str, column: str) -> str:
    """SQL for ``calculations.anonymise(<secret>, <column>)``: sha256 of the secret and the id, 16 hex digits."""
    return f"substr(encode(sha256(convert_to({secret} || {column}::text, 'UTF8')), 'hex'), 1, 16)"


def _export_sql() -> str:
    """One statement building the export line of every example of the rounds ``rounds`` with
    ``after < id <= last``: the same fields as ``export_rows``; ``final_target`` by the rule of
    ``final_target`` (latest owner decision's ``corrected_label`` -> ``{"label"}``,
    ``corrected_answer`` -> ``{"answers": [..]}``, else the annotator's target; null unless
    validated correct and not retracted). User ids are anonymised as ``calculations.anonymise``
    does (``_anonymised``). A test checks the lines against ``export_rows``."""
    q = connection.ops.quote_name
    example, validation = q(Example._meta.db_table), q(Validation._meta.db_table)
    round_t, task_t = q(Round._meta.db_table), q(Task._meta.db_table)
    context_t = q(Context._meta.db_table)
    return f"""
        WITH v AS (
            SELECT vv.example_id,
                   json_agg(json_build_object(
                       'validator', {_anonymised("rr.secret", "vv.validator_id")}, 'label', vv.label, 'mode', vv.mode,
                       'counts', vv.counts, 'gold_check', vv.gold_check, 'metadata', vv.metadata, 'created_at', {_iso("vv.created_at")}) ORDER BY vv.id) AS rows,
                   (array_agg(vv.metadata ORDER BY vv.id DESC) FILTER (WHERE vv.mode = 'owner'))[1] AS owner
            FROM {example} ee
            JOIN {validation} vv ON vv.example_id = ee.id
            JOIN {round_t} rr ON rr.id = ee.round_id
            WHERE ee.id > %(after)s AND ee.id <= %(last)s AND ee.round_id = ANY(%(rounds)s)
              AND vv.example_id > %(after)s AND vv.example_id <= %(last)s
            GROUP BY vv.example_id
        )
        SELECT json_build_object(
            'id', e.id, 'task', t.code, 'round', r.number,
            'context', json_build_object('uid', c.uid, 'data', c.data, 'tag', c.tag),
            'annotator', {_anonymised("r.secret", "e.author_id")},
            'input', e.input, 'target', e.target, 'model_output', e.model_output, 'model_wrong', e.model_wrong,
            'metadata', e.metadata, 'tag', e.tag, 'retracted', e.retracted, 'flagged', e.flagged, 'split', e.split,
            'validation_state', e.validation_state,
            'final_target', CASE WHEN e.validation_state = 'verified_correct' AND NOT e.retracted THEN
                CASE WHEN v.owner ? 'corrected_label' THEN jsonb_build_object('label', v.owner -> 'corrected_label')
                     WHEN v.owner ? 'corrected_answer' THEN jsonb_build_object('answers', jsonb_build_array(v.owner -> 'corrected_answer'))
                     ELSE e.target END
            END,
            'created_at', {_iso("e.created_at")}, 'time_spent', e.time_spent,
            'validations', COALESCE(v.rows, '[]'::json)
        )::text
        FROM {example} e
        JOIN {round_t} r ON r.id = e.round_id
        JOIN {task_t} t ON t.id = r.task_id
        JOIN {context_t} c ON c.id = e.context_id
        LEFT JOIN v ON v.example_id = e.id
        WHERE e.id > %(after)s AND e.id <= %(last)s AND e.round_id = ANY(%(rounds)s)
        ORDER BY e.id
    """


def _postgres_lines(round_ids: list[int], after: int, last: int) -> bytes:
    with connection.cursor() as cursor:
        cursor.execute(_export_sql(), {"rounds": round_ids, "after": after, "last": last})
        lines = [row[0] for row in cursor.fetchall()]
    lines.append("")
    return "\n".join(lines).encode("utf-8")


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


# --- what a validator sees ----------------------------------------------------------------


@dataclass(frozen=True)
class ReviewDisplay:
    """What the review card shows of one example, in the validator's words.

    ``context``: ``[(heading, text)]`` of the context fields other than the passage;
    ``written``: ``[(heading, text)]`` of the fields the annotator wrote, headed for a
    validator ("The annotator's sentence", not "Your sentence"); ``answer``: the task kind's
    ``answer_display`` (label bars, or the passage cut into segments marking the annotator's
    span and the model's); ``passage_heading``: the passage's heading, None for a kind without one.
    """

    context: list
    written: list
    answer: dict
    passage_heading: str | None
    image_hashes: tuple = ()
    """The sha256 of each image context field's value (``tasks.data.images``): the pages show those
    context entries as images, not as their hash."""


def review_display(example) -> ReviewDisplay:
    """Return the ``ReviewDisplay`` of ``example`` (its round, task and context loaded)."""
    task = example.round.task
    config = task.config
    passage_field = task.spec.passage_field(config)
    data = {**example.context.data, **example.input}
    context = [
        (field_label(f), data.get(f["name"], "")) for f in config["context_fields"] if f["name"] != passage_field
    ]
    written = [(review_label(f), example.input.get(f["name"], "")) for f in config["input_fields"]]
    passage_heading = next(
        (field_label(f) for f in config["context_fields"] + config["input_fields"] if f["name"] == passage_field), None
    )
    answer = task.spec.answer_display(config, data, example.target, example.model_output)
    images = tuple(h for h in (data.get(n) for n in image_context_fields(config)) if h)
    return ReviewDisplay(context=context, written=written, answer=answer, passage_heading=passage_heading, image_hashes=images)


def pending_counts(rounds) -> dict[int, int]:
    """``{round_id: n}``: examples of each round still waiting for validators, in one grouped query.

    Waiting: pending, not retracted, and fooling the model unless the task's
    ``validate_non_fooling`` sends every example to the queue (the queue's rule).
    """
    rounds = list(rounds)
    every = {r.pk: bool(r.task.config.get("validate_non_fooling")) for r in rounds}
    rows = (
        Example.objects.filter(round__in=rounds, retracted=False, validation_state=ValidationState.PENDING)
        .values("round_id", "model_wrong")
        .annotate(n=Count("id"))
        .order_by()
    )
    found = {r.pk: 0 for r in rounds}
    for row in rows:
        if row["model_wrong"] or every[row["round_id"]]:
            found[row["round_id"]] += row["n"]
    return found


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


