"""The console's page of one endpoint model: its connection to change and a *Test connection* button.

``/tasks/<code>/console/endpoints/<id>/``: GET shows the connection (the key never: only whether one is
set); POST saves it through ``tasks.loop.endpoints.records.update_endpoint``, the function the admin and
``PATCH /api/v1/models/{id}/endpoint`` call. ``.../test`` (POST) sends one tiny message through
``tasks.loop.endpoints.probe.acheck_connection`` (through the gate, purpose ``test``: a submitter's
endpoint is theirs to test) and shows the answer or the server's own reason; it is
an async view, so waiting on the endpoint holds no thread. Both are for the task's owners (403 for
anyone else, checked here on the server) and 404 for a model that is not one of the task's endpoints.
"""

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_POST

from console.forms import EndpointConnectionForm
from console.views import owner_console
from dynabench.errors import RuleError
from tasks.loop.endpoints.breaker import breaker_state
from tasks.loop.endpoints.keys import has_api_key
from tasks.loop import gate
from tasks.loop.endpoints.probe import ConnectionCheck, acheck_connection
from tasks.loop.endpoints.records import update_endpoint
from tasks.models import Endpoint, MLModel, Purpose, Task


def _endpoint(task, model_id) -> Endpoint:
    return get_object_or_404(Endpoint.objects.select_related("model__task"), model_id=model_id, model__task=task,
                             model__kind=MLModel.Kind.ENDPOINT)


def _page(request, task, endpoint, form=None, check=None, status=200):
    return render(request, "console/endpoint.html", {
        "task": task, "section": "rounds", "model": endpoint.model, "endpoint": endpoint, "check": check,
        "form": form or EndpointConnectionForm(endpoint=endpoint), "key_set": has_api_key(endpoint),
        "breaker": breaker_state(endpoint.model),
    }, status=status)


@owner_console
def endpoint_page(request, task, model_id):
    """GET: the connection form. POST: save it (``update_endpoint``); refusals (a URL off the allow-list, a
    stored key that would go to another server, ...) show on the form with their 4xx."""
    endpoint = _endpoint(task, model_id)
    if request.method != "POST":
        return _page(request, task, endpoint)
    form = EndpointConnectionForm(request.POST, endpoint=endpoint)
    status = 400
    if form.is_valid():
        checksum = endpoint.model.checksum
        try:
            model = update_endpoint(model=endpoint.model, acting_user=request.user, **form.changes())
        except RuleError as refused:
            form.add_error(refused.field if refused.field in form.fields else None, refused.message)
            status = refused.status_code
        else:
            again = " Its answers may change, so the leaderboard evaluates it again." if model.checksum != checksum else ""
            messages.success(request, f"Connection of '{model.name}' saved.{again}")
            return redirect("console:endpoint", code=task.code, model_id=model.pk)
    return _page(request, task, endpoint, form=form, status=status)


def _owned_endpoint(user, code, model_id):
    """``(task, endpoint)`` when ``user`` owns the task, ``(task, None)`` when not; ``Http404`` for an unknown task or model."""
    task = get_object_or_404(Task, code=code)
    if not task.is_owner(user):
        return task, None
    return task, _endpoint(task, model_id)


@require_POST
async def endpoint_test(request, code, model_id):
    """*Test connection*: one call (``acheck_connection``); the result as a fragment for htmx, else the whole page."""
    user = await request.auser()
    if not user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    task, endpoint = await sync_to_async(_owned_endpoint)(user, code, model_id)
    if endpoint is None:
        return await sync_to_async(render)(request, "validation/forbidden.html", {
            "task": task, "message": f"Only owners of task '{task.code}' can open its console."}, status=403)
    try:
        async with gate.aadmit(endpoint.model, Purpose.TEST, user=user):
            check = await acheck_connection(endpoint)
    except RuleError as refused:
        check = ConnectionCheck(False, refused.message, refused.code)
    status = 200 if check.ok else 502
    if request.headers.get("HX-Request"):
        html = await sync_to_async(render_to_string)("console/_connection_test.html", {"check": check}, request=request)
        return HttpResponse(html, status=200)  # htmx swaps 2xx only: the fragment itself says it failed
    return await sync_to_async(_page)(request, task, endpoint, check=check, status=status)

