"""The annotator's pages: the task list and a task's page (rounds with their counts and vMER),
write an example, see the model's answer, explain, retract, flag.

Views parse the request and render; every rule is in annotation's service modules
(``annotation/services.py`` and the modules it calls, ``annotation/sandbox.py``). HTMX
requests get fragments; a refused action answers with a 4xx status and the fragment
showing the message next to the field at fault (``templates/annotation/_htmx_config.html``
tells htmx to swap 4xx answers). Without JavaScript the same views render whole pages.
"""

from functools import wraps
from urllib.parse import urlencode

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.paginator import Paginator
from django.db.models import prefetch_related_objects
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render, resolve_url
from django.urls import reverse
from django.utils.html import escape
from django.views.decorators.http import require_GET, require_POST

from annotation import assist, content_warning, contexts, crowd, limits, loop_choice, qualification, services
from annotation.diversity import rules as diversity_rules
from annotation.forms import ExampleForm, ExplanationForm, FlagForm, SandboxForm, context_token
from annotation.models import Example
from annotation.sandbox import atry_model, sandbox_allowance
from annotation.selectors import counts_by_round, user_counts, validation_status
from dynabench import idempotency
from dynabench.errors import RuleError
from dynabench.params import whole_number
from dynabench.proxies import client_ip
from dynabench.roles import has_role
from tasks import access
from tasks.data.audio import audio_context_fields
from tasks.data.images import image_context_fields
from tasks.models import Task
from tasks.selectors import collecting_task, example_labels_hidden, owned_task_ids

PAGE_SIZE = 25


# --- task pages (counts from ``annotation/selectors.py``: one grouped query for all rounds shown)


def task_list(request):
    """Active tasks, each with its current round, examples collected and vMER."""
    tasks = list(Task.objects.filter(active=True))
    current = {task.pk: task.current_round() for task in tasks}
    # Models in the loop, for "model in training" while the default models train (one query).
    prefetch_related_objects([r for r in current.values() if r is not None], "target_models")
    counts = counts_by_round([r for r in current.values() if r is not None])
    rows = [(task, current[task.pk], counts.get(current[task.pk].pk) if current[task.pk] else None) for task in tasks]
    return render(request, "tasks/task_list.html", {"rows": rows, "cannot_write": _cannot_write(request.user, tasks)})


def _cannot_write(user, tasks) -> set[int]:
    """The ids of ``tasks`` whose examples ``user`` may not write (``qualification.writing_standing``): none
    for a visitor (the button leads to the log-in page); for a member of the site-wide annotator group, the
    tasks they are banned from (one query); else asked task by task."""
    if not user.is_authenticated:
        return set()
    if has_role(user, "annotator"):
        return access.banned_task_ids(user) & {task.pk for task in tasks}
    return {task.pk for task in tasks if task.collecting and qualification.writing_standing(user=user, task=task).refusal}


def task_detail(request, code):
    """Instructions (Markdown, cleaned), every round with its statistics and models in the loop."""
    task = get_object_or_404(Task, code=code, active=True)
    rounds = list(task.rounds.order_by("-number").prefetch_related("target_models"))
    counts = counts_by_round(rounds)
    signed_in = request.user.is_authenticated
    my_counts = user_counts(request.user, task=task) if signed_in else None
    return render(request, "tasks/task_detail.html", {
        "task": task,
        "current": task.current_round(),
        "rounds": [(r, counts[r.pk]) for r in rounds],
        "my_counts": my_counts,
        "standing": qualification.writing_standing(user=request.user, task=task) if signed_in and task.collecting else None,
    })


def _problem(message: str, *, status: int = 409) -> HttpResponse:
    """A workspace that only says what went wrong (it keeps the ``#workspace`` target alive)."""
    return HttpResponse(
        f'<section id="workspace" class="card"><p class="error" role="alert">{escape(message)}</p></section>', status=status
    )


def _annotator_page(view):
    """Log-in required; an HTMX request from a visitor is sent to the log-in page with ``HX-Redirect``."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if request.user.is_authenticated:
            return view(request, *args, **kwargs)
        return _log_in_first(request)

    return wrapper


async def _auser(request):
    """The request's user, read once for an async view: ``request.user`` then holds it too, so the
    view's sync steps do not read the session's user again."""
    request.user = await request.auser()
    return request.user


def _log_in_first(request) -> HttpResponse:
    """The answer to a visitor: the log-in page, or for an HTMX request a 401 with ``HX-Redirect`` to it."""
    if request.htmx:
        page = request.htmx.current_url_abs_path or request.get_full_path()
        login = f"{resolve_url(settings.LOGIN_URL)}?{urlencode({'next': page})}"
        return HttpResponse("Log in to write examples.", status=401, headers={"HX-Redirect": login})
    return redirect_to_login(request.get_full_path())


def _active_task(code: str) -> Task:
    """The active task ``code`` that collects examples (404 for an evaluation-only benchmark: it has no create pages)."""
    task = collecting_task(code)
    if task is None:
        raise Http404(f"No task {code!r} collects examples.")
    return task


def _own_example(request, pk: int) -> Example:
    """The example ``pk`` if ``request.user`` wrote it (404 otherwise: others' examples are not shown)."""
    return get_object_or_404(Example.objects.select_related("round__task", "context", "model"), pk=pk, author=request.user)


def _context_fields(task: Task, context) -> list[tuple[str, str, str]]:
    """``[(name, label, value)]`` of the context shown to the annotator."""
    return [(f["name"], f.get("label", f["name"]), context.data.get(f["name"], "")) for f in task.config["context_fields"]]


def _workspace(task: Task, context, *, form: ExampleForm | None = None, initial: dict | None = None, notice: str = "",
               user=None):
    """Template context of ``_workspace.html``: the context, the example form, the buttons."""
    if form is None:
        initial = dict(initial or {})
        for field in task.config["input_fields"]:
            source = field.get("prefill_from")
            if source and field["name"] not in initial:
                initial[field["name"]] = context.data.get(source, "")
        initial.setdefault("token", context_token(context))  # a suggestion keeps the time the context was shown
        initial["submission_key"] = idempotency.new_key()
        form = ExampleForm(task=task, initial=initial)
    passage_field = task.spec.passage_field(task.config)
    return {
        "task": task,
        "context": context,
        "form": form,
        "context_fields": [f for f in _context_fields(task, context) if f[0] != passage_field],
        "image_fields": image_context_fields(task.config),
        "audio_fields": audio_context_fields(task.config),
        "audio_max_seconds": settings.AUDIO_MAX_SECONDS,
        "passage": context.data.get(passage_field, "") if passage_field else None,
        "notice": notice,
        "assistant_offered": assist.offered(round=context.round, user=user),  # *Suggest*: annotation/assist_views.py
        "submit_url": _submit_url(task, context),
        "closeness_check": diversity_rules.round_rule(context.round).mode != "off",  # annotation/diversity_views.py
    }


def _submit_url(task: Task, context) -> str:
    """Where the form posts: ``submit_waiting`` (an async view) when a model behind an endpoint may answer
    in this round's loop, so that waiting on it holds no thread; else ``submit``, a plain view on the
    web process's threads, the fastest way through for a model that runs in the process."""
    waits = any(model.is_endpoint for model in context.round.target_models.all())
    return reverse("annotation:submit_waiting" if waits else "annotation:submit", args=[task.code])


def _render_workspace(request, task, *, status=200, **kwargs):
    data = _workspace(task, user=request.user, **kwargs)
    if request.htmx:
        return render(request, "annotation/_workspace.html", data, status=status)
    return render(request, "annotation/create.html", _page(request, task, data), status=status)


def _my_progress(user, task, round, *, allowance=None) -> dict:
    """Template context of ``_my_counts.html``: the user's counts in ``round`` and today's allowance
    (``allowance``: one the caller counted already, as ``create_example`` does)."""
    return {
        "my_counts": user_counts(user, round=round) if round else None,
        "allowance": allowance or limits.daily_allowance(user=user, task=task),
    }


def _page(request, task, data: dict) -> dict:
    round = task.current_round()
    return {
        **data,
        "task": task,
        "round": round,
        **_my_progress(request.user, task, round),
        "crowd_session": crowd.active_session(user=request.user, round=round, activity="write") if round else None,
    }


def _answer(task: Task, example_input: dict, target: dict | None, output: dict) -> dict:
    """Template context that draws the model's answer next to the annotator's (if any)."""
    return task.spec.answer_display(task.config, example_input, target, output)


def _result(example: Example) -> dict:
    task = example.round.task
    data = {
        "task": task,
        "example": example,
        "context_fields": [f for f in _context_fields(task, example.context) if f[0] != task.spec.passage_field(task.config)],
        "image_fields": image_context_fields(task.config),
        "audio_fields": audio_context_fields(task.config),
        "your_fields": [  # an optional field left empty shows nothing, not a heading over an empty quote
            (f.get("label", f["name"]), example.input[f["name"]]) for f in task.config["input_fields"]
            if str(example.input.get(f["name"]) or "").strip()
        ],
        "answer": _answer(task, example.input, example.target, example.model_output),
        "explain_form": ExplanationForm(example=example),
        "flag_form": FlagForm(),
    }
    return data


# --- Pages ------------------------------------------------------------------------------


def _content_warning_page(request, task):
    """The task's content warning page when ``request.user`` must read it first, else None
    (``annotation.content_warning.page_if_needed``)."""
    return content_warning.page_if_needed(request, task)


def _saved_example(request):
    """The example of ``?saved=<id>`` (the one just stored) if the user wrote it, else None."""
    saved = request.GET.get("saved", "")
    return Example.objects.filter(pk=int(saved), author=request.user).first() if saved.isdigit() and len(saved) < 19 else None


@require_POST
@_annotator_page
def acknowledge_warning(request, code):
    """Remember (in the session) that the user read the task's content warning; go back to the page that
    showed it (``next``, e.g. the chat page with ``?mode=conversation``), else to writing."""
    return content_warning.acknowledge(request, _active_task(code))


@require_GET
@_annotator_page
def create_page(request, code):
    """The create page: instructions, a context chosen by the task's strategy, the example form.

    A task with a content warning shows it first, until the user continues past it (or has
    written an example of the task before)."""
    task = _active_task(code)
    if task.spec.conversational:  # talk with the model, then judge: annotation/chat_views.py
        return redirect("annotation:chat", code=task.code)
    if task.spec.generates_images:  # prompt, generated images, judgment: annotation/t2i_views.py
        return redirect("annotation:t2i", code=task.code)
    round = task.current_round()
    data = {"task": task, "round": round, "problem": None}
    try:
        if round is None:
            raise RuleError("no_round", f"{task.name} has no round yet.")
        model = loop_choice.model_in_loop(round)
        context = contexts.choose_context(round=round, tag=request.GET.get("tag") or None)
    except RuleError as error:
        data["problem"] = error.message
        # A model still training: the page shows its progress and reloads itself until it is ready.
        data["training_model"] = getattr(error, "model", None)
        return render(request, "annotation/create.html", _page(request, task, data), status=409)
    if not qualification.is_qualified(user=request.user, task=task):
        return redirect(f"{reverse('annotation:qualification', args=[task.code])}?{urlencode({'next': request.get_full_path()})}")
    standing = qualification.writing_standing(user=request.user, task=task)
    if standing.refusal:  # said before any typing, with what the user's roles allow instead
        return render(request, "annotation/create.html", _page(request, task, {**data, "standing": standing}), status=403)
    if (warning := _content_warning_page(request, task)) is not None:
        return warning
    notice = loop_choice.loop_notice(model)
    return render(request, "annotation/create.html", _page(request, task, {**data, **_workspace(task, context, notice=notice, user=request.user)}))


@require_GET
@_annotator_page
def new_context(request, code):
    """A fresh workspace on another context (``exclude``: the one shown; ``tag``: keep to a tag)."""
    task = _active_task(code)
    round = task.current_round()
    try:
        if round is None:
            raise RuleError("no_round", f"{task.name} has no round yet.")
        exclude = [whole_number(pk) for pk in request.GET.getlist("exclude") if pk]
        if None in exclude:
            return _problem("exclude must list context ids (whole numbers below 2^63).", status=400)
        context = contexts.choose_context(round=round, tag=request.GET.get("tag") or None, exclude=exclude)
    except RuleError as error:
        return _problem(error.message)
    return _render_workspace(request, task, context=context)


@require_POST
@_annotator_page
def submit_example(request, code):
    """Create the example (``services.create_example``) and show the model's answer, or the form with errors."""
    parsed = _parse_submission(request, code)
    if isinstance(parsed, HttpResponse):
        return parsed
    task, form = parsed
    try:
        example = services.create_example(user=request.user, **_example_fields(form))
    except RuleError as error:
        return _refused_submission(request, task, form, error)
    return _submitted(request, task, example)


@require_POST
async def submit_example_waiting(request, code):
    """``submit_example`` for a round whose loop has a model behind an endpoint (``_submit_url``): an
    async view, so the form and the rules run on the request's thread and the wait for the endpoint
    holds no thread (``services.acreate_example``, ``dynabench/asgi.py``). Same answers."""
    user = await _auser(request)
    if not user.is_authenticated:
        return _log_in_first(request)
    parsed = await sync_to_async(_parse_submission)(request, code)
    if isinstance(parsed, HttpResponse):
        return parsed
    task, form = parsed
    try:
        example = await services.acreate_example(user=user, **_example_fields(form))
    except RuleError as error:
        return await sync_to_async(_refused_submission)(request, task, form, error)
    return await sync_to_async(_submitted)(request, task, example)


def _example_fields(form: ExampleForm) -> dict:
    """The keyword arguments of ``services.create_example`` from a valid example form (the user aside)."""
    return {"context": form.context, "input": form.annotator_input(), "target": form.target(), "time_spent": form.time_spent(),
            "submission_key": form.cleaned_data.get("submission_key", ""), "suggestion_token": form.cleaned_data.get("suggestion", "")}


def _parse_submission(request, code):
    """The task and the valid form of a submission, or the page that answers an invalid one (422)."""
    task = _active_task(code)
    form = ExampleForm(request.POST, task=task)
    if not form.is_valid():
        if form.context is None:
            return _expired(request, task, form)
        return _render_workspace(request, task, context=form.context, form=form, status=422)
    return task, form


def _refused_submission(request, task, form, error: RuleError):
    """The form again with the rule's message (422 for a 400, else the rule's status)."""
    form.add_rule_error(error)
    status = 422 if error.status_code == 400 else error.status_code
    return _render_workspace(request, task, context=form.context, form=form, status=status)


def _submitted(request, task, example):
    """The model's answer to a stored example: the result fragment (HTMX) or the whole page."""
    data = _result(example)
    if request.htmx:
        # The result replaces the workspace; the user's counts and a crowd worker's study banner follow out of band.
        allowance = getattr(example, "daily_allowance", None)
        data.update(_my_progress(request.user, task, example.round, allowance=allowance), round=example.round, oob=True,
                    crowd_session=crowd.active_session(user=request.user, round=example.round, activity="write")
                    if getattr(example, "by_crowd_worker", False) else None)
        response = render(request, "annotation/_result.html", data)
    else:
        response = render(request, "annotation/create.html", _page(request, task, {**data, "show_result": True}))
    response["Server-Timing"] = f"model;desc=\"model in the loop\";dur={example.inference_s * 1000:.2f}"
    return response


def _expired(request, task, form):
    """The token was bad or stale: keep what was typed, on a new context, and say why."""
    round = task.current_round()
    message = "; ".join(form.errors.get("token", [])) or "Take a new context."
    try:
        context = contexts.choose_context(round=round) if round else None
    except RuleError as error:
        message, context = error.message, None
    if context is None:
        return _problem(message)
    initial = {name: form.data.get(name, "") for name in form.input_names}
    return _render_workspace(request, task, context=context, initial=initial, status=422, notice=message)


@require_GET
@_annotator_page
def try_again(request, pk):
    """The form again with the example's input and label kept (same context, if still open)."""
    example = _own_example(request, pk)
    task = example.round.task
    initial = {f["name"]: example.input.get(f["name"], "") for f in task.config["input_fields"]}
    if not example_labels_hidden(request.user, example):
        initial.update(task.spec.form_initial(example.target))  # a hidden split's label stays on the server
    context, notice = example.context, ""
    if not context.active or context.round.status != context.round.Status.OPEN:
        try:
            context = contexts.choose_context(round=task.current_round())
        except (RuleError, AttributeError):
            return _problem("This task has no open context left.")
        notice = "That context is closed; here is a new one with your text kept."
        initial.pop("answer_text", None), initial.pop("answer_start", None)
    return _render_workspace(request, task, context=context, initial=initial, notice=notice)


@require_POST
@_annotator_page
def explain_example(request, pk):
    example = _own_example(request, pk)
    form = ExplanationForm(request.POST, example=example)
    status = 200
    if form.is_valid():
        try:
            example = services.add_explanations(
                example=example, user=request.user,
                explanations={name: value for name, value in form.cleaned_data.items() if value},
            )
        except RuleError as error:
            form.add_rule_error(error)
            status = 422 if error.status_code == 400 else error.status_code
        else:
            form = ExplanationForm(example=example)
    else:
        status = 422
    if not request.htmx:
        if status != 200:  # without JavaScript: the result page again, the message next to the field, the text kept
            data = {**_result(example), "explain_form": form, "show_result": True}
            return render(request, "annotation/create.html", _page(request, example.round.task, data), status=status)
        return redirect("annotation:my_examples")
    return render(
        request, "annotation/_explain.html",
        {"example": example, "explain_form": form, "saved": status == 200}, status=status,
    )


@require_POST
@_annotator_page
def retract_example(request, pk):
    example = services.retract_example(example=_own_example(request, pk), user=request.user)
    if not request.htmx:
        return redirect("annotation:my_examples")
    return render(request, "annotation/_actions.html", {"example": example, "flag_form": FlagForm(), "task": example.round.task})


@require_POST
@_annotator_page
def flag_example(request, pk):
    example = _own_example(request, pk)
    form = FlagForm(request.POST)
    status = 200
    if form.is_valid():
        try:
            example = services.flag_example(example=example, user=request.user, reason=form.cleaned_data["reason"])
        except RuleError as error:
            form.add_rule_error(error)
            status = 422 if error.status_code == 400 else error.status_code
    if not request.htmx:
        return redirect("annotation:my_examples")
    return render(
        request, "annotation/_actions.html",
        {"example": example, "flag_form": form, "task": example.round.task}, status=status,
    )


def _visitor(request) -> str:
    """Who is trying the sandbox: the user, or a visitor's address (for its limits)."""
    return f"user:{request.user.pk}" if request.user.is_authenticated else f"ip:{client_ip(request)}"


async def sandbox(request, code):
    """Try the model in the loop without logging in; nothing is saved. An async view: the wait for
    an endpoint model holds no thread (``sandbox.atry_model``)."""
    if request.method != "POST":
        return await sync_to_async(_sandbox_page)(request, code)
    task, form, valid, visitor = await sync_to_async(_sandbox_form)(request, code)
    result = refusal = None
    if valid:
        try:
            result = await atry_model(task=task, input=form.model_inputs(), target=form.target(), visitor=visitor)
        except RuleError as error:
            refusal = error
    return await sync_to_async(_sandbox_page)(request, code, form=form, valid=valid, result=result, refusal=refusal)


def _sandbox_form(request, code):
    """The task, its filled sandbox form, whether it is valid, and who is trying."""
    task = _active_task(code)
    form = SandboxForm(request.POST, task=task)
    return task, form, form.is_valid(), _visitor(request)


def _sandbox_page(request, code, *, form=None, valid=False, result=None, refusal: RuleError | None = None):
    """The sandbox page (or its HTMX fragment): the blank form on GET, else the answer or the refusal."""
    task = _active_task(code)
    round = task.current_round()
    data = {"task": task, "round": round, "problem": None, "answer": None}
    if form is not None:
        status = 200
        if not valid:
            status = 422
        elif refusal is not None:
            form.add_rule_error(refusal)
            status = 422 if refusal.status_code == 400 else refusal.status_code
        else:
            data["result"] = result
            data["answer"] = _answer(task, result.input, result.target, result.output)
    else:
        status, initial = 200, {}
        try:
            if round is None:
                raise RuleError("no_round", f"{task.name} has no round yet.")
            loop_choice.model_in_loop(round)
            context = contexts.choose_context(round=round)
            initial = {name: context.data.get(name, "") for name in task.config["model_inputs"] if name in context.data}
            for field in task.config["input_fields"]:
                if field.get("prefill_from"):
                    initial[field["name"]] = context.data.get(field["prefill_from"], "")
        except RuleError as error:
            data["problem"], status = error.message, 409
        form = SandboxForm(task=task, initial=initial)
    data["form"] = form
    data["passage_field"] = task.spec.passage_field(task.config)
    data["allowance"] = sandbox_allowance(visitor=_visitor(request))
    template = "annotation/_sandbox.html" if request.htmx else "annotation/sandbox.html"
    return render(request, template, data, status=status)


@login_required
@require_GET
def my_examples(request):
    """The annotator's own examples with outcome and validation state, and their counts and vMER."""
    examples = Example.objects.filter(author=request.user).select_related("round__task", "model")
    tasks = Task.objects.filter(rounds__examples__author=request.user).distinct()
    per_task = [(task, user_counts(request.user, task=task)) for task in tasks]
    chosen = request.GET.get("task")
    if chosen:
        examples = examples.filter(round__task__code=chosen)
    page = Paginator(examples.order_by("-created_at", "-pk"), PAGE_SIZE).get_page(request.GET.get("page"))
    splits, owned = access.hidden_splits(), owned_task_ids(request.user)
    for example in page:
        fields = example.round.task.config["input_fields"]
        example.summary = " / ".join(str(example.input.get(f["name"], "")) for f in fields)
        config = example.round.task.config
        example.image_hashes = [h for h in (example.input.get(n) for n in image_context_fields(config)) if h]
        example.audio_hashes = [h for h in (example.input.get(n) for n in audio_context_fields(config)) if h]
        example.status = validation_status(example)
        example.labels_hidden = example_labels_hidden(request.user, example, splits=splits, owned=owned)
    return render(request, "annotation/my_examples.html", {
        "counts": user_counts(request.user),
        "per_task": per_task,
        "page": page,
        "chosen": chosen,
    })

