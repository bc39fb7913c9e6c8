"""A task's content warning: shown once per session before anyone writes or validates its examples
(``annotation.selectors.needs_content_warning``: not to someone who already wrote one), and after
*I understand, continue* back to the page that asked for it, its query string (``?mode=conversation``)
kept."""

from __future__ import annotations

from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme

from annotation.selectors import needs_content_warning

SESSION_KEY = "content_warning_seen"


def acknowledged(request, task) -> bool:
    """True when ``request``'s session acknowledged ``task``'s warning."""
    return task.pk in request.session.get(SESSION_KEY, [])


def page_if_needed(request, task):
    """The warning page when ``request.user`` must read ``task``'s warning first (its form returns to
    this very page, ``next``), else None."""
    if needs_content_warning(user=request.user, task=task, acknowledged=acknowledged(request, task)):
        return render(request, "annotation/content_warning.html", {"task": task, "next": request.get_full_path()})
    return None


def acknowledge(request, task):
    """Remember in the session that the user read ``task``'s warning; redirect to the posted ``next``
    when it is a page of this task on this site, else to the task's create page."""
    seen = request.session.get(SESSION_KEY, [])
    if task.pk not in seen:
        request.session[SESSION_KEY] = [*seen, task.pk]
    wanted = request.POST.get("next") or ""
    if wanted.startswith(f"/tasks/{task.code}/") and url_has_allowed_host_and_scheme(
            wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return redirect(wanted)
    return redirect("annotation:create", code=task.code)
