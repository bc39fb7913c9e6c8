"""The console's crowd pages: Prolific and MTurk studies with the URL and settings to paste into
the platform, the qualification quiz and its pool, and links to gold items and pay.

Every page is for the task's owners (and admins) only (``console.views.owner_console``); a
study or quiz question of another task is a 404. Views parse and render; the rules are in
``annotation/crowd_setup.py`` and ``annotation/qualification.py``.
"""

from django.contrib import messages
from django.db.models import Count
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from annotation import crowd_setup, qualification
from annotation.models import CrowdStudy, Qualification, QuizItem
from console.crowd_forms import QualificationForm, QuizItemForm, StudyForm
from console.views import _page, owner_console
from dynabench.errors import FieldErrors, RuleError
from tasks.models import Round
from validation import gold
from validation.models import GoldItem


def _base_url(request) -> str:
    return request.build_absolute_uri("/")


def _studies(request, task) -> list[dict]:
    studies = (
        CrowdStudy.objects.filter(round__task=task).select_related("round__task")
        .annotate(started=Count("sessions")).order_by("-round__number", "platform")
    )
    needed = gold.GoldSettings.of(task).min_answers
    gold_items = dict(GoldItem.objects.filter(round__task=task, active=True).values_list("round_id").annotate(n=Count("id")))
    return [{"study": s, "settings": crowd_setup.platform_settings(s, base_url=_base_url(request)),
             "gold_short": needed - gold_items.get(s.round_id, 0) if s.activity == CrowdStudy.Activity.VALIDATE
             and gold_items.get(s.round_id, 0) < needed else 0}
            for s in studies]


def _quiz_summary(task) -> dict | None:
    found = Qualification.objects.filter(task=task).first()
    if found is None:
        return None
    return {"qualification": found, "pool": qualification.pool_report(found), "failures": qualification.repeated_failures(found)}


def _crowd_page(request, task, form, status=200):
    open_rounds = task.rounds.filter(status=Round.Status.OPEN).exists()
    return _page(request, task, "crowd.html", "crowd", status=status, studies=_studies(request, task), form=form,
                 quiz=_quiz_summary(task), open_rounds=open_rounds, current=task.current_round(),
                 collusion=gold.collusion_report(task))


def _refused(form, refused: RuleError) -> int:
    if isinstance(refused, FieldErrors):
        form.add_field_errors(refused)
    else:
        form.add_error(refused.field if refused.field in form.fields else None, refused.message)
    return refused.status_code


@owner_console
def crowd_page(request, task):
    """GET: the task's studies (URL and platform settings ready to paste), a form for a new study,
    the quiz's state; POST: create a study (``crowd_setup.save_study``; 409 on a closed round)."""
    current = task.current_round()
    if request.method != "POST":
        return _crowd_page(request, task, StudyForm(task=task, initial={"round": current}))
    form = StudyForm(request.POST, task=task)
    status = 400
    if form.is_valid():
        data = form.cleaned_data
        try:
            study = crowd_setup.save_study(
                round=data["round"], acting_user=request.user, platform=data["platform"], activity=data["activity"],
                required=data["required"], completion_code=data["completion_code"], platform_study_id=data["platform_study_id"],
                participant_cap=data["participant_cap"], mturk_sandbox=data["mturk_sandbox"], api_token=form.api_token_change(),
                active=data["active"],
            )
        except RuleError as refused:
            status = _refused(form, refused)
        else:
            messages.success(request, f"{study} created: paste its URL into {study.get_platform_display()}.")
            return redirect("console:crowd_study", code=task.code, study_id=study.pk)
    return _crowd_page(request, task, form, status=status)


@owner_console
def crowd_study(request, task, study_id):
    """GET: one study's settings, its entry URL and the platform's settings; POST: save them."""
    study = get_object_or_404(CrowdStudy.objects.select_related("round__task"), pk=study_id, round__task=task)
    status = 200
    if request.method == "POST":
        form = StudyForm(request.POST, task=task, editing=study, initial=StudyForm.initial_from(study))
        status = 400
        if form.is_valid():
            data = form.cleaned_data
            try:
                crowd_setup.save_study(
                    round=study.round, acting_user=request.user, platform=study.platform, activity=data["activity"],
                    required=data["required"], completion_code=data["completion_code"],
                    platform_study_id=data["platform_study_id"], participant_cap=data["participant_cap"],
                    mturk_sandbox=data["mturk_sandbox"], api_token=form.api_token_change(), active=data["active"], study=study,
                )
            except RuleError as refused:
                status = _refused(form, refused)
            else:
                messages.success(request, "Study saved.")
                return redirect("console:crowd_study", code=task.code, study_id=study.pk)
    else:
        form = StudyForm(task=task, editing=study, initial=StudyForm.initial_from(study))
    study.refresh_from_db()
    return _page(request, task, "crowd_study.html", "crowd", status=status, study=study, form=form,
                 settings=crowd_setup.platform_settings(study, base_url=_base_url(request)),
                 started=study.sessions.count(), finished=study.sessions.filter(completed_at__isnull=False).count())


@owner_console
@require_POST
def crowd_study_token(request, task, study_id):
    """POST: a fresh entry token for the study (the old URL stops working)."""
    study = get_object_or_404(CrowdStudy.objects.select_related("round__task"), pk=study_id, round__task=task)
    crowd_setup.new_token(study=study, acting_user=request.user)
    messages.success(request, "New study link made: paste it into the platform; the old one no longer works.")
    return redirect("console:crowd_study", code=task.code, study_id=study.pk)


def _quiz_page(request, task, form, item_form, status=200):
    summary = _quiz_summary(task)
    items = list(summary["qualification"].items.order_by("position", "id")) if summary else []
    return _page(request, task, "crowd_quiz.html", "crowd", status=status, form=form, item_form=item_form,
                 quiz=summary, items=items)


@owner_console
def crowd_quiz(request, task):
    """GET: the quiz settings, its pool (each question with its right answer, for the owner) and a
    form per question in the task's shape; POST: save the settings."""
    found = Qualification.objects.filter(task=task).first()
    if request.method != "POST":
        form = QualificationForm(initial=QualificationForm.initial_from(found) if found else None)
        return _quiz_page(request, task, form, QuizItemForm(task=task) if found else None)
    form = QualificationForm(request.POST)
    status = 400
    if form.is_valid():
        try:
            crowd_setup.save_qualification(task=task, acting_user=request.user, **form.cleaned_data)
        except RuleError as refused:
            status = _refused(form, refused)
        else:
            messages.success(request, "Quiz settings saved.")
            return redirect("console:crowd_quiz", code=task.code)
    return _quiz_page(request, task, form, QuizItemForm(task=task) if found else None, status=status)


@owner_console
@require_POST
def crowd_quiz_item(request, task):
    """POST: add a question to the pool (``crowd_setup.add_quiz_item``)."""
    found = get_object_or_404(Qualification, task=task)
    item_form = QuizItemForm(request.POST, task=task)
    status = 400
    if item_form.is_valid():
        try:
            crowd_setup.add_quiz_item(qualification=found, acting_user=request.user, input=item_form.shown(),
                                      values=item_form.answer_values())
        except RuleError as refused:
            status = _refused(item_form, refused)
        else:
            messages.success(request, "Question added to the pool.")
            return redirect("console:crowd_quiz", code=task.code)
    return _quiz_page(request, task, QualificationForm(initial=QualificationForm.initial_from(found)), item_form, status=status)


@owner_console
@require_POST
def crowd_quiz_item_delete(request, task, item_id):
    """POST: take a question out of the pool."""
    item = get_object_or_404(QuizItem.objects.select_related("qualification__task"), pk=item_id, qualification__task=task)
    crowd_setup.remove_quiz_item(item=item, acting_user=request.user)
    messages.success(request, "Question removed from the pool.")
    return redirect("console:crowd_quiz", code=task.code)
