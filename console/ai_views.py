"""The console's *AI help* page of a round: its writing assistant (on, off, A/B split), runs of a
generator of candidates with their progress, and the comparisons of ``console/ai_selectors.py``.

For the task's owners only (``console.views.owner_console``). Views parse and render; the rules are in
``annotation/assist.py`` (``set_assistant``) and ``annotation/generation.py`` (``start_generation``).
"""

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from annotation import assist, generation
from annotation.models import GenerationRun, RoundAssistant
from console import ai_selectors
from console.judge_views import judge_form_for
from console.views import _page, owner_console
from dynabench.errors import RuleError
from tasks.loop import gate
from tasks.models import Purpose, Round


class AssistantForm(forms.Form):
    model = forms.TypedChoiceField(coerce=int, required=False, empty_value=None, label="Assistant model")
    enabled = forms.BooleanField(required=False, initial=True, label="Annotators see Suggest")
    ab_split = forms.BooleanField(required=False, label="A/B split: half the workers (stable per worker) get no assistant")

    def __init__(self, *args, choices, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["model"].choices = [("", "— none (off) —"), *choices]


class GenerateForm(forms.Form):
    model = forms.TypedChoiceField(coerce=int, label="Generator")
    per_context = forms.IntegerField(min_value=1, max_value=generation.MAX_PER_CONTEXT, initial=3,
                                     label="Candidates per context")

    def __init__(self, *args, choices, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["model"].choices = choices


def _choices(task, purpose=None):
    """The models the owners may pick for ``purpose`` (assist or generate): another user's endpoint only
    with its submitter's consent to it (``tasks.loop.gate.consented``). Without ``purpose`` (a POST) every
    generator, so that the service's refusal names whose consent is missing."""
    models = assist.generators_for(task)
    models = gate.consented(models, purpose) if purpose else models
    return models, [(m.pk, f"{m.name} ({'endpoint' if m.is_endpoint else 'local language model'})") for m in models]


def _ai_page(request, task, round, *, assistant_form=None, generate_form=None, status=200):
    _, choices = _choices(task, Purpose.ASSIST)
    _, generate_choices = _choices(task, Purpose.GENERATE)
    current = RoundAssistant.objects.filter(round=round).first()
    initial = {"model": current.model_id, "enabled": current.enabled, "ab_split": current.ab_split} if current else {}
    return _page(request, task, "ai_help.html", "dashboard", status=status, round=round,
                 assistant=current, assistant_form=assistant_form or AssistantForm(initial=initial, choices=choices),
                 generate_form=generate_form or GenerateForm(choices=generate_choices),
                 runs=GenerationRun.objects.filter(round=round).select_related("model"),
                 assisted=ai_selectors.assist_comparison(round), generated=ai_selectors.generated_comparison(round),
                 judge_form=judge_form_for(round))


@owner_console
def ai_page(request, task, number):
    """The round's AI help page."""
    return _ai_page(request, task, get_object_or_404(Round, task=task, number=number))


@require_POST
@owner_console
def set_assistant(request, task, number):
    """Save the round's writing assistant (``annotation.assist.set_assistant``)."""
    round = get_object_or_404(Round, task=task, number=number)
    models, choices = _choices(task)
    form = AssistantForm(request.POST, choices=choices)
    if form.is_valid():
        model = next((m for m in models if m.pk == form.cleaned_data["model"]), None)
        try:
            assist.set_assistant(round=round, model=model, enabled=form.cleaned_data["enabled"],
                                 ab_split=form.cleaned_data["ab_split"], acting_user=request.user)
        except RuleError as error:
            form.add_error("model" if error.field == "model" else None, error.message)
        else:
            messages.success(request, "The writing assistant is saved." if model else "The writing assistant is off.")
            return redirect("console:ai_help", code=task.code, number=number)
    return _ai_page(request, task, round, assistant_form=form, status=400)


@require_POST
@owner_console
def generate(request, task, number):
    """Queue a generation run (``annotation.generation.start_generation``)."""
    round = get_object_or_404(Round, task=task, number=number)
    models, choices = _choices(task)
    form = GenerateForm(request.POST, choices=choices)
    if form.is_valid():
        model = next(m for m in models if m.pk == form.cleaned_data["model"])
        try:
            generation.start_generation(round=round, model=model, per_context=form.cleaned_data["per_context"],
                                        acting_user=request.user)
        except RuleError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            messages.success(request, "The generator is queued; its progress shows below.")
            return redirect("console:ai_help", code=task.code, number=number)
    return _ai_page(request, task, round, generate_form=form, status=400 if form.errors else 409)


@owner_console
def run_progress(request, task, number, run_id):
    """One run's progress bar (polled by htmx while the run is queued or running)."""
    run = get_object_or_404(GenerationRun, pk=run_id, round__task=task, round__number=number)
    return _page(request, task, "_generation_run.html", "dashboard", run=run, round=run.round)
