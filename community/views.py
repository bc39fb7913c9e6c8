"""Notification pages: the list (HTMX fragment too), mark read, preferences. Views parse and render;
``community.services`` writes."""

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from community import selectors, services
from community.badges import set_task_badges
from community.models import Notification, TaskBadges
from tasks.models import Task


class PreferencesForm(forms.Form):
    email = forms.BooleanField(required=False, label="Also send my notifications by email")
    digest = forms.BooleanField(required=False, label="As one email a day (a digest) rather than one each")
    muted = forms.MultipleChoiceField(
        required=False, choices=Notification.Kind.choices, widget=forms.CheckboxSelectMultiple,
        label="Do not notify me when",
    )


@login_required
def notification_list(request):
    """The user's notifications, newest first (for an HTMX request, the list alone and the bell
    with its new unread count, swapped out of band)."""
    context = {"notifications": selectors.recent(request.user), "unread": selectors.unread_count(request.user),
               "oob_bell": getattr(request, "htmx", False)}
    template = "community/_list.html" if getattr(request, "htmx", False) else "community/notifications.html"
    return render(request, template, context)


@login_required
@require_POST
def mark_read(request, pk=None):
    """Mark one notification (``pk``) or all of them read, then show the list again."""
    services.mark_read(user=request.user, notification_id=pk)
    if getattr(request, "htmx", False):
        return notification_list(request)
    return redirect("community:notifications")


@login_required
def preferences(request):
    """Email on or off, and the kinds of notification the user does not want."""
    prefs = services.preferences(request.user)
    if request.method == "POST":
        form = PreferencesForm(request.POST)
        if form.is_valid():
            services.set_preferences(user=request.user, email=form.cleaned_data["email"], muted=form.cleaned_data["muted"],
                                     digest=form.cleaned_data["digest"])
            return redirect("community:preferences")
    else:
        form = PreferencesForm(initial={"email": prefs.email, "digest": prefs.digest, "muted": prefs.muted})
    return render(request, "community/preferences.html", {"form": form})


@login_required
def task_badges(request, code):
    """Owners: turn the task's badges on or off (``community.badges.set_task_badges``)."""
    task = get_object_or_404(Task, code=code)
    if not task.is_owner(request.user):
        return HttpResponseForbidden(f"Only owners of task '{task.code}' can turn its badges on or off.")
    if request.method == "POST":
        set_task_badges(task=task, actor=request.user, enabled=request.POST.get("enabled") == "on")
        return redirect("community:task_badges", code=task.code)
    setting = TaskBadges.objects.filter(task=task).first()
    return render(request, "community/task_badges.html", {"task": task, "enabled": setting is None or setting.enabled})
