"""The task owner's console: HTMX pages under ``/tasks/<code>/console/`` to run a campaign from
the browser (settings, rounds, uploads, people, the round dashboard). The console is its own app,
above every app whose records it edits (as Django's admin is), so it may call any of them.

Every page is for the task's owners (and admins) only: anyone else gets 403, checked on the
server for every URL. Views parse and render; the rules are in the services and selectors
they call (``tasks.services``, ``tasks.access``, ``tasks.data.uploads``, ``validation.round_close``,
``console.selectors`` for its own read models), the same functions the REST API and the admin use.
"""

from functools import wraps

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation.models import Example
from annotation.selectors import counts_by_round, validation_status
from console import ai_selectors, plots, selectors
from console.forms import (
    BanForm,
    DefinitionForm,
    EndpointModelForm,
    LoopModelForm,
    MappingForm,
    OpenRoundForm,
    PeopleSearchForm,
    RoleForm,
    TaskSettingsForm,
    UploadForm,
)
from dynabench.errors import FieldErrors, RuleError
from dynabench.params import whole_number
from tasks import access
from tasks.loop.endpoints.budget import round_usage
from tasks.loop.endpoints.records import create_endpoint_model
from tasks.data import uploads
from tasks import services as task_services
from tasks.data.seed import create_task_from_definition
from tasks.models import MLModel, Round, Task, Upload
from leaderboard.selectors import board_standings
from tasks.selectors import model_name_taken
from validation import image_judgments, round_close, transfer_selectors
from validation.forms import CloseRoundForm
from validation.judge_selectors import has_judge, judge_report

def owner_console(view):
    """Log-in required; the task named by ``code`` must be owned by the user (or they are an
    admin), else 403. The view gets the ``Task`` instead of its code."""

    @wraps(view)
    @login_required
    def wrapper(request, code, *args, **kwargs):
        task = get_object_or_404(Task, code=code)
        if not task.is_owner(request.user):
            return render(
                request, "validation/forbidden.html",
                {"task": task, "message": f"Only owners of task '{task.code}' can open its console."}, status=403,
            )
        return view(request, task, *args, **kwargs)

    return wrapper


def _page(request, task, template, section, status=200, **data):
    return render(request, f"console/{template}", {"task": task, "section": section, **data}, status=status)


@login_required
def console_home(request):
    """The tasks whose console the user may open: the ones they own (every task for admins)."""
    tasks = Task.objects.all() if request.user.is_superuser else request.user.owned_tasks.all()
    tasks = list(tasks.order_by("code"))
    current = {t.pk: t.current_round() for t in tasks}
    counts = counts_by_round([r for r in current.values() if r is not None])
    rows = [(t, current[t.pk], counts.get(current[t.pk].pk) if current[t.pk] else None) for t in tasks]
    return render(request, "console/home.html", {"rows": rows, "can_create": request.user.has_perm("tasks.add_task")})


@login_required
def create_task(request):
    """GET: the form for a task definition file. POST: create the task from it and make the user
    its owner (``tasks.data.seed.create_task_from_definition``), then open its console's rounds page,
    where the owner puts a model in round 1's loop. Only for people who may add tasks (403)."""
    if not request.user.has_perm("tasks.add_task"):
        return render(request, "console/create_task.html", {"forbidden": True}, status=403)
    form = DefinitionForm(request.POST or None, request.FILES or None)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                task = create_task_from_definition(definition=form.cleaned_data["definition"], acting_user=request.user)
            except RuleError as refused:
                form.add_error("definition", refused.message)
                status = refused.status_code
            else:
                round1 = task.current_round()
                contexts = round1.contexts.count() if round1 else 0
                messages.success(request, f"Task {task.code} created"
                                 + (f" with round 1 open and {contexts} context(s): put a model in its loop below." if round1 else "."))
                return redirect("console:rounds", code=task.code)
    return render(request, "console/create_task.html", {"form": form}, status=status)


# --- settings ---------------------------------------------------------------------------------


@owner_console
def settings_page(request, task):
    """GET: the task's settings form. POST: save through ``tasks.services.update_task_settings``;
    field errors (400) and a stale form (409) keep what the owner typed."""
    has_labels = task.spec.has_labels
    if request.method != "POST":
        form = TaskSettingsForm(initial=TaskSettingsForm.initial_from(task_services.task_settings(task)), has_labels=has_labels)
        return _page(request, task, "settings.html", "settings", form=form)
    form = TaskSettingsForm(request.POST, has_labels=has_labels)
    status = 400
    if form.is_valid():
        try:
            task_services.update_task_settings(task=task, acting_user=request.user, version=form.cleaned_data["version"], **form.changes())
        except FieldErrors as refused:
            form.add_field_errors(refused)
        except RuleError as refused:
            form.add_error(None, refused.message)
            status = refused.status_code
        else:
            messages.success(request, "Settings saved.")
            return redirect("console:settings", code=task.code)
    return _page(request, task, "settings.html", "settings", form=form, status=status)


@owner_console
@require_POST
def settings_preview(request, task):
    """The instructions as annotators will see them (Markdown, cleaned), for the live preview."""
    return render(request, "console/_preview.html", {"text": request.POST.get("instructions", "")})


# --- rounds -----------------------------------------------------------------------------------


def _with_endpoint_usage(rounds) -> list[Round]:
    """The rounds, each open one carrying ``endpoint_use`` (``tasks.loop.endpoints.budget.round_usage``: calls and
    tokens of endpoint models against the round's budget)."""
    rounds = list(rounds)
    for round in rounds:
        round.endpoint_use = round_usage(round) if round.status == Round.Status.OPEN else {}
    return rounds


def _rounds_page(request, task, form=None, status=200, loop_error=None, endpoint_form=None):
    rounds = _with_endpoint_usage(task.rounds.order_by("-number").prefetch_related("target_models"))
    counts = counts_by_round(rounds)
    open_rounds = [r for r in rounds if r.status == Round.Status.OPEN]
    candidates = LoopModelForm(task=task).fields["model"].queryset
    return _page(
        request, task, "rounds.html", "rounds", status=status, rounds=[(r, counts[r.pk]) for r in rounds],
        form=form or OpenRoundForm(task=task), open_round=open_rounds[-1] if open_rounds else None,
        loops=[(r, task_services.round_gaps(r), candidates.exclude(pk__in=[m.pk for m in r.target_models.all()])) for r in open_rounds],
        loop_error=loop_error, next_number=(rounds[0].number + 1) if rounds else 1,
        endpoint_form=endpoint_form or EndpointModelForm(task=task),
        endpoint_models=task.models.filter(kind=MLModel.Kind.ENDPOINT).select_related("endpoint").order_by("-created_at"),
        standings=board_standings(task),
    )


@owner_console
def rounds_page(request, task):
    """Every round with its counts, vMER, models in the loop and rule; what an open round still
    lacks (``tasks.services.round_gaps``); add or take out models in an open round's loop; open
    the next round."""
    return _rounds_page(request, task)


@owner_console
@require_POST
def add_endpoint(request, task):
    """Add a model behind an OpenAI-compatible endpoint to the task (``tasks.loop.endpoints.records.create_endpoint_model``);
    it can then be put in the loop of the next round. Refusals (a URL off the allow-list, ...) show on the form."""
    form = EndpointModelForm(request.POST, task=task)
    status = 400
    if form.is_valid() and model_name_taken(task, form.cleaned_data["name"]):
        form.add_error("name", f"{task.name} already has a model named '{form.cleaned_data['name']}': choose another name.")
    if form.is_valid():
        try:
            model = create_endpoint_model(task=task, owner=request.user, **form.arguments())
        except RuleError as refused:
            form.add_error(refused.field if refused.field in form.fields else None, refused.message)
            status = refused.status_code
        else:
            shown = ("It is published: the leaderboard lists it once it is evaluated (and the arena, for a chat task)." if model.published else
                     "It is not published: it is on no public board (leaderboard, arena) until you publish it on its page.")
            where = ("add it to the open round's loop under Models in the loop, or tick it when you open the next round"
                     if task.rounds.filter(status=Round.Status.OPEN).exists() else "tick it when you open the next round to put it in the loop")
            messages.success(request, f"Endpoint model '{model.name}' added: {where}. {shown}")
            return redirect("console:rounds", code=task.code)
    return _rounds_page(request, task, status=status, endpoint_form=form)


@owner_console
@require_POST
def open_round(request, task):
    """Open the next round with the chosen models in the loop (``tasks.services.open_round``): at
    least one model (or the kind's "collect without a model"), and contexts carried over from an
    earlier round or uploaded afterwards."""
    form = OpenRoundForm(request.POST, task=task)
    if form.is_valid():
        try:
            new_round = task_services.open_round(
                task=task, acting_user=request.user, target_model_ids=[m.pk for m in form.cleaned_data["target_models"]],
                loop_rule=form.cleaned_data["loop_rule"], endpoint_call_budget=form.cleaned_data.get("endpoint_call_budget"),
                endpoint_token_budget=form.cleaned_data.get("endpoint_token_budget"),
                without_model=form.cleaned_data.get("without_model", False), contexts_from=form.cleaned_data.get("contexts_from"),
            )
        except RuleError as refused:
            field = refused.field if refused.field in ("target_models", "contexts_from") else None
            form.add_error(field, refused.message)
        else:
            gaps = task_services.round_gaps(new_round)
            message = f"Round {new_round.number} is open with {new_round.target_models.count()} model(s) in the loop."
            message += f" {new_round.contexts.count()} context(s) ready." if not gaps else " It still lacks: " + " ".join(gaps)
            (messages.success if not gaps else messages.warning)(request, message)
            return redirect("console:rounds", code=task.code)
    return _rounds_page(request, task, form=form, status=400)


@owner_console
@require_POST
def change_loop(request, task, number, action):
    """Add a model to (``action`` = ``add``) or take one out of (``remove``) the loop of the open
    round ``number`` (``tasks.services.add_loop_model`` / ``remove_loop_model``); any other action is a 404."""
    if action not in ("add", "remove"):
        raise Http404("No such loop action.")
    round = get_object_or_404(Round, task=task, number=number)
    form = LoopModelForm(request.POST, task=task)
    if not form.is_valid():
        return _rounds_page(request, task, status=400, loop_error="Choose one of this task's model directories or endpoint models.")
    change = task_services.add_loop_model if action == "add" else task_services.remove_loop_model
    try:
        change(round=round, model_id=form.cleaned_data["model"].pk, acting_user=request.user)
    except RuleError as refused:
        return _rounds_page(request, task, status=refused.status_code, loop_error=refused.message)
    verb = "is now in" if action == "add" else "left"
    messages.success(request, f"{form.cleaned_data['model'].name} {verb} the loop of round {round.number}.")
    return redirect("console:rounds", code=task.code)


@owner_console
def close_round(request, task, number):
    """GET, or POST without the confirmation box (or with "Update the preview"): what closing the
    round will do at the ratios, seed and merge choice typed (``validation.round_close.preview_round_close``:
    validated examples, split sizes after any merge, datasets written, models re-scored, warnings,
    what refuses it). POST with the confirmation: close it (``validation.round_close.close_round``).
    The preview and form are the round page's own (``validation/_close_preview.html``, ``_close_form.html``)."""
    round = get_object_or_404(Round, task=task, number=number)
    form = CloseRoundForm(request.POST or None)
    status, error, ratios, seed, merge_small = 200, "", None, None, False
    if request.method == "POST":
        if not form.is_valid():
            status, error = 400, "Split ratios must be numbers between 0 and 1; the seed a whole number."
        else:
            ratios, seed, merge_small = form.ratios(), form.cleaned_data.get("seed"), form.cleaned_data.get("merge_small", False)
    try:
        preview = round_close.preview_round_close(round, ratios=ratios, seed=seed, merge_small=merge_small)
    except RuleError as refused:  # ratios that do not sum to 1
        preview, status, error = round_close.preview_round_close(round), refused.status_code, refused.message
    confirmed = request.method == "POST" and form.is_valid() and form.cleaned_data.get("confirm") and request.POST.get("action") != "preview"
    if confirmed and not error:
        try:
            datasets = round_close.close_round(
                round=round, acting_user=request.user, ratios=ratios, seed=seed, merge_small=merge_small,
                open_next=form.cleaned_data.get("open_next", False), next_loop=form.cleaned_data.get("next_loop") or "current",
            )
        except RuleError as refused:
            status, error = refused.status_code, refused.message
        else:
            summary = ", ".join(f"{d.name} ({d.items.count()})" for d in datasets)
            messages.success(request, f"Round {round.number} is closed. Datasets: {summary}.")
            return redirect("console:rounds", code=task.code)
    elif request.method == "POST" and not error and not preview.can_close:
        status = 400
    return _page(request, task, "close_round.html", "rounds", status=status, round=round, form=form, preview=preview, error=error)


# --- uploads ----------------------------------------------------------------------------------


@owner_console
def uploads_page(request, task):
    """GET: the upload form and the task's recent uploads. POST: keep the file
    (``tasks.data.uploads.store_upload``) and go on to its column mapping."""
    form = UploadForm(request.POST or None, request.FILES or None, task=task)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                upload = uploads.store_upload(
                    task=task, acting_user=request.user, file=form.cleaned_data.get("file"),
                    target=form.cleaned_data["target"], options=form.options(),
                )
            except FieldErrors as refused:
                form.add_field_errors(refused)
                status = 413 if refused.code == "upload_too_large" else 400
            else:
                return redirect("console:upload", code=task.code, upload_id=upload.pk)
    recent = task.uploads.select_related("uploaded_by")[:20]
    return _page(request, task, "uploads.html", "uploads", status=status, form=form, recent=recent)


def _upload_data(upload):
    return {"upload": upload, "progress": round(uploads.upload_progress(upload) * 100), "more_errors": max(0, upload.error_count - len(upload.errors))}


@owner_console
def upload_detail(request, task, upload_id):
    """GET: the mapping step (a column for each task field, with a preview of the first rows), or
    the import's progress and outcome. POST: import with the mapping (``start_import``): an import
    that succeeded redirects to this page; one the file's rows refused answers 400 with the
    line-numbered problems and the mapping again; one handed to the RQ job answers 202 with the
    progress bar, which polls ``upload_status`` until it shows the outcome."""
    upload = get_object_or_404(Upload, pk=upload_id, task=task)
    waiting = upload.status in (Upload.Status.MAPPING, Upload.Status.FAILED)
    form = MappingForm(request.POST or None, upload=upload) if waiting else None
    status = 200
    if request.method == "POST" and form is not None:
        status = 400
        if form.is_valid():
            try:
                upload = uploads.start_import(upload=upload, acting_user=request.user, mapping=form.mapping())
            except FieldErrors as refused:
                form.add_field_errors(refused)
            except RuleError as refused:
                form.add_error(None, refused.message)
                status = refused.status_code
            else:
                if upload.status == Upload.Status.DONE:
                    return redirect("console:upload", code=task.code, upload_id=upload.pk)
                if upload.status != Upload.Status.FAILED:  # queued: the job has it (a failure keeps the 400 and the form)
                    status, form = 202, None
    waiting = upload.status in (Upload.Status.MAPPING, Upload.Status.FAILED)
    preview_mapping = form.mapping() if form is not None and form.is_bound and form.is_valid() else None
    return _page(
        request, task, "upload.html", "uploads", status=status, form=form,
        preview=uploads.preview_rows(upload, preview_mapping) if waiting else [],
        fields=[name for name, _, _ in uploads.upload_fields(upload)], **_upload_data(upload),
    )


@owner_console
def upload_preview(request, task, upload_id):
    """The first rows of the file through the mapping being chosen (the selects ask on change)."""
    upload = get_object_or_404(Upload, pk=upload_id, task=task)
    form = MappingForm(request.GET, upload=upload)
    mapping = form.mapping() if form.is_valid() else None
    return render(request, "console/_mapping_preview.html", {
        "preview": uploads.preview_rows(upload, mapping), "fields": [name for name, _, _ in uploads.upload_fields(upload)],
    })


@owner_console
def upload_status(request, task, upload_id):
    """The progress bar and outcome of an upload (polled by the page while it runs)."""
    upload = get_object_or_404(Upload, pk=upload_id, task=task)
    return render(request, "console/_upload_status.html", {"task": task, **_upload_data(upload)})


# --- people -----------------------------------------------------------------------------------


def _people_data(task, query):
    people = selectors.task_people(task, query=query)
    ids = [p.pk for p in people]
    stats = selectors.people_stats(task, ids)
    roles = access.task_roles_of(task, ids)
    banned = set(task.bans.filter(user_id__in=ids).values_list("user_id", flat=True))
    return [(p, stats[p.pk], roles[p.pk], p.pk in banned) for p in people]


@owner_console
def people_page(request, task):
    """Search users; each person's roles on the task, examples, fooling rate, vMER, validation
    accuracy against the consensus and last activity; grant, revoke, ban."""
    search = PeopleSearchForm(request.GET or None)
    query = search.cleaned_data["q"].strip() if search.is_valid() else ""
    return _page(request, task, "people.html", "people", search=search, query=query, people=_people_data(task, query),
                 roles=access.TASK_ROLES)


def _people_answer(request, task, error=None, notice=None, status=200):
    query = request.POST.get("q", "").strip()[:150]
    if request.htmx:
        return render(request, "console/_people_table.html", {
            "task": task, "people": _people_data(task, query), "roles": access.TASK_ROLES, "query": query,
            "error": error, "notice": notice,
        }, status=status)
    if error:
        messages.error(request, error)
    elif notice:
        messages.success(request, notice)
    url = f"{request.path.rsplit('/', 2)[0]}/"
    return redirect(f"{url}?q={query}" if query else url)


@owner_console
@require_POST
def change_role(request, task, action):
    """Grant (``action`` = ``grant``) or revoke (``revoke``) a role of a user on the task; any
    other action is a 404 (never a revoke by default)."""
    if action not in ("grant", "revoke"):
        raise Http404("No such role action.")
    form = RoleForm(request.POST)
    if not form.is_valid():
        return _people_answer(request, task, error="Choose a user and a role.", status=400)
    person = get_object_or_404(get_user_model(), pk=form.cleaned_data["user"])
    role = form.cleaned_data["role"]
    try:
        if action == "grant":
            changed = access.grant_role(task=task, user=person, role=role, acting_user=request.user)
            notice = f"{person.username} is now {role} on {task.code}." if changed else f"{person.username} was already {role}."
        elif action == "revoke":
            changed = access.revoke_role(task=task, user=person, role=role, acting_user=request.user)
            notice = f"{person.username} is no longer {role} on {task.code}." if changed else f"{person.username} had no {role} grant here."
    except RuleError as refused:
        return _people_answer(request, task, error=refused.message, status=refused.status_code)
    return _people_answer(request, task, notice=notice)


@owner_console
@require_POST
def ban(request, task, action):
    """Ban a user from the task (``action`` = ``ban``) or lift the ban (``lift``); any other action
    is a 404 (never a lift by default)."""
    if action not in ("ban", "lift"):
        raise Http404("No such ban action.")
    form = BanForm(request.POST)
    if not form.is_valid():
        return _people_answer(request, task, error="Choose a user; a reason has at most 500 characters.", status=400)
    person = get_object_or_404(get_user_model(), pk=form.cleaned_data["user"])
    try:
        if action == "ban":
            access.ban_user(task=task, user=person, acting_user=request.user, reason=form.cleaned_data.get("reason", ""))
            notice = f"{person.username} is banned from {task.code}; their pending examples left the queue."
        elif action == "lift":
            access.lift_ban(task=task, user=person, acting_user=request.user)
            notice = f"{person.username}'s ban on {task.code} is lifted."
    except RuleError as refused:
        return _people_answer(request, task, error=refused.message, status=refused.status_code)
    return _people_answer(request, task, notice=notice)


@owner_console
def person_page(request, task, username):
    """One person's examples on the task (newest first) with each outcome, and their record. A
    username no account can have (a NUL character, which PostgreSQL refuses in a query) is a 404."""
    if "\x00" in username:
        raise Http404("No such person.")
    person = get_object_or_404(get_user_model(), username=username)
    examples = Example.objects.filter(round__task=task, author=person).select_related("round__task", "model").order_by("-created_at")
    page = Paginator(examples, 25).get_page(request.GET.get("page"))
    for example in page:  # the author's own words for each state (annotation.selectors.validation_status)
        example.status = validation_status(example)
    return _page(request, task, "person.html", "people", person=person, page=page, arms=ai_selectors.ab_arms_of(task, person),
                 stats=selectors.people_stats(task, [person.pk])[person.pk], roles=access.task_roles_of(task, [person.pk])[person.pk])


# --- the round dashboard ----------------------------------------------------------------------


@owner_console
def dashboard(request, task, number=None):
    """The round dashboard (``console.selectors.round_dashboard``) with its plots and, for a kind that
    measures it, the transfer of its validated examples to the task's other models
    (``validation.transfer_selectors.round_transfer``); the current round unless ``number`` is given."""
    round = get_object_or_404(Round, task=task, number=number) if number is not None else task.current_round()
    if round is None:
        return _page(request, task, "dashboard.html", "dashboard", round=None)
    board = selectors.round_dashboard(round)
    counts = board.stats.counts
    hours = [b.hour.strftime("%d %H:00") for b in board.per_hour]
    per_hour_svg = plots.bar_chart_svg(list(zip(hours, [b.collected for b in board.per_hour])), label="Examples per hour")
    vmer_series = [{"name": "all models", "points": list(zip(hours, [b.cumulative_vmer for b in board.per_hour]))}]
    vmer_series += [{"name": s["name"], "points": list(zip(hours, [v for _, v in s["points"]]))} for s in board.vmer_over_time_by_model]
    vmer_svg = plots.line_chart_svg(vmer_series, label="vMER over time, per model in the loop")
    transfer = transfer_svg = None
    if task.spec.measures_transfer:  # validated examples put to the task's other models (validation/transfer.py)
        transfer = transfer_selectors.round_transfer(round)
        transfer_svg = plots.bar_chart_svg(transfer.buckets, label="Validated examples by the share of other models they fool")
    unsafe = None
    if task.spec.generates_images:  # validated unsafe rate per generator and harm category (validation/image_judgments.py)
        unsafe = image_judgments.unsafe_rates(task, round=round, generator=whole_number(request.GET.get("generator") or "", minimum=1))
    return _page(request, task, "dashboard.html", "dashboard", round=round, board=board, counts=counts,
                 per_hour_svg=per_hour_svg, vmer_svg=vmer_svg, rounds=task.rounds.order_by("-number"),
                 endpoint_use=round_usage(round), unsafe=unsafe, transfer=transfer, transfer_svg=transfer_svg,
                 assisted=ai_selectors.assist_comparison(round), generated=ai_selectors.generated_comparison(round),
                 judge=judge_report(round) if has_judge(round) else None)
