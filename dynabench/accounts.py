"""Sign-up; log-in and log-out are Django's own views (``django.contrib.auth.urls``)."""

from django import forms
from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import Group
from django.shortcuts import redirect, render

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


def signup(request):
    if request.method == "POST":
        form = SignupForm(request.POST)
        if form.is_valid():
            user = form.save()
            user.groups.add(*Group.objects.filter(name__in=form.cleaned_data["roles"]))
            login(request, user)
            return redirect("tasks:list")
    else:
        form = SignupForm()
    return render(request, "registration/signup.html", {"form": form})
