"""Sign-up and the API token page; log-in and log-out are Django's own views (``django.contrib.auth.urls``)."""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import Group
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render, resolve_url
from django.utils.http import url_has_allowed_host_and_scheme
from rest_framework.authtoken.models import Token

from dynabench.roles import OPTIONAL_SIGNUP_ROLES, SIGNUP_ROLES


class SignupForm(UserCreationForm):
    email = forms.EmailField(required=False)
    roles = forms.MultipleChoiceField(
        choices=[(r, r.capitalize()) for r in OPTIONAL_SIGNUP_ROLES],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Every account writes examples (annotator). Tick researcher to submit models. "
        "Validating a task is granted by its owners or by passing its qualification.",
    )

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")


def _next_url(request) -> str:
    wanted = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return wanted
    return resolve_url(settings.LOGIN_REDIRECT_URL)


def signup(request):
    """Create an account (annotator, plus researcher if ticked), log it in and go to ``next`` (a local URL) or the tasks."""
    if request.user.is_authenticated:
        return redirect(_next_url(request))
    if request.method == "POST":
        form = SignupForm(request.POST)
        if form.is_valid():
            user = form.save()
            user.groups.add(*Group.objects.filter(name__in=[*SIGNUP_ROLES, *form.cleaned_data["roles"]]))
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect(_next_url(request))
    else:
        form = SignupForm()
    return render(request, "registration/signup.html", {"form": form, "next": request.GET.get("next", "")})


@login_required
def api_token(request):
    """The user's API token for the REST API and the Python client: show it, create it, revoke it.

    GET shows whether a token exists (and the token itself, to its owner only); POST with
    ``action=create`` issues one (the existing one if any), ``action=revoke`` deletes it.
    """
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "create":
            Token.objects.get_or_create(user=request.user)
            messages.success(request, "Your API token is ready. Keep it secret: it acts as you.")
        elif action == "revoke":
            Token.objects.filter(user=request.user).delete()
            messages.success(request, "Your API token is revoked; programs using it are logged out.")
        else:
            return HttpResponseBadRequest("Say action=create or action=revoke.")
        return redirect("api_token")
    token = Token.objects.filter(user=request.user).first()
    return render(request, "registration/api_token.html", {"token": token})
