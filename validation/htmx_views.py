"""Validation pages: the review queue, the owner queue, the round page, a user's page, exports.

Views parse input and render; every change goes through ``validation/services.py``, ``validation/queue.py``
or ``validation/round_close.py``.
"""

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import (
    Http404,
    HttpResponseBadRequest,
    HttpResponseForbidden,
    JsonResponse,
    StreamingHttpResponse,
)
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation import content_warning, crowd, qualification
from annotation.models import Example
from annotation.diversity.report import author_diversity
from annotation.selectors import user_counts
from dynabench import idempotency
from dynabench.errors import RuleError
from dynabench.params import whole_number
from tasks import access
from tasks.data.croissant import dataset_license_of_task
from tasks.data.images import image_context_fields
from tasks.data.media import media_held_by
from tasks.models import Round, Task
from validation import (export, own_answers, queue, queue_selectors, round_close, round_statistics, selectors, services,
                        transfer_selectors)
from validation.croissant import round_export_croissant
from validation.forms import CloseRoundForm, OwnerQueueFilter, ValidationForm
from validation.judgment_export import LAYOUTS, judgment_lines

SKIPPED_KEY = "validation_skipped"


def _task(code):
    return get_object_or_404(Task, code=code)


def _collecting_task(code):
    """The task ``code`` if it collects examples (404 for an evaluation-only benchmark: nothing to validate)."""
    return get_object_or_404(Task, code=code, collecting=True)


def _round(task, number):
    return get_object_or_404(Round, task=task, number=number)


def _queue_round(request, task):
    number = request.GET.get("round") or request.POST.get("round")
    if number:
        if whole_number(number, minimum=1) is None:
            raise Http404("No such round.")
        return _round(task, whole_number(number, minimum=1))
    round = task.current_round()
    if round is None:
        raise Http404("This task has no rounds yet.")
    return round


def _skipped(request, round) -> list[int]:
    return request.session.get(SKIPPED_KEY, {}).get(str(round.pk), [])


def _review_context(request, task, round, *, example=None, error=None, notice=None, form=None, current=False):
    if example is None:
        pick = queue.current_example_for if current else queue.next_example_for
        example = pick(validator=request.user, round=round, exclude_ids=_skipped(request, round))
    return {
        "task": task,
        "round": round,
        "example": example,
        "display": queue_selectors.review_display(example) if example is not None else None,
        "image_hashes": [example.context.data.get(n) for n in image_context_fields(task.config)] if example is not None else [],
        # a failed post keeps its key (nothing was stored under it); a new example gets a new one
        "submission_key": (form.data.get("submission_key") if form is not None and example is not None else None)
        or idempotency.new_key(),
        "error": error,
        "notice": notice,
        "form": form,
        "skipped": len(_skipped(request, round)),
        # validators may add answers while the example takes more (own_answers.py)
        "takes_own_answer": example is not None and own_answers.answers_left(example) > 0,
    }


def _may_validate(user, task) -> bool:
    return access.has_task_role(user, task, "validator")


@login_required
def validate_home(request):
    """The tasks whose current round the user may validate, each with its queue's link and counts."""
    tasks = [t for t in Task.objects.filter(active=True).order_by("name") if _may_validate(request.user, t)]
    rows = [(t, t.current_round()) for t in tasks]
    counts = queue_selectors.pending_counts([r for _, r in rows if r is not None])
    return render(request, "validation/home.html", {
        "rows": [(t, r, counts.get(r.pk, 0) if r else 0) for t, r in rows],
        "may_validate": bool(tasks),
    })


@login_required
def review_queue(request, code):
    """GET: the next example of the task's current round (``?round=N`` for another), leased to you."""
    task = _collecting_task(code)
    if not _may_validate(request.user, task):
        return render(request, "validation/forbidden.html", {"task": task,
                      "message": "You need the validator role to validate examples; ask a task owner."}, status=403)
    if not qualification.is_qualified(user=request.user, task=task):
        return redirect(f"{reverse('annotation:qualification', args=[task.code])}?{urlencode({'next': request.get_full_path()})}")
    if (warning := content_warning.page_if_needed(request, task)) is not None:  # validators read what annotators read
        return warning
    round = _queue_round(request, task)
    ctx = _review_context(request, task, round, current=True)
    ctx["crowd_session"] = crowd.active_session(user=request.user, round=round, activity="validate")
    return render(request, "validation/review.html", ctx)


@login_required
@require_POST
def submit_validation(request, code, example_id):
    """POST a verdict on one example; answer with the next example (or the same one and the error, 400)."""
    task = _collecting_task(code)
    example = get_object_or_404(Example.objects.select_related("round__task"), pk=example_id, round__task=task)
    form = ValidationForm(request.POST)
    template = "validation/_review_card.html" if request.htmx else "validation/review.html"
    if not form.is_valid():
        ctx = _review_context(request, task, example.round, example=example, error=form.first_error(), form=form)
        return render(request, template, ctx, status=400)
    try:
        validation = services.record_validation(
            example=example,
            validator=request.user,
            label=form.cleaned_data["label"],
            metadata=form.metadata(),
            expected_state=form.cleaned_data.get("expected_state") or None,
            submission_key=form.cleaned_data.get("submission_key") or "",
        )
    except RuleError as exc:
        example.refresh_from_db()
        # answers_full: the example went back to the queue (record_validation), which hands out the next one
        stale = exc.code in {"stale_form", "already_settled", "retracted", "already_validated", "own_example", "answers_full"}
        ctx = _review_context(request, task, example.round, example=None if stale else example, error=exc.message, form=form)
        return render(request, template, ctx, status=exc.status_code)
    notice = f"Saved: {validation.get_label_display().lower()} on example {example.pk}."
    return render(request, template, _review_context(request, task, example.round, notice=notice))


@login_required
@require_POST
def skip_example(request, code, example_id):
    """POST: give the example back to the queue and leave it out for you this session; at most
    ``VALIDATION_SKIPS_PER_DAY`` a day per round (``queue.note_skip``), past which the same
    example stays with a 429 message."""
    task = _collecting_task(code)
    example = get_object_or_404(Example.objects.select_related("round"), pk=example_id, round__task=task)
    template = "validation/_review_card.html" if request.htmx else "validation/review.html"
    try:
        queue.note_skip(validator=request.user, round=example.round)
    except RuleError as refused:
        context = _review_context(request, task, example.round, error=refused.message, current=True)
        return render(request, template, context, status=refused.status_code)
    queue.release_lease(example=example, validator=request.user)
    skipped = request.session.get(SKIPPED_KEY, {})
    skipped.setdefault(str(example.round_id), [])
    if example.pk not in skipped[str(example.round_id)]:
        skipped[str(example.round_id)].append(example.pk)
    request.session[SKIPPED_KEY] = skipped
    return render(request, template, _review_context(request, task, example.round, notice=f"Skipped example {example.pk}."))


def round_page(request, code, number):
    """The round: counts, vMER, validation states, agreement, the per-annotator table, all
    from ``round_statistics.round_stats`` (a fixed number of queries whatever the round's size).

    Annotators' usernames are shown to the task's owners and admins only (each person also
    sees their own row); everyone else sees the counts without names, since named counts
    could be matched to the export's anonymised annotator ids.
    """
    task = _task(code)
    round = _round(task, number)
    is_owner = task.is_owner(request.user)
    stats = round_statistics.round_stats(round)
    shown = [a for a, _ in stats.annotators] if is_owner else ([request.user.pk] if request.user.is_authenticated else [])
    users = get_user_model().objects.in_bulk(shown) if shown else {}
    ctx = {
        "task": task,
        "round": round,
        "stats": stats,
        "counts": stats.counts,
        "states": round_statistics.round_states(round, stats=stats),
        "budget": round_statistics.vote_budget(round),
        "agreement": stats.agreement,
        "voted_agreement": stats.voted_agreement,
        "annotators": [(users.get(a), c) for a, c in stats.annotators],
        "more_annotators": stats.more_annotators,
        "is_owner": is_owner,
        "datasets": round.datasets.order_by("name"),
        "media_exports": _media_exports(task) if is_owner else [],
    }
    return render(request, "validation/round.html", ctx)


def _media_exports(task) -> list[tuple]:
    """``[(media type, has a Croissant description)]`` of the media the task holds files of
    (``validation.media_export``): its contexts' media are described, a generator's images are not."""
    return [(media, bool(media.context_fields(task.config or {}))) for media in media_held_by(task)]


@login_required
def user_page(request, username):
    """A user's vMER per round, their validated examples' transfer rates (and which earned a round's
    transfer bonus), the diversity of their examples (their Vendi score beside the round's, and which were
    near-copies), and their record as a validator (the user, owners and admins)."""
    person = get_object_or_404(get_user_model(), username=username)
    viewer = request.user
    if viewer != person and not (viewer.is_superuser or viewer.owned_tasks.exists()):
        return HttpResponseForbidden("Only this user, task owners and admins can see this page.")
    rounds = Round.objects.filter(examples__author=person).distinct().select_related("task").order_by("task__code", "number")
    validated = Round.objects.filter(examples__validations__validator=person).distinct().select_related("task").order_by("task__code", "number")
    ctx = {
        "person": person,
        "total": user_counts(person),
        "rows": [(r, user_counts(person, round=r)) for r in rounds],
        "validator_total": selectors.validator_stats(person),
        "validator_rows": [(r, selectors.validator_stats(person, round=r)) for r in validated],
        "transfer": transfer_selectors.person_transfer(person),
        "diversity": author_diversity(person),
    }
    return render(request, "validation/user.html", ctx)


class KnownCountPaginator(Paginator):
    """A ``Paginator`` told its object count (e.g. from a round's tally), so it never runs
    ``COUNT(*)`` over the round; ``count=None`` counts as usual."""

    def __init__(self, object_list, per_page, *, count: int | None = None, **kwargs):
        super().__init__(object_list, per_page, **kwargs)
        if count is not None:
            self.__dict__["count"] = count  # fills the cached_property


def _owner_only(request, task):
    if not task.is_owner(request.user):
        return render(request, "validation/forbidden.html", {"task": task,
                      "message": f"Only owners of task '{task.code}' can do this."}, status=403)
    return None


@login_required
def owner_queue(request, code, number):
    """Owners: the round's examples filtered by flags, disagreement and state, with decisions."""
    task = _task(code)
    if (refused := _owner_only(request, task)) is not None:
        return refused
    round = _round(task, number)
    filters = OwnerQueueFilter(request.GET or None)
    options = filters.cleaned_data if filters.is_valid() else {}
    min_flags, disagreement, state = options.get("min_flags") or 0, options.get("disagreement", False), options.get("state") or None
    examples = queue_selectors.owner_queue(round, min_flags=min_flags, disagreement=disagreement, state=state).prefetch_related(
        "validations__validator"
    )
    known = queue_selectors.owner_queue_size(round, min_flags=min_flags, disagreement=disagreement, state=state)
    page = KnownCountPaginator(examples, 25, count=known).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "validation/owner_queue.html", {
        "task": task, "round": round, "filters": filters, "page": page, "query": query.urlencode(),
        "media_exports": _media_exports(task),
    })


@login_required
@require_POST
def owner_decide(request, code, number, example_id):
    """Owners: decide on one example in owner mode; answer with its updated row."""
    task = _task(code)
    if (refused := _owner_only(request, task)) is not None:
        return refused
    round = _round(task, number)
    example = get_object_or_404(Example, pk=example_id, round=round)
    form = ValidationForm(request.POST)
    error, status = None, 200
    if not form.is_valid():
        error, status = form.first_error(), 400
    else:
        try:
            services.record_validation(
                example=example, validator=request.user, label=form.cleaned_data["label"], mode="owner",
                metadata=form.metadata(), expected_state=form.cleaned_data.get("expected_state") or None,
            )
        except RuleError as exc:
            error, status = exc.message, exc.status_code
    example = queue_selectors.owner_queue(round).prefetch_related("validations__validator").get(pk=example.pk)
    if not request.htmx:
        if error:
            messages.error(request, error)
        return redirect("validation:owner_queue", code=task.code, number=round.number)
    return render(request, "validation/_owner_row.html", {"task": task, "round": round, "e": example, "error": error}, status=status)


@login_required
def close_round_view(request, code, number):
    """Owners: preview closing the round (GET, or POST without ``confirm``: validated examples per
    split, datasets written, models re-scored, problems), then close it (POST with ``confirm``)."""
    task = _task(code)
    if (refused := _owner_only(request, task)) is not None:
        return refused
    round = _round(task, number)
    form = CloseRoundForm(request.POST or None)
    status, ratios, seed, merge_small = 200, None, None, False
    if request.method == "POST":
        if not form.is_valid():
            return _close_page(request, round, form, None, 400, "Split ratios must be numbers between 0 and 1; the seed a whole number.")
        ratios, seed, merge_small = form.ratios(), form.cleaned_data.get("seed"), form.cleaned_data.get("merge_small", False)
    try:
        preview = round_close.preview_round_close(round, ratios=ratios, seed=seed, merge_small=merge_small)
    except RuleError as exc:
        return _close_page(request, round, form, None, exc.status_code, exc.message)
    if request.method == "POST" and form.cleaned_data.get("confirm") and request.POST.get("action") != "preview":
        try:
            datasets = round_close.close_round(
                round=round, acting_user=request.user, ratios=ratios, seed=seed,
                open_next=form.cleaned_data.get("open_next", False), next_loop=form.cleaned_data.get("next_loop") or "current",
                merge_small=merge_small,
            )
        except RuleError as exc:
            return _close_page(request, round, form, preview, exc.status_code, exc.message)
        summary = ", ".join(f"{d.name} ({d.items.count()})" for d in datasets)
        messages.success(request, f"{round} is closed. Datasets: {summary}. Every model is being scored on them.")
        return redirect("validation:round", code=task.code, number=round.number)
    if request.method == "POST":
        status = 200 if preview.can_close else 400
    return _close_page(request, round, form, preview, status, "")


def _close_page(request, round, form, preview, status, error):
    return render(request, "validation/close_round.html", {
        "task": round.task, "round": round, "form": form, "preview": preview, "error": error,
    }, status=status)


EXPORT_VIEWS = {"all": False, "deduplicated": True}
"""The export's ``?view=``: every example, or the deduplicated view (``export.deduplicated``)."""


def _export_view(request) -> bool | None:
    """Whether ``?view=`` asks for the deduplicated view; None when it names no view."""
    return EXPORT_VIEWS.get(request.GET.get("view") or "all")


def jsonl_response(request, rounds, filename):
    """Stream the examples of ``rounds`` as UTF-8 JSON Lines (``export.export_lines``) as a download, in
    id order; ``?after=<id>`` resumes after the last example id received; ``?view=deduplicated`` keeps one
    example per near-duplicate group (``export.deduplicated``), the file name ending ``-deduplicated.jsonl``.
    A bad ``after`` or ``view`` answers 400 naming it."""
    after = request.GET.get("after", "")
    if after and not (after.isascii() and after.isdigit() and len(after) <= 19):
        return HttpResponseBadRequest("after must be the id of the last example you received (a whole number), e.g. ?after=1200.")
    if (dedup := _export_view(request)) is None:
        return HttpResponseBadRequest("view must be all (every example) or deduplicated (one example per near-duplicate group).")
    if dedup:
        filename = filename.removesuffix(".jsonl") + "-deduplicated.jsonl"
    response = StreamingHttpResponse(
        export.export_lines(rounds, after=int(after or 0), deduplicated=dedup), content_type="application/jsonl; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
def export_round(request, code, number):
    """Owners: the round's examples with their validations, anonymised, streamed (``jsonl_response``)."""
    task = _task(code)
    if (refused := _owner_only(request, task)) is not None:
        return refused
    round = _round(task, number)
    return jsonl_response(request, [round], f"{task.code}-r{round.number}.jsonl")


@login_required
def round_croissant(request, code, number):
    """Owners: the Croissant JSON-LD of the round's export (``validation.croissant``), to save beside the export;
    ``?view=deduplicated`` describes the deduplicated view's file."""
    task = _task(code)
    if (refused := _owner_only(request, task)) is not None:
        return refused
    round = _round(task, number)
    if (dedup := _export_view(request)) is None:
        return HttpResponseBadRequest("view must be all (every example) or deduplicated (one example per near-duplicate group).")
    export_url = request.build_absolute_uri(reverse("validation:export_round", args=[task.code, round.number]))
    body = round_export_croissant(
        round, export_url=export_url + ("?view=deduplicated" if dedup else ""), deduplicated=dedup,
        page_url=request.build_absolute_uri(reverse("validation:round", args=[task.code, round.number])),
        license=dataset_license_of_task(task),
    )
    return croissant_response(body, f"{task.code}-r{round.number}{'-deduplicated' if dedup else ''}.croissant.json")


def croissant_response(body: dict, filename: str) -> JsonResponse:
    """A Croissant JSON-LD ``body`` as an ``application/ld+json`` attachment named ``filename``."""
    response = JsonResponse(body, content_type="application/ld+json", json_dumps_params={"ensure_ascii": False, "indent": 1})
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
def export_judgments(request, code, layout):
    """Owners: the task's validated judgments of generative answers in a training layout
    (``validation/judgment_export.py``: ``messages`` or ``preferences``), streamed as JSONL."""
    task = _task(code)
    if (refused := _owner_only(request, task)) is not None:
        return refused
    if layout not in LAYOUTS or not task.spec.conversational:
        raise Http404("No such export.")
    response = StreamingHttpResponse(judgment_lines(task, layout=layout), content_type="application/jsonl; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{task.code}-{layout}.jsonl"'
    return response


@login_required
def export_task(request, code):
    """Owners: every round's examples of the task, streamed (``jsonl_response``)."""
    task = _task(code)
    if (refused := _owner_only(request, task)) is not None:
        return refused
    return jsonl_response(request, task.rounds.order_by("number"), f"{task.code}.jsonl")
