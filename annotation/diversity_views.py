"""The create page's near-duplicate readout: ``POST /tasks/<code>/write/closeness`` with the form's
fields answers how close the draft is to the round's examples (``annotation/diversity/rules.py``)."""

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from annotation import example_checks
from annotation.diversity import rules
from annotation.diversity_models import SimilarityMode
from annotation.htmx_views import _active_task, _annotator_page
from dynabench.errors import RuleError

MIN_CHARACTERS = 3
"""A draft shorter than this is not compared."""


@require_POST
@_annotator_page
def closeness(request, code):
    """The ``_closeness.html`` partial for the draft in the form: "close to N examples in this round
    (M of yours)" and the annotator's own closest examples, never anyone else's text. Empty when the
    round's rule is off or the draft is too short; a user who may not write gets the refusal's message."""
    task = _active_task(code)
    round = task.current_round()
    if round is None:
        return HttpResponse("")
    try:
        example_checks.check_annotator(user=request.user, task=task)
    except RuleError as refused:
        return HttpResponse(refused.message, status=refused.status_code)
    rule = rules.round_rule(round)
    draft = {f["name"]: request.POST.get(f["name"], "") for f in task.config["input_fields"]}
    text = task.spec.written_text(task.config, draft)
    if rule.mode == SimilarityMode.OFF or len(text) < MIN_CHARACTERS:
        return HttpResponse("")
    close = rules.closeness(round=round, user=request.user, text=text[:example_checks.DEFAULT_MAX_LENGTH], threshold=rule.threshold)
    return render(request, "annotation/_closeness.html", {"close": close, "rule": rule, "refuse": rule.mode == SimilarityMode.REFUSE})
