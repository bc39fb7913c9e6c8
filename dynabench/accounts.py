"""Sign-up; log-in and log-out are Django's own views (``django.contrib.auth.urls``)."""

from django import forms
from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import Group
from django.shortcuts import redirect, render, resolve_url
from django.utils.http import url_has_allowed_host_and_scheme

from dynabench.roles import SIGNUP_ROLES


class SignupForm(UserCreationForm):
    email = forms.EmailField(required=False)
    roles = forms.MultipleChoiceField(
        choices=[(r, r.capitalize()) for r in SIGNUP_ROLES],
        initial=["annotator", "validator"],
        widget=forms.CheckboxSelectMultiple,
        help_text="What you want to do here. You can ask an admin for more later.",
    )

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")


def _next_url(request) -> str:
    wanted = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return wanted
    return resolve_url(settings.LOGIN_REDIRECT_URL)


def signup(request):
    """Create an account in the chosen roles, log it in and go to ``next`` (a local URL) or the tasks."""
    if request.user.is_authenticated:
        return redirect(_next_url(request))
    if request.method == "POST":
        form = SignupForm(request.POST)
        if form.is_valid():
            user = form.save()
            user.groups.add(*Group.objects.filter(name__in=form.cleaned_data["roles"]))
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect(_next_url(request))
    else:
        form = SignupForm()
    return render(request, "registration/signup.html", {"form": form, "next": request.GET.get("next", "")})
