"""The round's *Diversity* page in the owner's console: the near-duplicate rule (threshold, off / warn /
refuse) and the diversity report (Vendi, distinct-n, self-BLEU, near-duplicate pairs, clusters of
validated fooling examples). The rules stay in ``annotation/diversity/`` (``rules.set_round_rule``,
``report.request_round_diversity``); this module parses and renders."""

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render

from annotation.diversity import refresh, report, rules
from annotation.diversity_models import RoundDiversity, SimilarityMode
from console.views import owner_console
from dynabench.errors import RuleError
from tasks.models import Round


class SimilarityRuleForm(forms.Form):
    """The round's near-duplicate rule."""

    threshold = forms.FloatField(min_value=0.01, max_value=1.0, help_text="Cosine similarity of two examples' embeddings (0.9: close paraphrases).")
    mode = forms.ChoiceField(choices=SimilarityMode.choices)


@owner_console
def diversity_page(request, task, number):
    """GET: the page. POST ``action=rule``: save the rule; POST ``action=compute``: queue the report's job."""
    round = get_object_or_404(Round, task=task, number=number)
    rule = rules.round_rule(round)
    form = SimilarityRuleForm(initial={"threshold": rule.threshold, "mode": rule.mode})
    status = 200
    if request.method == "POST":
        action = request.POST.get("action")
        try:
            if action == "compute":
                report.request_round_diversity(round=round, acting_user=request.user)
                messages.success(request, "The diversity report is queued; its progress shows below.")
                return redirect("console:diversity", code=task.code, number=number)
            form = SimilarityRuleForm(request.POST)
            if form.is_valid():
                rules.set_round_rule(round=round, acting_user=request.user, **form.cleaned_data)
                messages.success(request, "The near-duplicate rule is saved.")
                return redirect("console:diversity", code=task.code, number=number)
            status = 400
        except RuleError as refused:
            form.add_error(refused.field if refused.field in form.fields else None, refused.message)
            status = refused.status_code
    diversity = RoundDiversity.objects.filter(round=round).first()
    authors = []
    if diversity and diversity.status == "done":
        per_author = diversity.figures.get("per_author", [])
        names = dict(get_user_model().objects.filter(pk__in=[a["author_id"] for a in per_author]).values_list("pk", "username"))
        authors = [{**a, "username": names.get(a["author_id"], a["author_id"])} for a in per_author]
    return render(request, "console/diversity.html", {
        "task": task, "section": "dashboard", "round": round, "form": form, "diversity": diversity, "authors": authors,
        "refresh_growth": settings.DYNABENCH_DIVERSITY_REFRESH, "first_report_at": refresh.FIRST_REPORT_AT,
    }, status=status)


@owner_console
def diversity_progress(request, task, number):
    """HTMX: the report's status line with its progress bar, polling itself while the job is queued or
    running; once it is done or failed, the page reloads (``HX-Refresh``) to show the figures or the reason."""
    round = get_object_or_404(Round, task=task, number=number)
    diversity = get_object_or_404(RoundDiversity, round=round)
    response = render(request, "console/_diversity_status.html", {"task": task, "round": round, "diversity": diversity})
    if diversity.status not in ("queued", "running"):
        response["HX-Refresh"] = "true"
    return response
