"""Leaderboard, model and submission pages (HTMX). Views parse and render; services decide."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from dynabench.errors import RuleError
from leaderboard import services
from leaderboard.calculations import METRICS, MISSING_DROP_METRIC
from leaderboard.forms import SaveLeaderboardForm, SubmissionForm
from leaderboard.models import EvaluationRun, LeaderboardConfig
from leaderboard.plots import performance_by_round_svg
from leaderboard.selectors import (
    METRIC_LABELS,
    METRIC_UNITS,
    cache_for,
    cache_header,
    cached_leaderboard_table,
    leaderboard_table,
    model_is_visible,
    model_runs,
    parse_weights,
)
from tasks.models import MLModel, Task

FINISHED = {EvaluationRun.Status.DONE, EvaluationRun.Status.FAILED}


def _task(code: str) -> Task:
    return get_object_or_404(Task, code=code, active=True)


def _table_from_request(task: Task, data):
    header = cache_header(task)
    metric_weights, dataset_weights = parse_weights(data, task=task, datasets=header["datasets"])
    sort = data.get("sort") or "dynascore"
    descending = data.get("dir", "desc") != "asc"
    missing = data.get("missing_metric") or MISSING_DROP_METRIC
    return cached_leaderboard_table(task, header=header, metric_weights=metric_weights, dataset_weights=dataset_weights,
                                    missing_metric=missing, sort=sort, descending=descending)


def _context(table, **extra):
    return {
        "table": table, "task": table.task, "metrics": METRICS, "metric_labels": METRIC_LABELS, "units": METRIC_UNITS,
        "plot": performance_by_round_svg(table.rounds), **extra,
    }


@require_http_methods(["GET"])
def leaderboard(request, code):
    """The task's leaderboard with weight sliders; query parameters set weights, sort and the missing-metric rule."""
    task = _task(code)
    try:
        table = _table_from_request(task, request.GET)
    except RuleError as error:
        table = leaderboard_table(task)
        return render(request, "leaderboard/leaderboard.html", _context(table, error=error.message, save_form=SaveLeaderboardForm()), status=400)
    return render(request, "leaderboard/leaderboard.html", _context(table, save_form=SaveLeaderboardForm()))


@require_http_methods(["GET", "POST"])
def leaderboard_table_fragment(request, code):
    """HTMX: the ranked table re-ranked by the server under the posted weights (sliders)."""
    task = _task(code)
    data = request.POST if request.method == "POST" else request.GET
    try:
        table = _table_from_request(task, data)
    except RuleError as error:
        return HttpResponse(f'<p class="error" role="alert">{error.message}</p>', status=400)
    return render(request, "leaderboard/_table.html", _context(table))


@login_required
@require_POST
def save_leaderboard(request, code):
    """Save the current weights as a fork, or freeze a snapshot; redirect to its shareable URL."""
    task = _task(code)
    form = SaveLeaderboardForm(request.POST)
    cache = cache_for(task)
    try:
        metric_weights, dataset_weights = parse_weights(request.POST, task=task, datasets=cache.datasets)
        if not form.is_valid():
            raise RuleError("bad_name", "Give the saved leaderboard a name.", field="name")
        config = services.save_leaderboard_config(
            user=request.user, task=task, name=form.cleaned_data["name"], description=form.cleaned_data["description"],
            metric_weights=metric_weights, dataset_weights=dataset_weights,
            missing_metric=request.POST.get("missing_metric") or MISSING_DROP_METRIC, frozen=form.cleaned_data["frozen"],
        )
    except RuleError as error:
        table = leaderboard_table(task)
        return render(request, "leaderboard/leaderboard.html", _context(table, error=error.message, save_form=form), status=error.status_code)
    url = reverse("leaderboard:config", args=[config.slug])
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url)


def leaderboard_config(request, slug):
    """A saved fork (the live leaderboard under its weights) or a frozen snapshot (as it was)."""
    config = get_object_or_404(LeaderboardConfig.objects.select_related("task", "owner"), slug=slug)
    if config.frozen:
        return render(request, "leaderboard/snapshot.html", {"config": config, "task": config.task, "snapshot": config.snapshot,
                                                              "metrics": METRICS, "metric_labels": METRIC_LABELS})
    weights = dict(config.metric_weights)
    missing = weights.pop("_missing_metric", MISSING_DROP_METRIC)
    table = leaderboard_table(config.task, metric_weights=weights, dataset_weights=config.dataset_weights or None, missing_metric=missing)
    return render(request, "leaderboard/leaderboard.html", _context(table, config=config, save_form=SaveLeaderboardForm()))


# --- submissions -------------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def submit(request, code):
    """Upload a model archive or a predictions file; errors are shown inline next to the field."""
    task = _task(code)
    status = 200
    if request.method == "POST":
        form = SubmissionForm(request.POST, request.FILES)
        if form.is_valid():
            data = form.cleaned_data
            submit_fn = services.submit_model_archive if data["kind"] == "archive" else services.submit_predictions
            try:
                model = submit_fn(
                    user=request.user, task=task, upload=data["upload"], name=data["name"], description=data["description"],
                    anonymous=data["anonymous"], published=data["published"],
                )
            except RuleError as error:
                form.add_error(error.field if error.field in form.fields else None, error.message)
                status = error.status_code
            else:
                return redirect("leaderboard:model", model.pk)
        else:
            status = 400
    else:
        form = SubmissionForm()
    example_uid = task.datasets.filter(access="scoring").values_list("items__uid", flat=True).first()
    return render(request, "leaderboard/submit.html", {
        "task": task, "form": form, "example_uid": example_uid or "item-uid",
        "field": "label" if task.kind == "classification" else "answer",
        "example_value": (task.labels[0] if task.labels else "the answer span"),
        "max_mib": services.max_archive_bytes() // services.MiB, "limit": services.daily_submission_limit(),
    }, status=status)


# --- model page --------------------------------------------------------------------------


def _visible_model(request, pk) -> MLModel:
    model = get_object_or_404(MLModel.objects.select_related("task", "owner"), pk=pk)
    if not model_is_visible(model, request.user):
        raise Http404("No such model.")
    return model


def _model_context(request, model):
    runs = model_runs(model)
    is_owner = request.user.is_authenticated and (request.user.pk == model.owner_id or request.user.is_superuser)
    return {
        "model": model, "task": model.task, "runs": runs, "is_owner": is_owner,
        "finished": bool(runs) and all(r.status in FINISHED for r in runs) or model.status == MLModel.Status.FAILED and not runs,
        "owner_name": None if model.anonymous and not is_owner else (model.owner.username if model.owner else None),
        "tags": sorted({tag for r in runs for tag in (r.per_tag or {})}),
        "perf_metric": model.task.config.get("perf_metric"),
    }


def model_page(request, pk):
    """Model card, per-dataset and per-tag scores, live status, owner's toggles and downloads."""
    model = _visible_model(request, pk)
    return render(request, "leaderboard/model.html", _model_context(request, model))


def model_status(request, pk):
    """HTMX: the per-dataset status table; keeps polling itself until every run is finished."""
    model = _visible_model(request, pk)
    return render(request, "leaderboard/_model_status.html", _model_context(request, model))


@login_required
@require_POST
def model_visibility(request, pk):
    """Owner: publish / unpublish, anonymise / show name."""
    model = _visible_model(request, pk)
    flags = {}
    for flag in ("published", "anonymous"):
        if flag in request.POST:
            flags[flag] = request.POST[flag] in ("1", "true", "on", "yes")
    try:
        services.set_model_visibility(actor=request.user, model=model, **flags)
    except RuleError as error:
        return HttpResponse(error.message, status=error.status_code)
    if request.htmx:
        return render(request, "leaderboard/_model_toggles.html", _model_context(request, model))
    return redirect("leaderboard:model", model.pk)


def run_predictions(request, pk, run_id):
    """The raw predictions (JSONL) of one run: the model's owner (or an admin) only; 403 otherwise."""
    model = _visible_model(request, pk)
    if not (request.user.is_authenticated and (request.user.pk == model.owner_id or request.user.is_superuser)):
        return HttpResponse("Only the model's owner can download its predictions.", status=403)
    run = get_object_or_404(EvaluationRun, pk=run_id, model=model)
    if not run.predictions_file:
        raise Http404("This run has no predictions yet.")
    path = (Path(settings.MEDIA_ROOT) / run.predictions_file).resolve()
    if not path.is_relative_to(Path(settings.MEDIA_ROOT).resolve()) or not path.is_file():
        raise Http404("The predictions file is missing.")
    return FileResponse(open(path, "rb"), as_attachment=True, filename=f"{model.pk}-{run.dataset.name}-predictions.jsonl",
                        content_type="application/x-ndjson")
