"""The export of a round's (or a task's) examples with their validations, as JSON Lines.

``export_rows`` is the shape of one line (user ids anonymised with the round's secret,
``calculations.anonymise``; the final label by ``validation.selectors.final_target``);
``export_lines`` streams them in keyset chunks, built in SQL on PostgreSQL (``_postgres_lines``, a
test keeps both identical), resumable after an example id. The round and task downloads, the
admin's export, the Croissant description and the image export read it.
"""

import json
from collections.abc import Iterator

from django.db import connection
from django.db.models import Exists, OuterRef, Prefetch, QuerySet

from annotation.diversity_models import ExampleDiversity
from annotation.models import Example, TransferRate, ValidationState
from tasks.models import Context, MLModel, Round, Task
from validation import own_answers
from validation.calculations import anonymise
from validation.judge_models import AIVote
from validation.models import Validation
from validation.selectors import final_target
from validation.transfer_selectors import transfer_of


def export_rows(examples: QuerySet):
    """Yield one JSON-ready dict per example of ``examples`` (retracted ones included, marked),
    with its validations; user ids anonymised as ``sha256(round.secret + user id)[:16]``.

    Shape: ``{"id", "task", "round", "context": {"uid", "data", "tag"}, "annotator", "input",
    "target", "model_output", "model_wrong", "origin", "suggestion_distance", "metadata", "tag", "retracted", "flagged",
    "split", "validation_state", "final_target", "transfer", "cluster", "near_duplicate_of", "group_size",
    "created_at", "time_spent", "validations":
    [{"validator", "label", "mode", "counts", "gold_check", "metadata", "created_at"}], "ai_vote_counted",
    "ai_votes": [{"model", "label", "parsed", "reason", "confidence", "counted_as", "arm", "settings_checksum",
    "created_at"}]}`` (``counts``: the vote counted toward consensus; ``gold_check``: an answer to a gold item;
    ``ai_votes``: AI validators' votes, a column group of their own, never among ``validations``;
    ``ai_vote_counted``: whether one of them counted toward this example's consensus,
    ``validation/judge_policy.py``); ``final_target`` is the
    final label of a validated example (``final_target``), on a kind that keeps validators' own answers (VQA)
    with every counted validator's answer after it up to the kind's ``answers_wanted``
    (``validation.own_answers``, as the round's datasets keep them), null for the others; ``transfer`` is a
    validated example's transfer rate ``{"rate", "fooled", "tried"}`` (``validation/transfer.py``:
    the share of the task's other models it fools), null when none is measured. ``cluster``,
    ``near_duplicate_of`` and ``group_size`` are where the round's last diversity report put the example
    (``annotation.diversity_models.ExampleDiversity``): its cluster (-1: none), the id of the first-written
    example of its near-duplicate group (null when it is that example) and the group's size; all three null
    for an example no report has placed. Streams in chunks of 500 examples.
    """
    examples = (
        examples.select_related("round__task", "context", "transfer", "diversity")
        .prefetch_related("validations", Prefetch("ai_votes", queryset=AIVote.objects.select_related("model")))
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
            "origin": e.origin,  # written, assisted (from a writing assistant's suggestion) or generated
            "suggestion_distance": e.suggestion_distance,
            "metadata": e.metadata,
            "tag": e.tag,
            "retracted": e.retracted,
            "flagged": e.flagged,
            "split": e.split,
            "validation_state": e.validation_state,
            "final_target": own_answers.with_given(e.round.task, final_target(e, owner[-1] if owner else None), [
                a for v in validations if (a := own_answers.given_answer(counts=v.counts, gold_check=v.gold_check, metadata=v.metadata))
            ]) if validated else None,
            "transfer": transfer_of(_transfer(e)) if validated else None,
            **_place(e),
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
            "ai_vote_counted": any(a.counted_as for a in e.ai_votes.all()),
            "ai_votes": [
                {
                    "model": a.model.name,
                    "label": a.label,
                    "parsed": a.parsed,
                    "reason": a.reason,
                    "confidence": a.confidence,
                    "counted_as": a.counted_as,
                    "arm": a.arm,
                    "settings_checksum": a.settings_checksum,
                    "created_at": a.created_at.isoformat(),
                }
                for a in sorted(e.ai_votes.all(), key=lambda a: a.pk)
            ],
        }


def _place(example) -> dict:
    try:
        place = example.diversity
    except ExampleDiversity.DoesNotExist:
        return {"cluster": None, "near_duplicate_of": None, "group_size": None}
    return {"cluster": place.cluster, "group_size": place.group_size,
            "near_duplicate_of": None if place.representative_id == example.pk else place.representative_id}


def deduplicated(examples: QuerySet) -> QuerySet:
    """The deduplicated view of ``examples``: the ones not retracted that lead their near-duplicate group
    (``ExampleDiversity.representative``, its ``group_size`` on each line), and the ones no diversity report
    has placed yet (each its own group, ``group_size`` null). Written as "no row placing it in another's
    group" (NOT EXISTS), so a chunk in id order is read by walking the id index and probing the places'
    unique index, whatever the round's size."""
    copies = ExampleDiversity.objects.filter(example_id=OuterRef("pk")).exclude(representative_id=OuterRef("pk"))
    return examples.filter(retracted=False).exclude(Exists(copies))


def _transfer(example) -> TransferRate | None:
    try:
        return example.transfer
    except TransferRate.DoesNotExist:
        return None


EXPORT_CHUNK = 5000
"""Examples per export chunk: the most a streaming export holds in memory at once."""

EXPORT_WORKERS = 2
"""Chunks an export builds at once on PostgreSQL, each on its own connection (see ``export_lines``)."""


def export_lines(rounds, *, after: int = 0, chunk: int | None = None, deduplicated: bool = False) -> Iterator[bytes]:
    """Yield the export of the examples of ``rounds`` (a list or queryset of ``Round``;
    retracted examples included) as UTF-8 JSON Lines, in id order, starting after example id
    ``after`` (resume an interrupted download with the last id received). Each yielded block
    holds up to ``chunk`` lines (default ``EXPORT_CHUNK``). ``deduplicated``: only the examples of
    the deduplicated view (``deduplicated``: one per near-duplicate group, retracted ones left out).

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
    chunk, dedup = chunk or EXPORT_CHUNK, deduplicated
    round_ids = [r.pk for r in rounds]
    bounds = _chunk_bounds(round_ids, after, chunk)
    if connection.vendor != "postgresql":
        for start, last in bounds:
            yield _python_lines(round_ids, start, last, dedup)
    elif connection.in_atomic_block or EXPORT_WORKERS < 2:
        for start, last in bounds:
            yield _postgres_lines(round_ids, start, last, dedup)
    else:
        yield from _parallel_postgres_lines(round_ids, bounds, dedup)


def _examples(round_ids: list[int], dedup: bool) -> QuerySet:
    examples = Example.objects.filter(round_id__in=round_ids)
    return deduplicated(examples) if dedup else examples


def _chunk_bounds(round_ids: list[int], after: int, chunk: int) -> Iterator[tuple[int, int]]:
    """``(after, last)`` example-id bounds of each chunk of at most ``chunk`` examples, in order (of the
    deduplicated view too: its chunks then hold fewer lines, and finding a bound stays one index walk)."""
    examples = Example.objects.filter(round_id__in=round_ids).order_by("pk").values_list("pk", flat=True)
    while True:
        last = examples.filter(pk__gt=after)[chunk - 1 : chunk].first() or examples.filter(pk__gt=after).last()
        if last is None:
            return
        yield after, last
        after = last


def _parallel_postgres_lines(round_ids: list[int], bounds: Iterator[tuple[int, int]], dedup: bool) -> Iterator[bytes]:
    """``_postgres_lines`` of each chunk, ``EXPORT_WORKERS`` at once in threads, yielded in order."""
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    def build(start: int, last: int) -> bytes:
        try:
            return _postgres_lines(round_ids, start, last, dedup)
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


def _python_lines(round_ids: list[int], after: int, last: int, dedup: bool) -> bytes:
    rows = export_rows(_examples(round_ids, dedup).filter(pk__gt=after, pk__lte=last))
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
    ``corrected_answer`` -> ``{"answers": [..]}``, else the annotator's target, then the counted
    validators' own answers up to the kind's ``answers_wanted``, given per task as the parameter
    ``answers``: ``{task id: {"field", "wanted"}}``, ``_answer_lists``; null unless validated
    correct and not retracted); ``transfer`` as ``transfer_selectors.transfer_of`` (the
    rate a float8 division, as Python's); the example's place (``_place``). With the parameter
    ``dedup`` true, only the examples of the deduplicated view (``deduplicated``). User ids are anonymised as ``calculations.anonymise``
    does (``_anonymised``). A test checks the lines against ``export_rows``."""
    q = connection.ops.quote_name
    example, validation = q(Example._meta.db_table), q(Validation._meta.db_table)
    round_t, task_t = q(Round._meta.db_table), q(Task._meta.db_table)
    context_t = q(Context._meta.db_table)
    transfer_t = q(TransferRate._meta.db_table)
    ai_vote, model_t = q(AIVote._meta.db_table), q(MLModel._meta.db_table)
    place_t = q(ExampleDiversity._meta.db_table)

    def kept(example: str) -> str:  # the deduplicated view's rule (``deduplicated``), when asked for
        return (f"(NOT %(dedup)s OR (NOT {example}.retracted AND NOT EXISTS (SELECT 1 FROM {place_t} dd "
                f"WHERE dd.example_id = {example}.id AND dd.example_id > %(after)s AND dd.example_id <= %(last)s "
                f"AND dd.representative_id <> {example}.id)))")
    return f"""
        WITH v AS (
            SELECT vv.example_id,
                   json_agg(json_build_object(
                       'validator', {_anonymised("rr.secret", "vv.validator_id")}, 'label', vv.label, 'mode', vv.mode,
                       'counts', vv.counts, 'gold_check', vv.gold_check, 'metadata', vv.metadata, 'created_at', {_iso("vv.created_at")}) ORDER BY vv.id) AS rows,
                   (array_agg(vv.metadata ORDER BY vv.id DESC) FILTER (WHERE vv.mode = 'owner'))[1] AS owner,
                   jsonb_agg(vv.metadata -> 'own_answer' ORDER BY vv.id) FILTER (
                       WHERE vv.counts AND NOT vv.gold_check AND jsonb_typeof(vv.metadata -> 'own_answer') = 'string') AS own
            FROM {example} ee
            JOIN {validation} vv ON vv.example_id = ee.id
            JOIN {round_t} rr ON rr.id = ee.round_id
            WHERE ee.id > %(after)s AND ee.id <= %(last)s AND ee.round_id = ANY(%(rounds)s) AND {kept("ee")}
              AND vv.example_id > %(after)s AND vv.example_id <= %(last)s
            GROUP BY vv.example_id
        ), ai AS (
            SELECT av.example_id,
                   json_agg(json_build_object(
                       'model', mm.name, 'label', av.label, 'parsed', av.parsed, 'reason', av.reason,
                       'confidence', av.confidence, 'counted_as', av.counted_as, 'arm', av.arm,
                       'settings_checksum', av.settings_checksum, 'created_at', {_iso("av.created_at")}) ORDER BY av.id) AS rows,
                   bool_or(av.counted_as <> '') AS counted
            FROM {ai_vote} av
            JOIN {model_t} mm ON mm.id = av.model_id
            WHERE av.example_id > %(after)s AND av.example_id <= %(last)s
            GROUP BY av.example_id
        )
        SELECT json_build_object(
            'id', e.id, 'task', t.code, 'round', r.number,
            'context', json_build_object('uid', c.uid, 'data', c.data, 'tag', c.tag),
            'annotator', {_anonymised("r.secret", "e.author_id")},
            'input', e.input, 'target', e.target, 'model_output', e.model_output, 'model_wrong', e.model_wrong,
            'origin', e.origin, 'suggestion_distance', e.suggestion_distance,
            'metadata', e.metadata, 'tag', e.tag, 'retracted', e.retracted, 'flagged', e.flagged, 'split', e.split,
            'validation_state', e.validation_state,
            'final_target', CASE WHEN e.validation_state = 'verified_correct' AND NOT e.retracted THEN
                CASE WHEN v.own IS NOT NULL AND %(answers)s::jsonb ? t.id::text THEN jsonb_set(ft.target, ARRAY[a.field], (
                         SELECT COALESCE(jsonb_agg(x.value ORDER BY x.n), '[]'::jsonb)
                         FROM jsonb_array_elements(COALESCE(ft.target -> a.field, '[]'::jsonb) || v.own) WITH ORDINALITY AS x(value, n)
                         WHERE x.n <= a.wanted))
                     ELSE ft.target END
            END,
            'transfer', CASE WHEN e.validation_state = 'verified_correct' AND NOT e.retracted AND tr.id IS NOT NULL THEN
                json_build_object('rate', tr.fooled::float8 / tr.tried, 'fooled', tr.fooled, 'tried', tr.tried)
            END,
            'cluster', d.cluster,
            'near_duplicate_of', CASE WHEN d.representative_id <> e.id THEN d.representative_id END,
            'group_size', d.group_size,
            'created_at', {_iso("e.created_at")}, 'time_spent', e.time_spent,
            'validations', COALESCE(v.rows, '[]'::json),
            'ai_vote_counted', COALESCE(ai.counted, false),
            'ai_votes', COALESCE(ai.rows, '[]'::json)
        )::text
        FROM {example} e
        JOIN {round_t} r ON r.id = e.round_id
        JOIN {task_t} t ON t.id = r.task_id
        JOIN {context_t} c ON c.id = e.context_id
        LEFT JOIN v ON v.example_id = e.id
        LEFT JOIN ai ON ai.example_id = e.id
        LEFT JOIN {transfer_t} tr ON tr.example_id = e.id
        LEFT JOIN {place_t} d ON d.example_id = e.id AND d.example_id > %(after)s AND d.example_id <= %(last)s
        CROSS JOIN LATERAL (SELECT
            CASE WHEN v.owner ? 'corrected_label' THEN jsonb_build_object('label', v.owner -> 'corrected_label')
                 WHEN v.owner ? 'corrected_answer' THEN jsonb_build_object('answers', jsonb_build_array(v.owner -> 'corrected_answer'))
                 ELSE e.target END AS target) ft
        CROSS JOIN LATERAL (SELECT %(answers)s::jsonb -> t.id::text ->> 'field' AS field,
                                   (%(answers)s::jsonb -> t.id::text ->> 'wanted')::int AS wanted) a
        WHERE e.id > %(after)s AND e.id <= %(last)s AND e.round_id = ANY(%(rounds)s)
          AND {kept("e")}
        ORDER BY e.id
    """


def _answer_lists(round_ids: list[int]) -> str:
    """The ``answers`` parameter of ``_export_sql`` as JSON: per task of ``round_ids`` whose kind keeps
    validators' own answers, its target's field and how many answers it keeps. One query."""
    tasks = {r.task_id: r.task for r in Round.objects.filter(pk__in=round_ids).select_related("task")}
    return json.dumps({str(pk): {"field": t.spec.target_field, "wanted": t.spec.answers_wanted(t.config)}
                       for pk, t in tasks.items() if t.spec.answers_wanted(t.config) > 0})


def _postgres_lines(round_ids: list[int], after: int, last: int, dedup: bool) -> bytes:
    answers = _answer_lists(round_ids)
    with connection.cursor() as cursor:
        cursor.execute(_export_sql(), {"rounds": round_ids, "after": after, "last": last, "answers": answers, "dedup": dedup})
        lines = [row[0] for row in cursor.fetchall()]
    lines.append("")
    return "\n".join(lines).encode("utf-8")
