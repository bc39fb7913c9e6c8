"""The report's figures, read back from the platform after each round and at the end of a task.

Decides what the report shows: per round the API's counts and vMER, the validation states and the
examples per label (:func:`round_figures`); per model its training, its performance per dataset
and round and its rank and Dynascore from the leaderboard, with the leaderboard's Dynascore rules
(:func:`finish`). ``cycle.report`` writes them out.
"""

from __future__ import annotations

from django.db.models import Count, Q

from annotation.models import Example, ValidationState
from cycle.platform import Platform
from tasks.models import Dataset, MLModel, Round
from validation.round_statistics import state_counts


def _per_label(round: Round, labels: list[str]) -> dict[str, dict]:
    """``{label: {collected, fooled, verified_correct, verified_fooled}}`` over the round's non-retracted examples."""
    verified = Q(validation_state=ValidationState.VERIFIED_CORRECT)
    rows = (
        Example.objects.filter(round=round, retracted=False)
        .values("target__label")
        .annotate(
            collected=Count("id"), fooled=Count("id", filter=Q(model_wrong=True)),
            verified_correct=Count("id", filter=verified), verified_fooled=Count("id", filter=verified & Q(model_wrong=True)),
        )
    )
    found = {row.pop("target__label"): row for row in rows}
    empty = {"collected": 0, "fooled": 0, "verified_correct": 0, "verified_fooled": 0}
    return {label: found.get(label, dict(empty)) for label in labels}


def _counts(api_round: dict) -> dict:
    return {k: api_round["counts"][k] for k in ("collected", "fooled", "verified_fooled", "vmer", "mer")}


def round_figures(p: Platform, round: Round, *, how: str, model_in_loop: str | None) -> dict:
    api_round = p.owner.round(p.code, round.number)
    return {
        "round": round.number, "how": how, "model_in_loop": model_in_loop, "counts": _counts(api_round),
        "states": state_counts(round), "per_label": _per_label(round, p.task.labels),
    }


def _model_figures(model_api: dict, model: MLModel, *, trained_on: str, datasets: list[str]) -> dict:
    """One model's row of the report from the API's model detail (performance per dataset and round, 0..1)."""
    per_dataset = {run["dataset"]: run["performance"] for run in model_api["evaluations"] if run["status"] == "done"}
    info = model.training_info or {}
    return {
        "id": model.pk, "name": model.name, "trained_on": trained_on, "training_seconds": info.get("duration_s"),
        "training_examples": info.get("examples"), "training_data": [
            {k: v for k, v in source.items() if k != "example_ids"} for source in info.get("data", [])
        ],
        "per_dataset": {d: per_dataset.get(d) for d in datasets},
        "standard_datasets": {d: v for d, v in per_dataset.items() if d not in datasets},
        "per_round": {str(r["round"]): r["performance"] for r in model_api.get("rounds", [])},
        "dynascore": model_api.get("dynascore"), "rank": model_api.get("rank"),
    }


def _leaderboard(p: Platform, models: list[dict]) -> list[dict]:
    """Read the task's leaderboard (``GET /api/v1/tasks/{code}/leaderboard``); fill each model's rank and
    Dynascore from it and return its Dynascore rules (one per metric)."""
    board = p.owner.leaderboard(p.code)
    by_id = {row["model_id"]: row for row in board["rows"]}
    for m in models:
        row = by_id.get(m["id"])
        if row:
            m["rank"], m["dynascore"] = row["rank"], row["dynascore"]
    return board["rules"]


def finish(p: Platform, figures: dict, models: list[tuple[MLModel, str]], results: dict) -> dict:
    datasets = list(Dataset.objects.filter(task=p.task, access=Dataset.Access.SCORING).order_by("round__number", "name").values_list("name", flat=True))
    rows = [_model_figures(results[m.pk], MLModel.objects.get(pk=m.pk), trained_on=how, datasets=datasets) for m, how in models]
    figures.update(
        models=rows, scoring_datasets=datasets, perf_metric=p.task.config["perf_metric"],
        round_numbers=sorted(Round.objects.filter(task=p.task).values_list("number", flat=True)),
    )
    figures["dynascore_rules"] = _leaderboard(p, rows)
    figures.setdefault("notes", []).extend(p.notes)
    return figures
