"""A round's diversity report (``RoundDiversity``): asked for by the task's owner, computed by an RQ job.

``request_round_diversity`` (the owner's) and ``queue_round_diversity`` (the platform's, when the round's
validated fooling examples grew: ``refresh.py``) mark the round's report ``queued`` and queue
``compute_round_diversity`` when the transaction commits. The job (1) claims the report (``queued`` → ``running``, one conditional
UPDATE, so two workers never both compute it), (2) embeds the task's examples that lack a current
embedding (``embeddings.embed_task``), (3) reads the round's examples that are not retracted and have
written text, (4) computes ``figures.round_figures`` and stores them (``done``) with each example's
cluster and near-duplicate group (``ExampleDiversity``), or stores the readable reason (``failed``).
Rerunning replaces the figures and the examples' places. ``progress`` follows the steps: embedding up to
``EMBEDDED``, the figures up to ``FIGURED``, then 1.
"""

from __future__ import annotations

import numpy as np
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.diversity import embeddings, encoder as encoders, figures, rules
from annotation.diversity_models import ExampleDiversity, ExampleEmbedding, RoundDiversity
from annotation.models import VALIDATED, Example
from dynabench.errors import NotAllowed

JOB = "annotation.diversity.report.compute_round_diversity"
EMBEDDED = 0.6
"""The report's progress once the task's examples are embedded (the step that takes longest on a new round)."""
FIGURED = 0.9
"""Its progress once the figures are computed; storing the examples' places takes the rest."""


def request_round_diversity(*, round, acting_user) -> RoundDiversity:
    """Queue the computation of ``round``'s diversity report. Raises ``NotAllowed`` ``not_task_owner``
    unless ``acting_user`` owns the task."""
    if not round.task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"only owners of {round.task.code} may compute its diversity report")
    return queue_round_diversity(round.pk)


def queue_round_diversity(round_id: int, *, unless_busy: bool = False) -> RoundDiversity | None:
    """Mark the round's report ``queued`` (progress 0) and queue its job when the transaction commits; no
    permission check (the callers make it). Returns the report. ``unless_busy``: only a new report or one
    that is ``done`` is queued (one conditional UPDATE: of two callers at once, one queues it); None when
    it was not."""
    with transaction.atomic():
        report, created = RoundDiversity.objects.get_or_create(round_id=round_id)
        if not created:
            reports = RoundDiversity.objects.filter(pk=report.pk)
            if unless_busy:
                reports = reports.filter(status="done")
            if reports.update(status="queued", reason="", progress=0.0) != 1:
                return None
        transaction.on_commit(lambda: _enqueue(round_id))
    report.refresh_from_db()
    return report


def _enqueue(round_id: int) -> None:
    import django_rq

    django_rq.get_queue("default").enqueue(JOB, round_id)


def compute_round_diversity(round_id: int) -> str:
    """RQ job (steps in the module docstring). Returns a one-line summary, e.g.
    ``"round 4: 120 examples, Vendi 38.2, 3 clusters"``, or says it had nothing to claim."""
    report, _ = RoundDiversity.objects.get_or_create(round_id=round_id)
    if RoundDiversity.objects.filter(pk=report.pk, status__in=("queued", "done", "failed")).update(status="running", progress=0.0) != 1:
        return f"round {round_id}: the report is already being computed"
    try:
        result = _compute(report)
    except Exception as error:  # stored for the owner to read, then raised again for RQ to record
        RoundDiversity.objects.filter(pk=report.pk).update(status="failed", reason=f"{type(error).__name__}: {error}",
                                                           computed_at=timezone.now())
        raise
    with transaction.atomic():
        _store_places(report.round_id, assigned=result.pop("assigned"), leaders=result.pop("leaders"))
        RoundDiversity.objects.filter(pk=report.pk).update(status="done", reason="", figures=result, computed_at=timezone.now(),
                                                           progress=1.0)
    return (f"round {round_id}: {result['examples']} examples, Vendi {result['vendi']:.1f}, "
            f"{len(result['clusters'])} clusters")


def _compute(report: RoundDiversity) -> dict:
    round = report.round
    embeddings.embed_task(round.task_id, on_progress=lambda done, total: _progress(report, EMBEDDED * done / total))
    _progress(report, EMBEDDED)
    encoder = encoders.get_encoder()
    vectors = {row.example_id: row for row in ExampleEmbedding.objects.filter(round=round, encoder_sha256=encoder.sha256)}
    validated = set(Example.objects.filter(VALIDATED, round=round, model_wrong=True).values_list("pk", flat=True))
    rows = [e for e in Example.objects.filter(round=round, retracted=False).select_related("round__task").order_by("id")
            if e.pk in vectors]
    X = np.stack([vectors[e.pk].as_array() for e in rows]) if rows else np.zeros((0, encoder.dim), dtype=np.float32)
    result = figures.round_figures(
        texts=[embeddings.written_text(e) for e in rows], X=X, authors=[e.author_id for e in rows],
        fooled=[e.pk in validated for e in rows], ids=[e.pk for e in rows], threshold=rules.round_rule(round).threshold,
    )
    _progress(report, FIGURED)
    return result


def _progress(report: RoundDiversity, value: float) -> None:
    RoundDiversity.objects.filter(pk=report.pk, status="running").update(progress=round(value, 3))


def _store_places(round_id: int, *, assigned: dict, leaders: dict) -> None:
    """Replace the round's ``ExampleDiversity`` rows: each example's cluster and near-duplicate group."""
    sizes: dict = {}
    for leader in leaders.values():
        sizes[leader] = sizes.get(leader, 0) + 1
    ExampleDiversity.objects.filter(round_id=round_id).delete()
    ExampleDiversity.objects.bulk_create([
        ExampleDiversity(example_id=example_id, round_id=round_id, cluster=assigned[example_id], representative_id=leader,
                         group_size=sizes[leader])
        for example_id, leader in leaders.items()
    ], batch_size=1000)


def author_diversity(author) -> list[dict]:
    """The diversity of ``author``'s examples per round whose report is done, in round order: ``{"round",
    "examples", "vendi", "low", "high"}`` (the author's own Vendi score with its 95 % bootstrap interval;
    the last three None under ``figures.MIN_AUTHOR_EXAMPLES`` examples), ``round_vendi`` (with
    ``round_low``/``round_high``) and ``near_copies``: ``[(example id, id of the example it near-copies,
    whether that one is the author's own)]``."""
    reports = (RoundDiversity.objects.filter(status="done", round__examples__author=author).distinct()
               .select_related("round__task").order_by("round__task__code", "round__number"))
    places = (ExampleDiversity.objects.filter(example__author=author).exclude(representative_id=F("example_id"))
              .values_list("round_id", "example_id", "representative_id", "representative__author_id").order_by("example_id"))
    copies: dict = {}
    for round_id, example_id, leader_id, leader_author in places:
        copies.setdefault(round_id, []).append((example_id, leader_id, leader_author == author.pk))
    rows = []
    for report in reports:
        f = report.figures
        own = next((a for a in f.get("per_author", []) if a["author_id"] == author.pk), None)
        rows.append({
            "round": report.round, "examples": own["examples"] if own else None,
            "vendi": own["vendi"] if own else None, "low": own.get("low") if own else None, "high": own.get("high") if own else None,
            "round_vendi": f.get("vendi"), "round_low": f.get("vendi_low"), "round_high": f.get("vendi_high"),
            "near_copies": copies.get(report.round_id, []),
        })
    return rows


def clusters_of(example_ids) -> dict[int, int]:
    """``{example id: cluster number}`` (-1: in no cluster) that the rounds' last diversity reports gave the
    examples of ``example_ids``; an example no report has placed is left out."""
    return dict(ExampleDiversity.objects.filter(example_id__in=list(example_ids)).values_list("example_id", "cluster"))
