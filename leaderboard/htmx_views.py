"""Leaderboard, model and submission pages (HTMX). Views parse and render; services decide."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from dynabench.errors import RuleError
from leaderboard import archives, services
from leaderboard.arena_board import cached_arena_board
from leaderboard.cluster_scores import attach_per_cluster
from leaderboard.error_codes import LeaderboardErrorCode as Code
from leaderboard.forms import SaveLeaderboardForm, SubmissionForm
from leaderboard.generative_boards import chat_board, generator_safety_board
from leaderboard.metric_rules import METRICS, MISSING_PER_MODEL
from leaderboard.models import EvaluationRun, LeaderboardConfig, MissingMetric
from leaderboard.plots import performance_by_round_svg
from leaderboard.selectors import (
    HIDDEN_TAG_MIN_ITEMS,
    METRIC_LABELS,
    METRIC_UNITS,
    cache_for,
    cache_header,
    cached_leaderboard_table,
    evaluation_is_final,
    leaderboard_table,
    model_is_visible,
    model_runs,
    predictions_for,
    parse_weights,
)
from tasks import access
from tasks.loop import artefacts, gate
from tasks.models import Endpoint, MLModel, Purpose, Task



def _task(code: str) -> Task:
    return get_object_or_404(Task, code=code, active=True)


def _table_from_request(task: Task, data):
    header = cache_header(task)
    metric_weights, dataset_weights = parse_weights(data, task=task, datasets=header["datasets"])
    sort = data.get("sort") or "dynascore"
    descending = data.get("dir", "desc") != "asc"
    missing = data.get("missing_metric") or MISSING_PER_MODEL
    return cached_leaderboard_table(task, header=header, metric_weights=metric_weights, dataset_weights=dataset_weights,
                                    missing_metric=missing, sort=sort, descending=descending)


def _context(table, **extra):
    return {
        "table": table, "task": table.task, "metrics": METRICS, "metric_labels": METRIC_LABELS, "units": METRIC_UNITS,
        "plot": performance_by_round_svg(table.rounds), "missing_metric_choices": MissingMetric.choices,
        "slider_notes": table.slider_notes(), **extra,
    }


WEIGHT_PARAMETERS = ("w_", "d_", "missing_metric")


@require_http_methods(["GET"])
def leaderboard(request, code):
    """The task's leaderboard: the ranked table first, the weight sliders one click away (a ``<details>``,
    open when the query sets weights); query parameters set weights, sort and the missing-metric rule."""
    task = _task(code)
    weights_open = any(key.startswith(WEIGHT_PARAMETERS) for key in request.GET)
    try:
        table = _table_from_request(task, request.GET)
    except RuleError as error:
        table = leaderboard_table(task)
        return render(request, "leaderboard/leaderboard.html",
                      _context(table, error=error.message, save_form=SaveLeaderboardForm(), weights_open=True), status=400)
    return render(request, "leaderboard/leaderboard.html", _context(
        table, save_form=SaveLeaderboardForm(), weights_open=weights_open,
        generators=generator_safety_board(task), chat=chat_board(task)))


@require_GET
def arena(request, code):
    """The arena leaderboard (``leaderboard/arena_board.py``): ratings from validated pairwise judgments,
    the win-rate matrix and the generative vMER per model and failure category, as of the board's
    last build (an RQ job); while a newer one is built the page says so and polls for it."""
    task = _task(code)
    try:
        state = cached_arena_board(task)
    except RuleError as error:
        raise Http404(error.message) from None
    board = state.board
    matrix = [] if board is None else [
        (m, [(other, board.win_rate[i][j]) for j, other in enumerate(board.models)]) for i, m in enumerate(board.models)
    ]
    return render(request, "leaderboard/arena.html", {"task": task, "board": board, "state": state, "matrix": matrix})


@require_http_methods(["GET", "POST"])
def leaderboard_table_fragment(request, code):
    """HTMX: the ranked table re-ranked by the server under the posted weights (sliders)."""
    task = _task(code)
    data = request.POST if request.method == "POST" else request.GET
    try:
        table = _table_from_request(task, data)
    except RuleError as error:
        return HttpResponse(format_html('<p class="error" role="alert">{}</p>', error.message), status=400)
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
            if "missing_metric" in form.errors:
                raise RuleError("bad_missing_metric", "Choose what to do with models without a metric: "
                                f"{' or '.join(MissingMetric.values)}.", field="missing_metric")
            raise RuleError("bad_name", "Give the saved leaderboard a name.", field="name")
        config = services.save_leaderboard_config(
            user=request.user, task=task, name=form.cleaned_data["name"], description=form.cleaned_data["description"],
            metric_weights=metric_weights, dataset_weights=dataset_weights,
            missing_metric=form.cleaned_data["missing_metric"] or MISSING_PER_MODEL, frozen=form.cleaned_data["frozen"],
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


def leaderboard_config_json(request, slug):
    """A saved leaderboard as JSON: a frozen snapshot as it was (ranked rows, datasets with versions and
    sha256, runs with model/dataset checksums and code version); a fork with its weights and the live ranking."""
    config = get_object_or_404(LeaderboardConfig.objects.select_related("task", "owner"), slug=slug)
    body = {
        "slug": config.slug, "name": config.name, "task": config.task.code, "frozen": config.frozen,
        "created_at": config.created_at.isoformat(), "url": request.build_absolute_uri(reverse("leaderboard:config", args=[config.slug])),
        "metric_weights": config.metric_weights, "dataset_weights": config.dataset_weights, "missing_metric": config.missing_metric,
    }
    if config.frozen:
        body["snapshot"] = config.snapshot
    else:
        table = leaderboard_table(config.task, metric_weights=dict(config.metric_weights), dataset_weights=config.dataset_weights or None,
                                  missing_metric=config.missing_metric)
        body["snapshot"] = {"rows": table.snapshot(), "datasets": table.datasets, "pending": [p["name"] for p in table.pending]}
    response = JsonResponse(body, json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'attachment; filename="leaderboard-{config.slug}.json"'
    return response


def leaderboard_config(request, slug):
    """A saved fork (the live leaderboard under its weights) or a frozen snapshot (as it was)."""
    config = get_object_or_404(LeaderboardConfig.objects.select_related("task", "owner"), slug=slug)
    if config.frozen:
        return render(request, "leaderboard/snapshot.html", {"config": config, "task": config.task, "snapshot": config.snapshot,
                                                              "metrics": METRICS, "metric_labels": METRIC_LABELS})
    table = leaderboard_table(config.task, metric_weights=dict(config.metric_weights), dataset_weights=config.dataset_weights or None,
                              missing_metric=config.missing_metric)
    return render(request, "leaderboard/leaderboard.html", _context(table, config=config, save_form=SaveLeaderboardForm()))


# --- submissions -------------------------------------------------------------------------


def _uid_lines(upload) -> list[str]:
    """The uids of an uploaded selection file: one per non-empty line, UTF-8, at most the predictions-file size."""
    data = upload.read(services.max_predictions_bytes() + 1)
    if len(data) > services.max_predictions_bytes():
        raise RuleError(Code.BAD_SELECTION, "The selection file is too large; list at most the task's budget of uids.", field="upload")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise RuleError(Code.BAD_SELECTION, "The selection file is not UTF-8 text: one uid per line.", field="upload") from None
    return [line.strip() for line in text.splitlines() if line.strip()]


@login_required
@require_http_methods(["GET", "POST"])
def submit(request, code):
    """Upload a model archive, a predictions file or (data-centric tasks) a selection of pool uids,
    as the task's kind takes them; errors are shown inline next to the field."""
    task = _task(code)
    try:
        services.check_submitter(user=request.user, task=task)
    except RuleError as error:
        return render(request, "leaderboard/submit.html", {"task": task, "refused": error.message}, status=error.status_code)
    status = 200
    submissions = task.spec.submissions
    if request.method == "POST":
        form = SubmissionForm(request.POST, request.FILES, submissions=submissions)
        if form.is_valid():
            data = form.cleaned_data
            common = dict(user=request.user, task=task, name=data["name"], description=data["description"],
                          anonymous=data["anonymous"], published=data["published"])
            try:
                if data["kind"] == "selection":
                    model = services.submit_selection(**common, uids=_uid_lines(data["upload"]))
                elif data["kind"] == "archive":
                    model = services.submit_model_archive(**common, upload=data["upload"])
                else:
                    model = services.submit_predictions(**common, upload=data["upload"])
            except RuleError as error:
                form.add_error(error.field if error.field in form.fields else None, error.message)
                status = error.status_code
            else:
                return redirect("leaderboard:model", model.pk)
        else:
            status = 400
    else:
        form = SubmissionForm(submissions=submissions)
    example_uid = task.datasets.filter(access="scoring").values_list("items__uid", flat=True).first()
    return render(request, "leaderboard/submit.html", {
        "task": task, "form": form, "example_uid": example_uid or "item-uid",
        "field": task.spec.prediction_field,
        "example_value": (task.labels[0] if task.labels else "the answer span"),
        "max_mib": archives.max_archive_bytes() // archives.MiB, "allowance": services.submission_allowance(request.user),
        "pool": task.spec.training_pool(task.config), "budget": task.spec.selection_budget(task.config),
    }, status=status)


# --- model page --------------------------------------------------------------------------


def _visible_model(request, pk) -> MLModel:
    model = get_object_or_404(MLModel.objects.select_related("task", "owner"), pk=pk)
    if not model_is_visible(model, request.user):
        raise Http404("No such model.")
    return model


def _model_context(request, model):
    runs = attach_per_cluster(request.user, model_runs(model, request.user))
    is_owner = access.owns_model(request.user, model)
    return {
        "model": model, "task": model.task, "runs": runs, "is_owner": is_owner,
        "finished": evaluation_is_final(model, runs),
        "owner_name": None if model.anonymous and not is_owner else (model.owner.username if model.owner else None),
        "tags": sorted({tag for r in runs for tag in (r.per_tag or {})}),
        "perf_metric": model.task.config.get("perf_metric"),
        "item_score_lower": model.task.spec.score_key in model.task.spec.lower_is_better,
        "hidden_min_items": HIDDEN_TAG_MIN_ITEMS,
        "key_use": _key_use(model) if is_owner and model.is_endpoint else None,
    }


def _key_use(model) -> dict:
    """For an endpoint's submitter: each purpose besides evaluation with whether they consent to it, and
    the calls made under their key per task, purpose and outcome (``tasks.loop.gate``)."""
    consents = set(Endpoint.objects.filter(model=model).values_list("consents", flat=True).first() or [])
    return {"purposes": [(p, Purpose(p).label, p in consents) for p in gate.CONSENTABLE],
            "calls": gate.usage_by_purpose(model)}


def model_page(request, pk):
    """Model card, per-dataset, per-tag and per-cluster scores, live status, owner's toggles and downloads."""
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


@login_required
@require_POST
def model_consents(request, pk):
    """The submitter: the purposes besides evaluation the task's owners may call their endpoint for
    (``tasks.loop.gate.set_consents``; a purpose left unticked is revoked from the next call on)."""
    model = _visible_model(request, pk)
    try:
        gate.set_consents(model=model, acting_user=request.user, consents=request.POST.getlist("consents"))
    except RuleError as error:
        return HttpResponse(error.message, status=error.status_code)
    if request.htmx:
        return render(request, "leaderboard/_model_key_use.html", _model_context(request, model))
    return redirect("leaderboard:model", model.pk)


def run_predictions(request, pk, run_id):
    """The raw predictions (JSONL) of one run: the model's owner (or an admin) only; 403 otherwise."""
    model = _visible_model(request, pk)
    if not access.owns_model(request.user, model):
        return HttpResponse("Only the model's owner can download its predictions.", status=403)
    run = get_object_or_404(EvaluationRun.objects.select_related("dataset__task"), pk=run_id, model=model)
    if not run.predictions_file:
        raise Http404("This run has no predictions yet.")
    store = artefacts.storage()
    if not store.exists(run.predictions_file):
        raise Http404("The predictions file is missing.")
    # Hidden set: the model's answers only, never the targets or per-item correctness.
    lines = predictions_for(request.user, run, store.open(run.predictions_file, "rb"))
    response = StreamingHttpResponse(lines, content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="{model.pk}-{run.dataset.name}-predictions.jsonl"'
    return response
