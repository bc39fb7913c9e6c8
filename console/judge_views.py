"""The console's AI validator of a round: the owner picks the judge on the *AI help* page
(``validation.judge.set_judge``); its agreement with people (``validation.judge_selectors.judge_report``)
shows on the round dashboard (``console/templates/console/_judge.html``).

For the task's owners only (``console.views.owner_console``). Views parse and render; the rules are in
``validation/judge.py``.
"""

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from console.views import owner_console
from dynabench.errors import RuleError
from tasks.loop import gate
from tasks.models import Purpose, Round
from validation import judge


class JudgeForm(forms.Form):
    model = forms.TypedChoiceField(coerce=int, required=False, empty_value=None, label="AI validator model")

    def __init__(self, *args, choices, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["model"].choices = [("", "— none (off) —"), *choices]


def judge_choices(task, *, consented_only: bool = True):
    """The models the owners may pick as judge: another user's endpoint only with its submitter's consent to
    ``judge`` (all of them for a POST, so that the service's refusal names whose consent is missing)."""
    models = judge.judges_for(task)
    models = gate.consented(models, Purpose.JUDGE) if consented_only else models
    return models, [(m.pk, f"{m.name} ({'endpoint' if m.is_endpoint else 'local language model'})") for m in models]


def judge_form_for(round, data=None) -> JudgeForm:
    """The AI help page's judge form, set to the round's current judge."""
    _, choices = judge_choices(round.task)
    current = judge.judge_of(round)
    return JudgeForm(data, initial={"model": current.model_id} if current else {}, choices=choices)


@require_POST
@owner_console
def set_judge(request, task, number):
    """Save the round's AI validator (``validation.judge.set_judge``); back to the AI help page, with the
    refusal's message when the service refuses (another user's endpoint without consent to ``judge``)."""
    round = get_object_or_404(Round, task=task, number=number)
    models, choices = judge_choices(task, consented_only=False)
    form = JudgeForm(request.POST, choices=choices)
    if not form.is_valid():
        messages.error(request, "Pick one of the listed models, or none.")
        return redirect("console:ai_help", code=task.code, number=number)
    model = next((m for m in models if m.pk == form.cleaned_data["model"]), None)
    try:
        judge.set_judge(round=round, model=model, acting_user=request.user)
    except RuleError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"{model.name} now votes on every example entering the validation queue; its votes "
                         "count for nothing and no validator sees them." if model else "The AI validator is off.")
    return redirect("console:ai_help", code=task.code, number=number)
