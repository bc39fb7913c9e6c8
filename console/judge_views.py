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
from validation.judge_models import RoundJudge

#: The ``RoundJudge`` settings the form edits (``validation.judge.set_judge``'s keywords).
SETTINGS = ("policy", "kappa_threshold", "min_settled", "triage_confidence", "ab_split")


class JudgeForm(forms.Form):
    model = forms.TypedChoiceField(coerce=int, required=False, empty_value=None, label="AI validator model")
    policy = forms.ChoiceField(choices=RoundJudge.Policy.choices, initial=RoundJudge.Policy.OFF, label="Does its vote count?")
    kappa_threshold = forms.FloatField(min_value=-1, max_value=1, initial=0.6,
                                       label="It counts while its κ against people is above")
    min_settled = forms.IntegerField(min_value=1, initial=50, label="…on at least this many settled examples")
    triage_confidence = forms.FloatField(min_value=0, max_value=1, initial=0.9, label="Triage: confidence that saves one vote")
    ab_split = forms.BooleanField(required=False, label="A/B split: only a stable half of the examples is under the policy")

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
    initial = {name: getattr(current, name) for name in SETTINGS} | {"model": current.model_id} if current else {}
    return JudgeForm(data, initial=initial, choices=choices)


@require_POST
@owner_console
def set_judge(request, task, number):
    """Save the round's AI validator (``validation.judge.set_judge``); back to the AI help page, with the
    refusal's message when the service refuses (another user's endpoint without consent to ``judge``)."""
    round = get_object_or_404(Round, task=task, number=number)
    models, choices = judge_choices(task, consented_only=False)
    form = JudgeForm(request.POST, choices=choices)
    if not form.is_valid():
        messages.error(request, " ".join(f"{form.fields[name].label}: {' '.join(errors)}" if name in form.fields else
                                         " ".join(errors) for name, errors in form.errors.items()))
        return redirect("console:ai_help", code=task.code, number=number)
    model = next((m for m in models if m.pk == form.cleaned_data["model"]), None)
    try:
        judge.set_judge(round=round, model=model, acting_user=request.user,
                        **{name: form.cleaned_data[name] for name in SETTINGS})
    except RuleError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"{model.name} now votes on every example entering the validation queue; its votes "
                         "count for nothing and no validator sees them." if model else "The AI validator is off.")
    return redirect("console:ai_help", code=task.code, number=number)
