"""Pages of onboarding and paid crowd work: a task's qualification quiz, and a crowd study's
entry, progress and completion.

Views parse and render; the rules are ``annotation/qualification.py`` and
``annotation/crowd.py``. Quiz answers are scored on the server; the page says pass or fail,
never a score or which answer was gold.
"""

from django import forms
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST
from csp.decorators import csp_update

from annotation import crowd, qualification
from annotation.models import CrowdStudy, CrowdWorker, QuizAttempt
from dynabench import backends
from dynabench.errors import RuleError
from dynabench.proxies import client_ip
from tasks.models import Round, Task


def _next(request, default: str) -> str:
    wanted = request.POST.get("next") or request.GET.get("next") or ""
    if wanted and url_has_allowed_host_and_scheme(wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return wanted
    return default


class QuizForm(forms.Form):
    """The quiz: a read-the-instructions box, the form's one-time key, and per quiz item the task
    kind's answer fields (``task.spec.quiz_form_fields``) prefixed ``item-<id>-``."""

    read_instructions = forms.BooleanField(required=False, label="I have read the instructions")
    key = forms.CharField(widget=forms.HiddenInput, max_length=qualification.MAX_KEY)

    def __init__(self, *args, task, items, **kwargs):
        super().__init__(*args, **kwargs)
        self.task, self.items = task, items
        for item in items:
            for name, field in task.spec.quiz_form_fields(task.config).items():
                self.fields[f"item-{item.pk}-{name}"] = field

    def rows(self):
        """``[(item, shown fields [(label, text)], bound answer fields)]`` for the template."""
        config = self.task.config
        shown_names = [f for f in [*config.get("context_fields", []), *config["input_fields"]]]
        return [
            (
                item,
                [(f.get("label", f["name"]), item.input.get(f["name"], "")) for f in shown_names if item.input.get(f["name"])],
                [self[name] for name in self.fields if name.startswith(f"item-{item.pk}-")],
            )
            for item in self.items
        ]

    def answers(self) -> dict:
        """``{item id: raw target}`` from the cleaned data (``task.spec.quiz_target``)."""
        answers = {}
        for item in self.items:
            prefix = f"item-{item.pk}-"
            values = {name[len(prefix):]: value for name, value in self.cleaned_data.items() if name.startswith(prefix)}
            answers[item.pk] = self.task.spec.quiz_target(self.task.config, item.input, values)
        return answers


def qualification_page(request, code):
    """GET: the task's instructions and this attempt's questions (drawn from the pool, the same
    on reload), or where the worker stands; POST: score the attempt and say pass or fail, never
    a score or which answers were wrong.

    A refused attempt (an unanswered item, unread instructions) answers 400 with the message
    and the answers kept; no attempts left or already passed answers 403, a cool-off or the
    quiz's hourly limit 429. A double-submitted form (the same one-time key) counts once.
    Owners, and tasks without a qualification, go straight on to ``next``.
    """
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    task = get_object_or_404(Task, code=code, active=True)
    found = qualification.active_qualification(task)
    after = _next(request, reverse("annotation:create", args=[task.code]))
    if found is None or task.is_owner(request.user):
        return redirect(after)
    error, status_code, attempt, form = None, 200, None, None
    if request.method == "POST":
        key = str(request.POST.get("key") or "")[: qualification.MAX_KEY]
        posted = QuizAttempt.objects.filter(qualification=found, user=request.user, key=key).first() if key else None
        if posted is None:
            error, status_code = "This quiz form is out of date; reload the page for your questions.", 400
        else:
            form = QuizForm(request.POST, task=task, items=qualification.attempt_items(posted))
            if not form.is_valid():
                error, status_code = "The quiz form was incomplete; answer every question.", 400
            else:
                try:
                    attempt = qualification.submit_attempt(
                        user=request.user, qualification=found, answers=form.answers(),
                        key=form.cleaned_data["key"], read_instructions=form.cleaned_data["read_instructions"],
                    )
                except RuleError as exc:
                    error, status_code = exc.message, exc.status_code
    state = qualification.status(user=request.user, qualification=found)
    refusal = None
    if attempt is None and form is None and not state.passed:
        try:
            opened = qualification.open_attempt(user=request.user, qualification=found)
        except RuleError as exc:
            refusal = exc.message
            status_code = exc.status_code if request.method == "GET" else status_code
        else:
            form = QuizForm(task=task, items=qualification.attempt_items(opened), initial={"key": opened.key})
    return render(request, "annotation/qualification.html", {
        "task": task, "qualification": found, "form": form, "rows": form.rows() if form is not None and attempt is None else [],
        "state": state, "attempt": attempt, "error": error, "refusal": refusal, "next": after,
    }, status=status_code)


# --- crowd studies ---------------------------------------------------------------------------


def _study(code, number, platform, activity=None, *, token: str = "", user=None) -> CrowdStudy:
    if platform not in CrowdStudy.Platform.values:
        raise RuleError("no_study", f"Unknown crowd platform '{platform}': use prolific or mturk.", status_code=404)
    if activity is not None and activity not in CrowdStudy.Activity.values:
        raise RuleError("no_study", f"Unknown kind of study '{activity}': use write or validate.", status_code=404)
    round = get_object_or_404(Round, task__code=code, number=number)
    return crowd.study_for(round, platform, activity, token=token, user=user)


def _problem(request, message, status_code, study=None):
    return render(request, "annotation/crowd_problem.html", {"message": message, "study": study}, status=status_code)


def _work_url(study: CrowdStudy) -> str:
    task = study.round.task
    if study.activity == CrowdStudy.Activity.VALIDATE:
        return f"{reverse('validation:queue', args=[task.code])}?round={study.round.number}"
    return reverse("annotation:create", args=[task.code])


def _progress_url(study: CrowdStudy) -> str:
    return reverse("annotation:crowd_progress", args=[study.round.task.code, study.round.number, study.platform, study.activity])


def _problem_from(request, exc: RuleError, study=None):
    response = _problem(request, exc.message, exc.status_code, study)
    if getattr(exc, "retry_after", None):
        response["Retry-After"] = str(exc.retry_after)
    return response


def crowd_entry(request, code, number, platform, activity=None):
    """The study URL: check that the entry proves itself (``crowd.enter``: the study's token and
    platform study id, the platform's shape of worker id, throttles, the cap, the browser that
    made the account), log the worker in to their pseudonymous account (made on first arrival)
    and send them to onboarding, then to the work.

    A refused entry gets a page saying why and what to do: 400 for missing or malformed
    parameters, 403 for a wrong token or study id, another platform's id, or another browser's
    worker, 409 when the study is full or not ready, 410 when it ended, 429 when throttled. An
    MTurk preview: a description only. A worker who already finished: a page saying so, without
    a code (409). Someone signed in as another user is asked first, with a POST form (a plain
    GET never switches accounts); the switch happens on that form's POST.
    """
    study = None
    try:
        study = _study(code, number, platform, activity, token=str(request.GET.get(crowd.TOKEN_PARAMETER) or ""))
        entry = crowd.parse_entry(platform, request.GET)
        crowd.check_entry(study=study, entry=entry)
    except RuleError as exc:
        return _problem_from(request, exc, study)
    if entry.preview:
        return render(request, "annotation/crowd_preview.html", {"study": study})
    user = request.user
    is_this_worker = user.is_authenticated and CrowdWorker.objects.filter(
        user=user, platform=platform, platform_worker_id=entry.worker_id
    ).exists()
    if user.is_authenticated and not is_this_worker and not (request.method == "POST" and request.POST.get("switch") == "yes"):
        return render(request, "annotation/crowd_switch.html", {"study": study, "action": request.get_full_path()},
                      status=200 if request.method == "GET" else 400)
    proof = request.get_signed_cookie(crowd.PROOF_COOKIE, default=None, salt=crowd.PROOF_SALT)
    try:
        entered = crowd.enter(study=study, entry=entry, address=client_ip(request), proof=proof)
    except RuleError as exc:
        return _problem_from(request, exc, study)
    session = entered.session
    if session.completed_at is not None:
        return _problem(request, f"You already finished this study on {session.completed_at:%Y-%m-%d %H:%M} UTC. "
                        "Your completion was recorded; there is nothing more to do.", 409, study)
    if not is_this_worker:
        login(request, session.worker.user, backend=backends.PATH)
    progress = _progress_url(study)
    if not qualification.is_qualified(user=session.worker.user, task=study.round.task):
        response = redirect(f"{reverse('annotation:qualification', args=[code])}?next={progress}")
    else:
        response = redirect(progress)
    if entered.proof:
        response.set_signed_cookie(
            crowd.PROOF_COOKIE, entered.proof, salt=crowd.PROOF_SALT, max_age=crowd.PROOF_MAX_AGE_S,
            httponly=True, samesite="Lax", secure=request.is_secure(),
        )
    return response


@login_required
def crowd_progress(request, code, number, platform, activity=None):
    """The worker's study page: how much is done, a link to the work, the finish button when done."""
    try:
        study = _study(code, number, platform, activity, user=request.user)
    except RuleError as exc:
        return _problem(request, exc.message, exc.status_code)
    session = study.sessions.filter(worker__user=request.user).select_related("worker").first()
    if session is None:
        return _problem(request, "Open this study from your crowd platform's link first.", 403, study)
    if session.completed_at is not None:
        return _problem(request, "You already finished this study; your completion was recorded.", 409, study)
    done = crowd.standing_progress(session)
    if not crowd.is_open(study) and done < study.required:
        return _problem(request, f"This study has ended: {study.round} is closed and takes no more work. Thank you for "
                        f"the {done} you did; return the study on {study.get_platform_display()}.", 410, study)
    return render(request, "annotation/crowd_progress.html", {
        "study": study, "session": session, "done": done >= study.required, "standing": done,
        "work_url": _work_url(study), "qualified": qualification.is_qualified(user=request.user, task=study.round.task),
        "qualification_url": f"{reverse('annotation:qualification', args=[code])}?next={_progress_url(study)}",
    })


@login_required
@require_POST
@csp_update({"form-action": [crowd.MTURK_SUBMIT_URL, crowd.MTURK_SANDBOX_SUBMIT_URL]})
def crowd_finish(request, code, number, platform, activity=None):
    """Finish the study once: show the completion code (Prolific) or MTurk's submit form; a
    second finish gets the already-finished page and no code."""
    try:
        study = _study(code, number, platform, activity, user=request.user)
    except RuleError as exc:
        return _problem(request, exc.message, exc.status_code)
    session = study.sessions.filter(worker__user=request.user).first()
    if session is None:
        return _problem(request, "Open this study from your crowd platform's link first.", 403, study)
    try:
        session = crowd.complete(session=session)
    except RuleError as exc:
        return _problem(request, exc.message, exc.status_code, study)
    return render(request, "annotation/crowd_done.html", {"study": study, "session": session, "exit": crowd.exit_link(session)})
