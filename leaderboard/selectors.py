"""Reads for the leaderboard pages: the ranked table of a task under any weights, a model's scores.

``leaderboard_table`` reads the task's ``LeaderboardCache`` (one query; rebuilt inline when
missing) and the live published/anonymous flags of its models (one query), then ranks with
the pure ``leaderboard.dynascore.dynascore``; the bootstrap replicates give the performance
intervals and rank ranges under the same weights.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings
from django.utils import timezone

from dynabench.errors import RuleError
from dynabench.version import code_version
from leaderboard.bootstrap import percentile_interval
from leaderboard.dynascore import ModelScores, dynascore, normalise_weights, orientation
from leaderboard.error_codes import LeaderboardErrorCode
from leaderboard.evaluation import rebuild_leaderboard
from leaderboard.metric_rules import (
    DEFAULT_METRIC_WEIGHTS,
    METRICS,
    MISSING_EXCLUDE_MODEL,
    MISSING_PER_MODEL,
    PER_MODEL_RULE,
    Rule,
    missing_metric_choice,
)
from leaderboard.models import EvaluationRun, LeaderboardCache
from leaderboard.rank_ranges import rank_ranges
from leaderboard.stability import Stability
from tasks import access
from tasks.selectors import can_see_labels
from tasks.models import MLModel, Task

METRIC_LABELS = {
    "performance": "Performance", "throughput": "Throughput", "memory": "Memory",
    "robustness": "Robustness", "fairness": "Fairness",
}
RANK_RESAMPLES = 200  # rank ranges: 2.5th/97.5th percentiles of 200 resamples (CIs use all of them)
TABLE_CACHE_SECONDS = 3600
TABLE_CACHE_VERSION = 2
"""Part of the cache key of ``cached_leaderboard_table``: bump it when ``Table`` or ``Row`` change shape, so
a Table pickled by the previous code is never read back (2: contributions, stability, not applicable)."""
METRIC_UNITS = {"performance": "%", "throughput": "ex/s", "memory": "GiB", "robustness": "%", "fairness": "%"}


def machine_memory_gib() -> float:
    """The evaluation machine's memory in GiB (``settings.EVALUATION_MACHINE_MEMORY_GIB``, else this machine's)."""
    configured = getattr(settings, "EVALUATION_MACHINE_MEMORY_GIB", None)
    if configured:
        return float(configured)
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3
    except (ValueError, OSError, AttributeError):
        return 16.0


def default_metric_weights(task: Task) -> dict[str, float]:
    weights = dict(DEFAULT_METRIC_WEIGHTS)
    weights.update({k: float(v) for k, v in (task.config.get("dynascore_weights") or {}).items()})
    delta = set(task.config.get("delta_metrics", METRICS[1:]))
    return {m: (w if m == "performance" or m in delta else 0.0) for m, w in weights.items()}


def cache_for(task: Task) -> LeaderboardCache:
    """Return the task's leaderboard cache, building it inline when it does not exist yet."""
    cache = LeaderboardCache.objects.filter(task=task).first()
    if cache is None:
        rebuild_leaderboard(task.pk)
        cache = LeaderboardCache.objects.get(task=task)
    return cache


def _fmt(value, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


@dataclass
class Row:
    model_id: int
    name: str
    owner: str | None
    rank: int
    dynascore: float
    averages: dict
    datasets: list
    ci: tuple | None = None
    rank_range: tuple | None = None
    kind: str = ""
    contributions: dict = field(default_factory=dict)
    weights: dict = field(default_factory=dict)
    missing: tuple = ()
    gap: float = 0.0
    contribution_gaps: dict = field(default_factory=dict)
    metric_cells: list = field(default_factory=list)
    dataset_cells: list = field(default_factory=list)
    score_cell: str = ""
    breakdown_cells: list = field(default_factory=list)

    def format_cells(self, metrics, *, not_applicable=(), stable: bool = True) -> None:
        """Precompute the display text of each cell (the template then only loops).

        ``not_applicable``: metrics that cannot be measured on the weighted datasets ("n/a").
        ``stable``: whether the exchange rates are stable; if not, the Dynascore cell and the
        breakdown show differences from the first-ranked model instead of absolute values
        (see ``Table.stability``).
        """
        self.metric_cells = [
            ("n/a" if m in not_applicable and self.averages.get(m) is None else _fmt(self.averages.get(m)),
             f"[{_fmt(self.ci[0])}, {_fmt(self.ci[1])}]" if m == "performance" and self.ci else "")
            for m in metrics
        ]
        self.dataset_cells = [_fmt(d["performance"]) for d in self.datasets]
        values = self.contributions if stable else self.contribution_gaps
        self.score_cell = f"{self.dynascore:,.2f}" if stable else ("best" if self.gap == 0 else f"{self.gap:+,.2f}")
        self.breakdown_cells = [
            "n/a" if m in not_applicable else ("not counted" if not self.weights.get(m) else
                                               (f"{values[m]:,.2f}" if stable else f"{values[m]:+,.2f}"))
            for m in metrics
        ]

    def sort_value(self, key: str):
        if key == "dynascore":
            return self.dynascore
        if key == "name":
            return self.name.lower()
        if key.startswith("metric:"):
            return self.averages.get(key[7:])
        if key.startswith("dataset:"):
            for d in self.datasets:
                if d["key"] == key[8:]:
                    return d["performance"]
        return None


@dataclass
class Table:
    """What the leaderboard page shows; ``rules`` name the Dynascore edge-case rule per metric."""

    task: Task
    datasets: list
    rows: list[Row]
    pending: list[dict]
    rules: list
    metric_weights: dict
    dataset_weights: dict
    missing_metric: str
    sort: str
    descending: bool
    memory_gib: float
    computed_at: object
    rounds: list = field(default_factory=list)
    stability: Stability = field(default_factory=Stability)
    not_applicable: tuple = ()
    per_model_rule: str = PER_MODEL_RULE
    model_names: dict = field(default_factory=dict)

    @property
    def left_out(self) -> list[dict]:
        """The weighted metrics the Dynascore left out, grouped by rule: ``[{"rule", "labels", "explanation"}]``
        (weight 0 is the user's own choice and not listed)."""
        groups: dict[str, dict] = {}
        for r in self.rules:
            if r["rule"] in (Rule.REFERENCE, Rule.AMRS, Rule.ZERO_WEIGHT):
                continue
            groups.setdefault(r["rule"], {"rule": r["rule"], "labels": [], "explanation": r["explanation"]})["labels"].append(r["label"])
        return list(groups.values())

    def stability_reasons(self) -> list[str]:
        """Why the exchange rates are unstable (empty when they are stable), models by name."""
        return self.stability.reasons(lambda pk: self.model_names.get(pk, str(pk)))

    @property
    def polling(self) -> bool:
        """True while a pending model still has work in progress (a run queued or running, an archive
        unpacking, a training): only then does the page refresh itself."""
        return any(p.get("running") for p in self.pending)

    @property
    def leader(self):
        """The first-ranked row (ranked order, whatever the sort), or None."""
        return min(self.rows, key=lambda r: r.rank) if self.rows else None

    def slider_notes(self) -> dict[str, str]:
        """``{metric: why its weight slider changes nothing now}``: the metrics whose Dynascore rule
        leaves them out whatever their weight (not applicable on the datasets, measured for no
        ranked model, no variation, AMRS undefined), and every delta metric while no model is ranked."""
        idle = {Rule.NOT_APPLICABLE, Rule.NOT_MEASURED, Rule.ZERO_VARIATION, Rule.AMRS_UNDEFINED}
        notes = {r["metric"]: r["explanation"] for r in self.rules if r["rule"] in idle}
        if not self.rows:
            notes.update({m: "no model is ranked yet, so there is nothing to weigh." for m in METRIC_LABELS if m != "performance"})
        return notes

    def snapshot(self) -> list[dict]:
        """The ranked rows as plain JSON for a frozen ``LeaderboardConfig``."""
        return [
            {"model_id": r.model_id, "name": r.name, "owner": r.owner, "rank": r.rank, "dynascore": r.dynascore,
             "averages": r.averages, "contributions": r.contributions, "weights": r.weights, "missing": list(r.missing),
             "datasets": r.datasets, "ci": list(r.ci) if r.ci else None,
             "rank_range": list(r.rank_range) if r.rank_range else None}
            for r in self.rows
        ]


def published_models(task: Task) -> dict[int, dict]:
    """``{model id: {"name", "anonymous", "owner__username", "status", "progress", "kind"}}`` of the task's published models (one query)."""
    rows = MLModel.objects.filter(task=task, published=True).values("id", "name", "anonymous", "owner__username", "status", "progress", "kind")
    return {m["id"]: m for m in rows}


IN_PROGRESS_MODEL = (MLModel.Status.UNPACKING, MLModel.Status.TRAINING, MLModel.Status.QUEUED, MLModel.Status.EVALUATING)
"""Model statuses that a job will end by itself (the reaper ends a dead worker's): the page polls only for these."""
IN_PROGRESS_RUN = (EvaluationRun.Status.QUEUED, EvaluationRun.Status.RUNNING)


def _not_evaluated_reason(model: dict) -> str:
    """Why a published model has no scores yet: its archive still unpacking, still training (with its
    progress), or not evaluated yet."""
    if model["status"] == MLModel.Status.UNPACKING:
        return "unpacking its archive; evaluated on every scoring dataset once unpacked"
    if model["status"] == MLModel.Status.TRAINING:
        return f"in training ({model['progress']:.0%}); evaluated on every scoring dataset once trained"
    return f"not evaluated yet ({model['status']})"


@dataclass(frozen=True)
class BoardStanding:
    """Where one of a task's models stands on its Dynascore leaderboard, for its owners: ``listed``
    (ranked, with its ``rank``) or why not (``why``): not published, failed (its reason), still
    unpacking, training, queued or evaluating, or missing a score on a scoring dataset."""

    model_id: int
    name: str
    kind: str
    published: bool
    listed: bool
    why: str
    rank: int | None = None


def board_standings(task: Task) -> list[BoardStanding]:
    """Every model of ``task`` (newest first) with where it stands on the leaderboard
    (``BoardStanding``): the published ones as ``leaderboard_table`` places them under the default
    weights (ranked, or pending with its reason), the others with why they are off every public board."""
    table = cached_leaderboard_table(task)
    ranks = {row.model_id: row.rank for row in table.rows}
    pending = {p["model_id"]: p["reason"] for p in table.pending}
    found = []
    for model in MLModel.objects.filter(task=task).order_by("-created_at", "-pk"):
        if not model.published:
            why = "not published: on no public board (leaderboard, arena) until its owner publishes it on its page"
        elif model.status == MLModel.Status.FAILED:
            why = f"failed: {model.failure_reason or 'no reason recorded'}"
        elif model.pk in ranks:
            why = ""
        else:
            why = pending.get(model.pk) or _not_evaluated_reason({"status": model.status, "progress": model.progress})
        found.append(BoardStanding(model_id=model.pk, name=model.name, kind=model.get_kind_display(), published=model.published,
                                   listed=model.pk in ranks, why=why, rank=ranks.get(model.pk)))
    return found


def cache_header(task: Task) -> dict:
    """``{"datasets", "computed_at"}`` of the task's leaderboard cache (one light query; built when missing,
    rebuilt once when it predates the per-dataset ``not_applicable`` metrics)."""
    header = LeaderboardCache.objects.filter(task=task).values("datasets", "computed_at").first()
    if header is not None and any("not_applicable" not in d for d in header["datasets"]):
        rebuild_leaderboard(task.pk)  # built before "not applicable" was recorded: once, then never again
        header = None
    if header is None:
        store = cache_for(task)
        header = {"datasets": store.datasets, "computed_at": store.computed_at}
    return header


def cached_leaderboard_table(task: Task, *, header: dict | None = None, **options) -> Table:
    """``leaderboard_table`` memoised in Django's cache (Redis).

    The key holds the task, the time its ``LeaderboardCache`` was computed, the options
    (weights, sort, missing-metric rule) and a digest of the published models' live names and
    flags, so any change of scores or of a model's publish/anonymous flags is a new key. A
    cache outage only costs the recomputation. Two queries (cache row, live flags).
    """
    from django.core.cache import cache as django_cache

    computed_at = (header or cache_header(task))["computed_at"]
    live = published_models(task)
    digest = hashlib.sha1(json.dumps([options, sorted(live.items())], sort_keys=True, default=str).encode()).hexdigest()
    key = f"leaderboard-table:v{TABLE_CACHE_VERSION}:{task.pk}:{computed_at.timestamp()}:{digest}"
    try:
        table = django_cache.get(key)
    except Exception:  # noqa: BLE001 - Redis down: compute instead
        table = None
    if table is None:
        table = leaderboard_table(task, cache=cache_for(task), live=live, **options)
        try:
            django_cache.set(key, table, TABLE_CACHE_SECONDS)
        except Exception:  # noqa: BLE001
            pass
    return table


def _replicates(cache: LeaderboardCache) -> np.ndarray:
    if not cache.replicates:
        return np.zeros((0, len(cache.rows), len(cache.datasets)), dtype=np.float32)
    return np.load(io.BytesIO(bytes(cache.replicates)), allow_pickle=False)


def parse_weights(data, *, task: Task, datasets: list[dict]) -> tuple[dict, dict]:
    """Read ``w_<metric>`` and ``d_<dataset id>`` weights from a form ``data`` (QueryDict or dict).

    Missing entries take the defaults (the task's Dynascore weights, the datasets' weights).
    Raises ``RuleError`` (``bad_weight``) for values that are not numbers in 0..5.
    """
    metric_weights = default_metric_weights(task)
    for metric in METRICS:
        if f"w_{metric}" in data and data.get(f"w_{metric}") not in (None, ""):
            metric_weights[metric] = data.get(f"w_{metric}")
    dataset_weights = {str(d["id"]): d["weight"] for d in datasets}
    for d in datasets:
        key = f"d_{d['id']}"
        if key in data and data.get(key) not in (None, ""):
            dataset_weights[str(d["id"])] = data.get(key)
    normalise_weights(metric_weights, METRICS, what="metric", max_weight=5)
    if dataset_weights:
        normalise_weights(dataset_weights, list(dataset_weights), what="dataset", max_weight=5)
    return {k: float(v) for k, v in metric_weights.items()}, {k: float(v) for k, v in dataset_weights.items()}


def leaderboard_table(
    task: Task, *, metric_weights: dict | None = None, dataset_weights: dict | None = None,
    missing_metric: str = MISSING_PER_MODEL, sort: str = "dynascore", descending: bool = True,
    cache: LeaderboardCache | None = None, live: dict | None = None,
) -> Table:
    """Return the ranked leaderboard of ``task``'s published models under the given weights.

    ``metric_weights``: ``{metric: 0..5}`` (default: the task's ``dynascore_weights``);
    ``dataset_weights``: ``{str(dataset id): weight}`` (default: each dataset's ``weight``);
    ``missing_metric``: how models without a delta metric are treated, per model (see
    ``dynascore``; the old name ``drop_metric`` reads as ``per_model``). A metric that cannot be
    measured on a dataset (``not_applicable`` in the cache's datasets) is "n/a" there, never a reason
    to list a model as pending. A pending model is ``running`` only while work for it is in
    progress (``Table.polling``).
    Two queries when the cache exists (none when ``cache`` and ``live`` are given).
    Raises ``RuleError`` (``bad_missing_metric``) for a missing-metric choice that is not
    ``per_model`` or ``exclude_model``.
    """
    cache = cache or cache_for(task)
    datasets = [{**d, "sort_key": f"dataset:{d['id']}"} for d in cache.datasets]
    metric_weights = metric_weights or default_metric_weights(task)
    if dataset_weights is None:
        dataset_weights = {str(d["id"]): d["weight"] for d in datasets}
    try:
        missing_metric = missing_metric_choice(missing_metric)
    except ValueError:
        raise RuleError(LeaderboardErrorCode.BAD_MISSING_METRIC,
                        f"missing_metric must be '{MISSING_PER_MODEL}' or '{MISSING_EXCLUDE_MODEL}' (got {str(missing_metric)[:40]!r}).",
                        field="missing_metric") from None
    live = live if live is not None else published_models(task)
    cached = {row["id"]: row for row in cache.rows}
    index = {row["id"]: i for i, row in enumerate(cache.rows)}
    pending = [
        {"model_id": pk, "name": m["name"], "owner": None if m["anonymous"] else m["owner__username"],
         "reason": _not_evaluated_reason(m), "runs": {}, "running": m["status"] in IN_PROGRESS_MODEL}
        for pk, m in live.items() if pk not in cached
    ]
    published = [cached[pk] for pk in live if pk in cached]
    memory_gib = machine_memory_gib()
    weighted = {k: float(v) for k, v in dataset_weights.items() if float(v) > 0}
    if not datasets or not weighted:
        return Table(task, datasets, [], pending + [
            {"model_id": r["id"], "name": live[r["id"]]["name"], "owner": None, "reason": "no scoring datasets", "runs": {},
             "running": False} for r in published
        ], [], metric_weights, dataset_weights, missing_metric, sort, descending, memory_gib, cache.computed_at)
    rows = [ModelScores(r["id"], r["scores"]) for r in published]
    not_applicable = {str(d["id"]): d.get("not_applicable") or () for d in datasets}
    error_rate = task.config.get("perf_metric") in task.spec.lower_is_better  # WER, CER: lower is better
    result = dynascore(rows, metric_weights=metric_weights, dataset_weights=dataset_weights, memory_gib=memory_gib,
                       missing_metric=missing_metric, not_applicable=not_applicable,
                       orient=orientation(memory_gib=memory_gib, error_rate=error_rate))
    replicates = _replicates(cache)
    columns = [i for i, d in enumerate(datasets) if str(d["id"]) in result.dataset_weights]
    ranked_ids = [r.model for r in result.ranked]
    have = [pk for pk in ranked_ids if pk in index]
    ci, ranges = {}, {}
    if replicates.shape[0] and have:
        reps = replicates[:, [index[pk] for pk in have], :][:, :, columns].astype(float)
        weights = np.array(list(result.dataset_weights.values()))
        intervals = percentile_interval(np.einsum("bmd,d->bm", reps, weights))
        ci = {pk: (float(lo), float(hi)) for pk, (lo, hi) in zip(have, intervals) if np.isfinite(lo)}
        ok = [pk for pk in have if pk in ci]
        if ok:
            ranges = rank_ranges(result, reps[:RANK_RESAMPLES, [have.index(pk) for pk in ok], :], replicate_models=ok)
    table_rows = []
    for r in result.ranked:
        meta = live[r.model]
        scores = cached[r.model]["scores"]
        table_rows.append(Row(
            model_id=r.model, name=meta["name"], owner=None if meta["anonymous"] else meta["owner__username"],
            rank=r.rank, dynascore=r.dynascore, averages=r.averages, kind=meta["kind"],
            contributions=r.contributions, weights=r.weights, missing=r.missing,
            datasets=[{"key": str(d["id"]), "name": d["name"], "performance": (scores.get(str(d["id"])) or {}).get("performance")} for d in datasets],
            ci=ci.get(r.model), rank_range=ranges.get(r.model),
        ))
    for p in result.pending:
        meta = live[p.model]
        runs = cached[p.model]["runs"]
        pending.append({"model_id": p.model, "name": meta["name"], "owner": None if meta["anonymous"] else meta["owner__username"],
                        "reason": pending_reason(p.reason, cached[p.model], datasets, weighted), "runs": runs,
                        "running": meta["status"] in IN_PROGRESS_MODEL or any(
                            (run or {}).get("status") in IN_PROGRESS_RUN for run in runs.values())})
    if sort != "dynascore" or not descending:
        present = [r for r in table_rows if r.sort_value(sort) is not None]
        absent = [r for r in table_rows if r.sort_value(sort) is None]
        table_rows = sorted(present, key=lambda r: r.sort_value(sort), reverse=descending) + absent
    names = {d: (live[d]["name"] if d in live else str(d)) for d in ranked_ids}
    dataset_names = {str(d["id"]): d["name"] for d in datasets}
    rules = [
        {"metric": m, "label": METRIC_LABELS[m], "rule": rule.rule, "explanation": rule.explanation,
         "weight": rule.weight, "effective_weight": rule.effective_weight, "amrs": rule.amrs, "pairs": rule.pairs,
         "missing_for": [names[pk] for pk in rule.missing_for if pk in names],
         "not_applicable_on": [dataset_names.get(d, d) for d in rule.not_applicable_on]}
        for m, rule in result.metrics.items()
    ]
    stability = result.stability
    not_applicable_metrics = tuple(m for m, rule in result.metrics.items() if rule.rule == Rule.NOT_APPLICABLE)
    _set_gaps(table_rows)
    for row in table_rows:
        row.format_cells(METRICS, not_applicable=not_applicable_metrics, stable=stability.stable)
    rounds = _per_round(table_rows, datasets, dataset_weights)
    return Table(task, datasets, table_rows, pending, rules, metric_weights, dataset_weights, missing_metric, sort,
                 descending, memory_gib, cache.computed_at, rounds, stability, not_applicable_metrics,
                 model_names=names)


def _set_gaps(rows: list[Row]) -> None:
    """Each row's Dynascore and contributions as differences from the first-ranked row's: the shared
    part (e.g. memory left divided by a tiny AMRS, the same for every model) cancels out, and the
    differences sum to the gap, which is what decides the order."""
    if not rows:
        return
    leader = min(rows, key=lambda r: r.rank)
    for row in rows:
        row.gap = row.dynascore - leader.dynascore
        row.contribution_gaps = {
            m: (row.contributions.get(m) or 0.0) - (leader.contributions.get(m) or 0.0) for m in row.contributions
        }


def pending_reason(reason: str, row: dict, datasets: list[dict], weighted: dict) -> str:
    """Name the datasets a pending model lacks a performance on, each with its run's status
    (``queued``, ``running``, ``failed``, ``stale``: scored on an earlier version, or ``not scheduled``);
    other reasons (a missing metric) are returned as they are."""
    if not reason.startswith("no performance yet"):
        return f"{reason} (“Models without a metric” is set to list such models here instead of ranking them)"
    lacking = [
        f"{d['name']} ({(row['runs'].get(str(d['id'])) or {}).get('status', 'not scheduled')})"
        for d in datasets if str(d["id"]) in weighted and str(d["id"]) not in row["scores"]
    ]
    return "no performance yet on " + ", ".join(lacking) if lacking else reason


def _per_round(rows: list[Row], datasets: list[dict], dataset_weights: dict) -> list[dict]:
    """Each ranked model's performance per round: the weighted mean over that round's datasets."""
    by_round: dict[int, list[dict]] = {}
    for d in datasets:
        if d["round"] is not None:
            by_round.setdefault(d["round"], []).append(d)
    series = []
    for row in rows:
        perf = {d["key"]: d["performance"] for d in row.datasets}
        points = []
        for number in sorted(by_round):
            pairs = [(float(dataset_weights.get(str(d["id"]), d["weight"]) or 0), perf.get(str(d["id"]))) for d in by_round[number]]
            pairs = [(w, p) for w, p in pairs if p is not None and w > 0] or [(1.0, p) for _, p in pairs if p is not None]
            if pairs:
                points.append((number, sum(w * p for w, p in pairs) / sum(w for w, _ in pairs)))
        series.append({"model_id": row.model_id, "name": row.name, "points": points})
    return series


HIDDEN_TAG_MIN_ITEMS = 20
"""On a hidden set, a per-tag score is shown to non-owners only for tags of at least this many items:
a score over one or a few items would tell their labels one submission at a time."""


def visible_per_tag(user, run: EvaluationRun) -> dict:
    """The run's per-tag scores ``user`` may read: all of them where ``user`` may see the dataset's labels
    (``tasks.selectors.can_see_labels``), else only tags of at least ``HIDDEN_TAG_MIN_ITEMS`` items."""
    per_tag = run.per_tag or {}
    if can_see_labels(user, run.dataset):
        return per_tag
    return {tag: scores for tag, scores in per_tag.items() if int(scores.get("n", 0)) >= HIDDEN_TAG_MIN_ITEMS}


def model_runs(model: MLModel, user=None) -> list[EvaluationRun]:
    """The model's evaluation runs with their datasets, scoring datasets first, as ``user`` may read them:
    aggregate scores on every dataset, per-tag scores filtered by ``visible_per_tag``."""
    runs = list(
        EvaluationRun.objects.filter(model=model).select_related("dataset", "dataset__round", "dataset__task")
        .defer("item_results").order_by("dataset__access", "dataset__name")
    )
    for run in runs:
        run.per_tag = visible_per_tag(user, run)
    return runs


def evaluation_is_final(model: MLModel, runs: list[EvaluationRun]) -> bool:
    """True when the model's evaluation status can no longer change by itself (the status fragment
    then stops polling): every run ``done`` or ``failed``; without runs, a model that is not
    ``unpacking``, ``queued``, ``evaluating`` or ``training`` (a dead worker's run, unpacking or
    training is ended by the reaper, ``leaderboard/reaper.py``, so these always end)."""
    if runs:
        return all(r.status in (EvaluationRun.Status.DONE, EvaluationRun.Status.FAILED) for r in runs)
    return model.status not in (MLModel.Status.UNPACKING, MLModel.Status.QUEUED, MLModel.Status.EVALUATING,
                                MLModel.Status.TRAINING)


def model_is_visible(model: MLModel, user) -> bool:
    """Published models are public; others only to their owner, the task's owners and admins."""
    if model.published:
        return True
    if not user.is_authenticated:
        return False
    return access.owns_model(user, model) or model.task.is_owner(user)


def predictions_for(user, run: EvaluationRun, file) -> Iterator[bytes]:
    """The lines of ``run``'s stored predictions file (``file``: opened in binary mode, closed here) as
    ``user`` may download them.

    Where ``user`` may see the dataset's labels (``tasks.selectors.can_see_labels``) the file is given
    as stored; otherwise each line keeps only ``uid`` and ``prediction``: the gold ``target`` and the
    per-item score (correctness) are dropped, also from files written before the dataset became hidden.
    """
    with file:
        if can_see_labels(user, run.dataset):
            yield from file
            return
        for line in file:
            if line.strip():
                row = json.loads(line)
                yield (json.dumps({"uid": row.get("uid"), "prediction": row.get("prediction")}, ensure_ascii=False) + "\n").encode()


def snapshot_provenance(task: Task, model_ids: list[int]) -> dict:
    """What a frozen leaderboard snapshot was computed from, so that it can be cited and checked:
    the code version, every scoring dataset's version, sha256 of its canonical content, item count,
    label visibility and source, and per ranked model and dataset the run's model checksum, dataset
    checksum and version, and code version. Plain JSON."""
    from tasks.models import Dataset

    datasets = Dataset.objects.filter(task=task, access=Dataset.Access.SCORING).order_by("pk")
    runs = (
        EvaluationRun.objects.filter(model_id__in=model_ids, dataset__in=datasets).select_related("model", "dataset")
        .defer("item_results").order_by("model_id", "dataset_id")
    )
    return {
        "task": task.code,
        "code_version": code_version(),
        "frozen_at": timezone.now().isoformat(),
        "datasets": [
            {"id": d.pk, "name": d.name, "version": d.version, "sha256": d.checksum, "items": d.item_count,
             "label_visibility": d.label_visibility, "split": d.split, "round": d.round.number if d.round else None,
             "source": d.source if d.source.startswith("round ") or not d.source else d.source.rsplit("/", 1)[-1],
             "source_sha256": d.source_checksum}
            for d in datasets.select_related("round")
        ],
        "runs": [
            {"model_id": r.model_id, "model": r.model.name, "dataset": r.dataset.name, "status": r.status,
             "model_checksum": r.model_checksum or r.model.checksum, "dataset_version": r.dataset_version,
             "dataset_checksum": r.dataset_checksum, "code_version": r.code_version,
             "finished_at": r.finished_at.isoformat() if r.finished_at else None}
            for r in runs
        ],
    }
