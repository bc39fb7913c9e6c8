"""Validation pages: the review queue, the owner queue, the round page, a user's page, exports.

Views parse input and render; every change goes through ``validation/services.py``.
"""

import json

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponseForbidden, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation.models import Example
from annotation.selectors import counts_by_author, round_counts, user_counts
from dynabench.errors import RuleError
from dynabench.roles import has_role
from tasks.models import Round, Task
from validation import selectors, services
from validation.forms import CloseRoundForm, OwnerQueueFilter, ValidationForm

SKIPPED_KEY = "validation_skipped"


def _task(code):
    return get_object_or_404(Task, code=code)


def _round(task, number):
    return get_object_or_404(Round, task=task, number=number)


def _queue_round(request, task):
    number = request.GET.get("round") or request.POST.get("round")
    if number and str(number).isdigit():
        return _round(task, int(number))
    round = task.current_round()
    if round is None:
        raise Http404("This task has no rounds yet.")
    return round


def _skipped(request, round) -> list[int]:
    return request.session.get(SKIPPED_KEY, {}).get(str(round.pk), [])


def _review_context(request, task, round, *, example=None, error=None, notice=None, form=None, current=False):
    if example is None:
        pick = services.current_example_for if current else services.next_example_for
        example = pick(validator=request.user, round=round, exclude_ids=_skipped(request, round))
    return {
        "task": task,
        "round": round,
        "example": example,
        "passage": services.passage_of(example) if example is not None and task.kind == "extractive_qa" else None,
        "error": error,
        "notice": notice,
        "form": form,
        "skipped": len(_skipped(request, round)),
    }


def _may_validate(user, task) -> bool:
    return task.is_owner(user) or has_role(user, "validator")


@login_required
def review_queue(request, code):
    """GET: the next example of the task's current round (``?round=N`` for another), leased to you."""
    task = _task(code)
    if not _may_validate(request.user, task):
        return render(request, "validation/forbidden.html", {"task": task,
                      "message": "You need the validator role to validate examples; ask a task owner."}, status=403)
    round = _queue_round(request, task)
    return render(request, "validation/review.html", _review_context(request, task, round, current=True))


@login_required
@require_POST
def submit_validation(request, code, example_id):
    """POST a verdict on one example; answer with the next example (or the same one and the error, 400)."""
    task = _task(code)
    example = get_object_or_404(Example.objects.select_related("round"), pk=example_id, round__task=task)
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
        )
    except RuleError as exc:
        example.refresh_from_db()
        stale = exc.code in {"stale_form", "already_settled", "retracted", "already_validated", "own_example"}
        ctx = _review_context(request, task, example.round, example=None if stale else example, error=exc.message, form=form)
        return render(request, template, ctx, status=exc.status_code)
    notice = f"Saved: {validation.label} on example {example.pk}."
    return render(request, template, _review_context(request, task, example.round, notice=notice))


@login_required
@require_POST
def skip_example(request, code, example_id):
    """POST: give the example back to the queue and leave it out for you this session."""
    task = _task(code)
    example = get_object_or_404(Example.objects.select_related("round"), pk=example_id, round__task=task)
    services.release_lease(example=example, validator=request.user)
    skipped = request.session.get(SKIPPED_KEY, {})
    skipped.setdefault(str(example.round_id), [])
    if example.pk not in skipped[str(example.round_id)]:
        skipped[str(example.round_id)].append(example.pk)
    request.session[SKIPPED_KEY] = skipped
    template = "validation/_review_card.html" if request.htmx else "validation/review.html"
    return render(request, template, _review_context(request, task, example.round, notice=f"Skipped example {example.pk}."))


def round_page(request, code, number):
    """The round: counts, vMER, validation states, agreement, the per-annotator table."""
    task = _task(code)
    round = _round(task, number)
    authors = counts_by_author(round)
    users = get_user_model().objects.in_bulk([a for a, _ in authors])
    ctx = {
        "task": task,
        "round": round,
        "counts": round_counts(round),
        "states": selectors.state_counts(round),
        "agreement": selectors.round_agreement(round),
        "voted_agreement": selectors.round_agreement(round, field="voted_label") if selectors.has_voted_labels(round) else None,
        "annotators": [(users.get(a), c) for a, c in authors[:200]],
        "more_annotators": max(0, len(authors) - 200),
        "is_owner": task.is_owner(request.user),
        "datasets": round.datasets.order_by("name"),
        "close_form": CloseRoundForm(),
    }
    return render(request, "validation/round.html", ctx)


@login_required
def user_page(request, username):
    """A user's vMER per round and their record as a validator (the user, owners and admins)."""
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
    }
    return render(request, "validation/user.html", ctx)


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
    examples = selectors.owner_queue(
        round, min_flags=options.get("min_flags") or 0, disagreement=options.get("disagreement", False), state=options.get("state") or None
    ).prefetch_related("validations__validator")
    page = Paginator(examples, 25).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "validation/owner_queue.html", {
        "task": task, "round": round, "filters": filters, "page": page, "query": query.urlencode(),
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
    example = selectors.owner_queue(round).prefetch_related("validations__validator").get(pk=example.pk)
    if not request.htmx:
        if error:
            messages.error(request, error)
        return redirect("validation:owner_queue", code=task.code, number=round.number)
    return render(request, "validation/_owner_row.html", {"task": task, "round": round, "e": example, "error": error}, status=status)


@login_required
@require_POST
def close_round_view(request, code, number):
    """Owners: close the round and build its train/dev/test datasets."""
    task = _task(code)
    round = _round(task, number)
    form = CloseRoundForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Split ratios must be numbers between 0 and 1; the seed a whole number.")
        return redirect("validation:round", code=task.code, number=round.number)
    try:
        datasets = services.close_round(round=round, acting_user=request.user, ratios=form.ratios(), seed=form.cleaned_data.get("seed"))
    except RuleError as exc:
        messages.error(request, exc.message)
        return redirect("validation:round", code=task.code, number=round.number)
    summary = ", ".join(f"{d.name} ({d.items.count()})" for d in datasets)
    messages.success(request, f"{round} is closed. Datasets: {summary}.")
    return redirect("validation:round", code=task.code, number=round.number)


def jsonl_response(examples, filename) -> StreamingHttpResponse:
    """Stream ``examples`` as UTF-8 JSON Lines (``selectors.export_rows``) as a download."""
    lines = (json.dumps(row, ensure_ascii=False) + "\n" for row in selectors.export_rows(examples))
    response = StreamingHttpResponse((line.encode("utf-8") for line in lines), content_type="application/jsonl; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
def export_round(request, code, number):
    task = _task(code)
    if (refused := _owner_only(request, task)) is not None:
        return refused
    round = _round(task, number)
    return jsonl_response(Example.objects.filter(round=round), f"{task.code}-r{round.number}.jsonl")


@login_required
def export_task(request, code):
    task = _task(code)
    if (refused := _owner_only(request, task)) is not None:
        return refused
    return jsonl_response(Example.objects.filter(round__task=task), f"{task.code}.jsonl")
