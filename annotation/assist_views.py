"""*Suggest* on the create page: the round's writing assistant proposes an example, which fills the form
for the annotator to edit, submit or discard (``annotation/assist.py`` decides; this view parses and renders).

An async view: while the assistant writes, no thread waits (``dynabench/asgi.py``); the form and the
rendering run on the request's thread, as in ``htmx_views.submit_example``.
"""

from asgiref.sync import sync_to_async
from django.http import HttpResponse
from django.views.decorators.http import require_POST

from annotation import assist
from annotation.forms import ExampleForm
from annotation.htmx_views import _auser, _expired, _log_in_first, _active_task, _render_workspace
from dynabench.errors import RuleError

SUGGESTED = "The assistant's suggestion is in the form: check it, edit it, then submit, or discard it."


@require_POST
async def suggest(request, code):
    """Ask the assistant for an example for the context of the posted form (its ``token``), and show
    the workspace with the suggestion filled in; ``discard=1`` shows the context's form empty again.
    A refusal (no assistant for this user, the assistant failing, the budget spent) keeps the form as
    it was, with the reason above it, at the rule's status."""
    user = await _auser(request)
    if not user.is_authenticated:
        return _log_in_first(request)
    parsed = await sync_to_async(_parse)(request, code)
    if isinstance(parsed, HttpResponse):
        return parsed
    task, form = parsed
    if request.POST.get("discard"):
        return await sync_to_async(_render_workspace)(request, task, context=form.context, notice="Suggestion discarded.",
                                                      initial={"token": form.cleaned_data["token"]})
    try:
        suggestion = await assist.asuggest(user=user, context=form.context)
    except RuleError as error:
        return await sync_to_async(_refused)(request, task, form, error)
    initial = {**suggestion.input, **suggestion.form, "token": form.cleaned_data["token"], "suggestion": suggestion.token}
    return await sync_to_async(_render_workspace)(request, task, context=form.context, initial=initial, notice=SUGGESTED)


def _parse(request, code):
    task = _active_task(code)
    form = ExampleForm(request.POST, task=task)
    if not form.is_valid() and form.context is None:
        return _expired(request, task, form)
    return task, form


def _refused(request, task, form, error: RuleError):
    form.add_error(None, error.message)
    status = 422 if error.status_code == 400 else error.status_code
    return _render_workspace(request, task, context=form.context, form=form, status=status)
