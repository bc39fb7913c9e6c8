"""Task owners' pages for crowd quality and pay: gold items and validator standing, and what a
round's crowd workers earned (with the platforms' bonus files).

Views parse and render; rules live in ``validation/gold.py`` and ``validation/pay.py``. Every
page here is for the task's owners (and admins) only: they carry platform worker ids (pay
files) and gold verdicts (gold page).
"""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from annotation.models import CrowdStudy, Example
from dynabench.errors import RuleError
from tasks.models import Round, Task
from validation import gold, pay, services


class MarkGoldForm(forms.Form):
    example = forms.IntegerField(min_value=1, label="Example id")
    active = forms.BooleanField(required=False, initial=True, label="Served in the queue")


class SupplyGoldForm(forms.Form):
    """A new gold item: the task's input fields, its target fields (``task.spec.form_fields``)
    and the verdict a careful validator gives."""

    verdict = forms.ChoiceField(choices=[("correct", "Correct"), ("incorrect", "Incorrect")], label="Verdict")

    def __init__(self, *args, task, **kwargs):
        super().__init__(*args, **kwargs)
        self.task = task
        for field in task.config["input_fields"]:
            self.fields[f"input_{field['name']}"] = forms.CharField(
                label=field.get("label", field["name"]), widget=forms.Textarea(attrs={"rows": 2}), required=False
            )
        for name, field in task.spec.form_fields(task.config).items():
            self.fields[name] = field

    def example_input(self) -> dict:
        return {f["name"]: self.cleaned_data.get(f"input_{f['name']}", "") for f in self.task.config["input_fields"]}

    def target(self) -> dict | None:
        return self.task.spec.target_from_form(self.cleaned_data)


class RoundPayForm(forms.Form):
    currency = forms.CharField(max_length=3, initial="GBP")
    per_example = forms.CharField(max_length=12, label="Per accepted example")
    per_validation = forms.CharField(max_length=12, label="Per accepted validation")
    bonus_per_fooling = forms.CharField(max_length=12, label="Bonus per validated model-fooling example")
    reason = forms.CharField(max_length=255, required=False, label="Reason shown to MTurk workers")
    transfer_min_models = forms.CharField(max_length=4, required=False, label="Transfer bonus: fools at least this many other models (blank: none)")
    transfer_bonus = forms.CharField(max_length=12, required=False, label="Transfer bonus per such accepted example")


def _owned_task(request, code) -> Task | None:
    task = get_object_or_404(Task, code=code)
    return task if task.is_owner(request.user) else None


def _forbidden(request, task):
    return render(request, "validation/forbidden.html", {"task": task, "message": "Only an owner of this task may see this page."}, status=403)


@login_required
def gold_page(request, code):
    """GET: the task's gold settings, each validator's gold accuracy (who stopped counting and
    why) and the gold items; POST: mark a settled example as gold, or switch one off; POST
    with ``supply``: write a new gold item in the current round (``services.supply_gold_item``)."""
    task = _owned_task(request, code)
    if task is None:
        return _forbidden(request, get_object_or_404(Task, code=code))
    supplying = request.method == "POST" and "supply" in request.POST
    form = MarkGoldForm(None if supplying else (request.POST or None))
    supply = SupplyGoldForm(request.POST if supplying else None, task=task)
    status = 200
    if supplying:
        round = task.current_round()
        if supply.is_valid() and round is not None:
            try:
                item = services.supply_gold_item(round=round, acting_user=request.user, input=supply.example_input(),
                                                 target=supply.target(), verdict=supply.cleaned_data["verdict"])
            except RuleError as exc:
                supply.add_error(None, exc.message)
                status = exc.status_code
            else:
                messages.success(request, f"Gold item written: example {item.example_id} ({item.verdict}).")
                return redirect("validation:gold", code=task.code)
        else:
            if round is None:
                supply.add_error(None, f"{task.name} has no round yet.")
            status = 400
    elif request.method == "POST":
        if form.is_valid():
            example = Example.objects.filter(pk=form.cleaned_data["example"], round__task=task).select_related("round__task").first()
            if example is None:
                form.add_error("example", f"Task {task.code} has no example {form.cleaned_data['example']}.")
                status = 400
            else:
                try:
                    item = gold.mark_gold(example=example, acting_user=request.user, active=form.cleaned_data["active"])
                except RuleError as exc:
                    form.add_error("example", exc.message)
                    status = exc.status_code
                else:
                    messages.success(request, f"Example {example.pk} is a gold item ({item.verdict}){'' if item.active else ', switched off'}.")
                    return redirect("validation:gold", code=task.code)
        else:
            status = 400
    return render(request, "validation/gold.html", {
        "task": task, "report": gold.gold_report(task), "form": form, "supply": supply,
    }, status=status)


@login_required
def pay_page(request, code, number):
    """GET: the round's pay settings and each crowd worker's accepted work and pay, with totals;
    POST: save the pay settings (400 naming the field at fault)."""
    task = _owned_task(request, code)
    if task is None:
        return _forbidden(request, get_object_or_404(Task, code=code))
    round = get_object_or_404(Round, task=task, number=number)
    current = pay.round_pay(round)
    form = RoundPayForm(request.POST or None, initial={
        "currency": current.currency, "per_example": current.per_example, "per_validation": current.per_validation,
        "bonus_per_fooling": current.bonus_per_fooling, "reason": current.reason,
        "transfer_min_models": current.transfer_min_models or "", "transfer_bonus": current.transfer_bonus,
    })
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                pay.set_round_pay(round=round, acting_user=request.user, **form.cleaned_data)
            except RuleError as exc:
                form.add_error(exc.field if exc.field in form.fields else None, exc.message)
                status = exc.status_code
            else:
                messages.success(request, "Pay settings saved.")
                return redirect("validation:pay", code=task.code, number=round.number)
        else:
            status = 400
    platforms = []
    for platform in CrowdStudy.objects.filter(round=round).values_list("platform", flat=True).distinct():
        rows = pay.pay_rows(round, platform=platform)
        platforms.append({"platform": platform, "label": CrowdStudy.Platform(platform).label, "rows": rows, "totals": pay.totals(rows)})
    return render(request, "validation/pay.html", {
        "task": task, "round": round, "pay": current, "form": form, "platforms": platforms,
    }, status=status)


@login_required
def pay_file(request, code, number, platform):
    """The bonus file of ``platform`` (``prolific``: bulk bonus lines; ``mturk``: SendBonus CSV),
    ``summary`` (every platform's workers with totals) or ``transfer`` (each example that earned the
    transfer bonus), as a download."""
    task = _owned_task(request, code)
    if task is None:
        return _forbidden(request, get_object_or_404(Task, code=code))
    round = get_object_or_404(Round, task=task, number=number)
    settings = pay.round_pay(round)
    if platform in ("summary", "transfer"):
        rows = [row for p in CrowdStudy.Platform.values for row in pay.pay_rows(round, platform=p)]
    if platform == "summary":
        name = f"{task.code}-r{round.number}-pay-summary.csv"
        text = pay.summary_csv(rows, currency=settings.currency, transfer=settings.transfer_min_models is not None)
    elif platform == "transfer":
        name = f"{task.code}-r{round.number}-transfer-bonus.csv"
        text = pay.transfer_bonus_csv(rows, currency=settings.currency, amount=settings.transfer_bonus)
    elif platform in CrowdStudy.Platform.values:
        name, text = pay.bonus_file(round, platform=platform)
    else:
        return HttpResponse(f"Unknown file '{platform}': use prolific, mturk, summary or transfer.", status=404, content_type="text/plain")
    return HttpResponse(text, content_type="text/csv", headers={"Content-Disposition": f'attachment; filename="{name}"'})
