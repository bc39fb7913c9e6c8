"""Sign-up, the API token page, the rate-limited password reset request and the login lockout
answer; log-in, log-out and the rest of the reset flow are Django's own views
(``django.contrib.auth.urls``)."""

import hashlib

from axes.helpers import get_client_username, get_cool_off, get_failure_limit
from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import Group
from django.http import HttpResponseBadRequest, JsonResponse
from django.shortcuts import redirect, render, resolve_url
from django.utils.http import url_has_allowed_host_and_scheme
from rest_framework.authtoken.models import Token

from dynabench import backends
from dynabench.proxies import client_ip
from dynabench.ratelimits import count_hit
from dynabench.roles import OPTIONAL_SIGNUP_ROLES, SIGNUP_ROLES

RESET_WINDOW_S = 3600
SIGNUP_WINDOW_S = 86400


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
    """Create an account (annotator, plus researcher if ticked), log it in and go to ``next`` (a local URL) or the tasks.

    At most ``SIGNUP_PER_ADDRESS_PER_DAY`` accounts a day (fixed window of 24 h) from one client
    address (``dynabench.proxies.client_ip``; 0: no limit): past it, 429 with
    ``registration/signup_limited.html`` and no account. Per-account limits (daily example caps,
    submissions a minute) are what one person gets; this keeps one person from multiplying them
    with throwaway accounts."""
    if request.user.is_authenticated:
        return redirect(_next_url(request))
    if request.method == "POST":
        form = SignupForm(request.POST)
        if form.is_valid():
            refused = _signup_over_limit(request)
            if refused:
                return refused
            user = form.save()
            user.groups.add(*Group.objects.filter(name__in=[*SIGNUP_ROLES, *form.cleaned_data["roles"]]))
            login(request, user, backend=backends.PATH)
            return redirect(_next_url(request))
    else:
        form = SignupForm()
    return render(request, "registration/signup.html", {"form": form, "next": request.GET.get("next", "")})


def _signup_over_limit(request):
    """Count one account created from the client's address; the 429 page past the day's limit, else None."""
    limit = settings.SIGNUP_PER_ADDRESS_PER_DAY
    if limit <= 0:
        return None
    digest = hashlib.sha256(client_ip(request).encode()).hexdigest()[:32]
    count, resets_in = count_hit(f"signup:address:{digest}", window_s=SIGNUP_WINDOW_S)
    if count <= limit:
        return None
    hours = max(1, -(-resets_in // 3600))
    response = render(request, "registration/signup_limited.html", {"limit": limit, "hours": hours}, status=429)
    response["Retry-After"] = str(resets_in)
    return response


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


class PasswordResetView(auth_views.PasswordResetView):
    """Django's password reset request, limited per clock hour to
    ``PASSWORD_RESET_PER_ADDRESS_PER_HOUR`` requests from one client address (every POST counts)
    and ``PASSWORD_RESET_PER_EMAIL_PER_HOUR`` for one email address (counted whether or not an
    account has it, so the limit tells nothing about accounts). Past either: 429 with
    ``registration/password_reset_limited.html`` saying when to try again; no email is sent."""

    def post(self, request, *args, **kwargs):
        refused = self._over_limit("address", client_ip(request), settings.PASSWORD_RESET_PER_ADDRESS_PER_HOUR)
        if refused:
            return refused
        form = self.get_form()
        if not form.is_valid():
            return self.form_invalid(form)
        email = form.cleaned_data["email"].strip().lower()
        refused = self._over_limit("email", email, settings.PASSWORD_RESET_PER_EMAIL_PER_HOUR)
        return refused or self.form_valid(form)

    def _over_limit(self, scope: str, value: str, limit: int):
        """Count one request for ``scope`` (``address`` or ``email``); the 429 page past ``limit`` (0: no limit), else None."""
        if limit <= 0:
            return None
        digest = hashlib.sha256(value.encode()).hexdigest()[:32]
        count, resets_in = count_hit(f"password-reset:{scope}:{digest}", window_s=RESET_WINDOW_S)
        if count <= limit:
            return None
        minutes = max(1, -(-resets_in // 60))
        context = {"limit": limit, "scope": scope, "minutes": minutes}
        response = render(self.request, "registration/password_reset_limited.html", context, status=429)
        response["Retry-After"] = str(resets_in)
        return response


def lockout_response(request, original_response=None, credentials=None):
    """django-axes' answer to a locked-out log-in (``AXES_LOCKOUT_CALLABLE``): 429 with
    ``registration/locked_out.html``, or ``{"code": "locked_out", "detail", "failure_limit",
    "cooloff_seconds"}`` for an XMLHttpRequest, with no ``Access-Control-Allow-*`` headers (axes'
    own JSON reply allows every origin)."""
    cool_off = get_cool_off(request)
    context = {
        "failure_limit": get_failure_limit(request, credentials),
        "username": get_client_username(request, credentials) or "",
        "cooloff_timedelta": cool_off,
    }
    status = settings.AXES_HTTP_RESPONSE_CODE
    if request.META.get("HTTP_X_REQUESTED_WITH") == "XMLHttpRequest":
        detail = f"Too many failed log-ins for this username from this address; try again in {cool_off}."
        body = {
            "code": "locked_out", "detail": detail, "failure_limit": context["failure_limit"],
            "cooloff_seconds": int(cool_off.total_seconds()) if cool_off else None,
        }
        return JsonResponse(body, status=status)
    return render(request, "registration/locked_out.html", context, status=status)
