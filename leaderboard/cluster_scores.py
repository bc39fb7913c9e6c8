"""Reads for a model's score per cluster of a round's diversity report: does it fail one quirk or many?

A round's diversity report (``annotation/diversity/report.py``) clusters the round's validated fooling
examples with HDBSCAN and places every example of the round in the cluster of the nearest centroid
(``ExampleDiversity``; -1: in no cluster). A closed round's datasets hold those examples
(``DatasetItem.metadata["example_id"]``), and a run stores the model's per-item results in the dataset's
item order (``EvaluationRun.item_results``), so the model's mean per-item score over the items of a
cluster is its score on that quirk.

Shapes: ``per_cluster(user, runs)`` returns ``{run id: RunClusters}`` for the runs that have one::

    RunClusters(report_computed_at=datetime, unplaced=2, withheld=1, clusters=[
        ClusterScore(cluster=0, terms=("soup", "cold", ...), share=0.4, n=30, score=0.5),
        ...,
        ClusterScore(cluster=-1, terms=(), share=None, n=4, score=0.75),  # items in no cluster, last
    ])

``score`` is the mean of ``leaderboard.bootstrap.item_values`` over the cluster's items, 0..1: accuracy
for classification, the per-item F1 (QA), chrF++ (translation) or error rate (speech) otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from annotation.diversity.report import clusters_of
from annotation.diversity_models import RoundDiversity
from leaderboard.bootstrap import item_values
from leaderboard.models import EvaluationRun
from leaderboard.scoring import load_item_results
from leaderboard.selectors import HIDDEN_TAG_MIN_ITEMS
from tasks.models import DatasetItem
from tasks.selectors import can_see_labels

SHOWN_TERMS = 5
"""Top terms of a cluster given with its score (the report keeps more)."""
NO_CLUSTER = -1


@dataclass(frozen=True)
class ClusterScore:
    """The model's ``score`` (mean per-item score, 0..1) over the ``n`` items of the dataset in ``cluster``
    (-1: in no cluster), with the report's top ``terms`` and ``share`` of the round's validated fooling
    examples (None for -1)."""

    cluster: int
    terms: tuple[str, ...]
    share: float | None
    n: int
    score: float


@dataclass(frozen=True)
class RunClusters:
    """One run's scores per cluster of its dataset's round's report (``report_computed_at``), largest
    cluster first and items in no cluster last. ``unplaced``: items whose example the report has not
    placed (written after it was computed) or that hold no example, left out of every row. ``withheld``: rows left out because the
    reader may not see the dataset's labels and they have fewer than ``HIDDEN_TAG_MIN_ITEMS`` items."""

    report_computed_at: datetime | None
    clusters: list[ClusterScore] = field(default_factory=list)
    unplaced: int = 0
    withheld: int = 0


def per_cluster(user, runs: list[EvaluationRun]) -> dict[int, RunClusters]:
    """Return ``{run id: RunClusters}`` for the ``runs`` (as ``model_runs`` reads them, ``dataset`` and its
    ``round`` selected) that are done and current, on a dataset of a round whose diversity report is done,
    holding examples of the round (``metadata["example_id"]``) and whose stored item results have one
    entry per item. Only those runs' ``item_results`` are read. Where ``user`` may not see the dataset's
    labels (``tasks.selectors.can_see_labels``), only rows of at least ``HIDDEN_TAG_MIN_ITEMS`` items are
    kept, the rule of the per-tag scores. Four queries whatever the number of runs, plus ``can_see_labels``'s
    owner check per hidden dataset."""
    candidates = [
        run for run in runs
        if run.status == EvaluationRun.Status.DONE and run.dataset.round_id is not None
        and (run.dataset_version is None or run.dataset_version == run.dataset.version)
    ]
    if not candidates:
        return {}
    reports = {
        r.round_id: r for r in RoundDiversity.objects.filter(round_id__in={run.dataset.round_id for run in candidates},
                                                            status="done")
    }
    candidates = [run for run in candidates if run.dataset.round_id in reports]
    if not candidates:
        return {}
    examples = _example_ids({run.dataset_id for run in candidates})
    places = clusters_of({e for ids in examples.values() for e in ids if e is not None})
    stored = dict(EvaluationRun.objects.filter(pk__in=[run.pk for run in candidates]).values_list("pk", "item_results"))
    found = {}
    for run in candidates:
        ids = examples.get(run.dataset_id, [])
        results = load_item_results(stored.get(run.pk))
        if results is None or len(results) != len(ids) or all(e is None for e in ids):
            continue
        found[run.pk] = _run_clusters(reports[run.dataset.round_id], ids, places, item_values(results),
                                      min_items=0 if can_see_labels(user, run.dataset) else HIDDEN_TAG_MIN_ITEMS)
    return found


def attach_per_cluster(user, runs: list[EvaluationRun]) -> list[EvaluationRun]:
    """Set ``run.per_cluster`` on each of ``runs``: its ``RunClusters`` from ``per_cluster``, or None; return ``runs``."""
    found = per_cluster(user, runs)
    for run in runs:
        run.per_cluster = found.get(run.pk)
    return runs


def _example_ids(dataset_ids: set[int]) -> dict[int, list[int | None]]:
    """``{dataset id: [example id or None per item, in item pk order]}`` (one query)."""
    rows = (DatasetItem.objects.filter(dataset_id__in=dataset_ids).order_by("dataset_id", "pk")
            .values_list("dataset_id", "metadata__example_id"))
    found: dict[int, list[int | None]] = {}
    for dataset_id, example_id in rows:
        found.setdefault(dataset_id, []).append(None if example_id is None else int(example_id))
    return found


def _run_clusters(report: RoundDiversity, ids: list[int | None], places: dict[int, int], values: np.ndarray, *,
                  min_items: int) -> RunClusters:
    members: dict[int, list[int]] = {}
    unplaced = 0
    for index, example_id in enumerate(ids):
        if example_id not in places:
            unplaced += 1
        else:
            members.setdefault(places[example_id], []).append(index)
    described = {c["cluster"]: c for c in (report.figures or {}).get("clusters", [])}
    order = [c for c in described if c in members] + sorted(c for c in members if c not in described and c != NO_CLUSTER)
    if NO_CLUSTER in members:
        order.append(NO_CLUSTER)
    rows = []
    for number in order:
        about = described.get(number, {})
        rows.append(ClusterScore(
            cluster=number, terms=tuple(about.get("terms", ())[:SHOWN_TERMS]), share=about.get("share"),
            n=len(members[number]), score=float(values[members[number]].mean()),
        ))
    shown = [row for row in rows if row.n >= min_items]
    return RunClusters(report_computed_at=report.computed_at, clusters=shown, unplaced=unplaced,
                       withheld=len(rows) - len(shown))
