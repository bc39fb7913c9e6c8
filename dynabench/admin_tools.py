"""Admin plumbing shared by every app's ``admin.py``.

``OwnerScopedAdmin``: admins (superusers) see everything; a task owner who is staff sees
and picks only rows of the tasks they own, in lists, change pages and foreign-key
choices (including autocomplete and raw-id fields, whose submitted values are checked
against the same scoped querysets). Its editable JSON fields (``BoundedJSONField``, also on
inlines that take ``BoundedJSONMixin``) refuse documents nested deeper than
``dynabench.jsonbounds.MAX_JSON_DEPTH`` with a field error instead of a server error.
"""

import json

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.text import Truncator

from dynabench.jsonbounds import JSONTooDeep, loads_bounded

# How to reach a task's owners from each model that hangs off a task.
OWNER_PATHS = {
    ("tasks", "task"): "owners",
    ("tasks", "round"): "task__owners",
    ("tasks", "context"): "round__task__owners",
    ("tasks", "mlmodel"): "task__owners",
    ("tasks", "dataset"): "task__owners",
    ("tasks", "datasetitem"): "dataset__task__owners",
    ("tasks", "taskrole"): "task__owners",
    ("tasks", "taskban"): "task__owners",
    ("tasks", "upload"): "task__owners",
    ("annotation", "example"): "round__task__owners",
    ("annotation", "qualification"): "task__owners",
    ("annotation", "crowdstudy"): "round__task__owners",
    ("validation", "golditem"): "round__task__owners",
    ("validation", "validatorstanding"): "task__owners",
    ("validation", "roundpay"): "round__task__owners",
    ("validation", "validation"): "example__round__task__owners",
    ("leaderboard", "evaluationrun"): "model__task__owners",
    ("leaderboard", "leaderboardconfig"): "task__owners",
}


def scope_to_owner(queryset, user):
    """Return ``queryset`` limited to rows of tasks ``user`` owns (unchanged for admins)."""
    if user.is_superuser:
        return queryset
    path = OWNER_PATHS.get((queryset.model._meta.app_label, queryset.model._meta.model_name))
    if path is None:
        return queryset
    return queryset.filter(**{path: user}).distinct()


class BoundedJSONField(forms.JSONField):
    """Django's JSON form field parsed with the platform's nesting limit (``loads_bounded``): a
    document nested deeper than ``MAX_JSON_DEPTH`` is the field error ``too_deep``, and the form
    shows again with what was typed (Django's own field recursed into a ``RecursionError``, a 500)."""

    default_error_messages = {
        "too_deep": "This JSON nests arrays or objects more than %(limit)s levels deep; flatten it.",
    }

    def to_python(self, value):
        if self.disabled or not isinstance(value, str) or value in self.empty_values:
            return super().to_python(value)
        try:
            converted = loads_bounded(value, cls=self.decoder)
        except JSONTooDeep as error:
            raise ValidationError(self.error_messages["too_deep"], code="too_deep", params={"limit": error.limit}) from None
        except json.JSONDecodeError:
            raise ValidationError(self.error_messages["invalid"], code="invalid", params={"value": value}) from None
        return forms.fields.JSONString(converted) if isinstance(converted, str) else converted

    def bound_data(self, data, initial):
        if self.disabled or data is None:
            return super().bound_data(data, initial)
        try:
            return loads_bounded(data, cls=self.decoder)
        except ValueError:  # not JSON, or too deep: shown again as typed
            return forms.fields.InvalidJSONInput(data)


class BoundedJSONMixin:
    """Admin (or inline) whose form fields for ``models.JSONField`` are ``BoundedJSONField``."""

    formfield_overrides = {models.JSONField: {"form_class": BoundedJSONField}}


class OwnerScopedMixin(BoundedJSONMixin):
    def get_queryset(self, request):
        return scope_to_owner(super().get_queryset(request), request.user)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if not request.user.is_superuser and "queryset" not in kwargs:
            kwargs["queryset"] = scope_to_owner(db_field.remote_field.model._default_manager.all(), request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if not request.user.is_superuser and "queryset" not in kwargs:
            kwargs["queryset"] = scope_to_owner(db_field.remote_field.model._default_manager.all(), request.user)
        return super().formfield_for_manytomany(db_field, request, **kwargs)


class OwnerScopedAdmin(OwnerScopedMixin, admin.ModelAdmin):
    list_per_page = 50


class MonospaceTextarea(forms.Textarea):
    """A textarea in a monospace font, styled from a static file (the CSP allows no style attributes)."""

    class Media:
        css = {"all": ["css/admin.css"]}

    def __init__(self, attrs=None):
        super().__init__({"rows": 24, "cols": 100, "class": "monospace", **(attrs or {})})


class PrettyJSONField(BoundedJSONField):
    """A JSON form field (nesting-limited) shown indented in a monospace textarea."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MonospaceTextarea())
        super().__init__(*args, **kwargs)

    def prepare_value(self, value):
        if isinstance(value, forms.fields.InvalidJSONInput):
            return value
        return json.dumps(value, indent=2, ensure_ascii=False, cls=self.encoder)


def short(value, length: int = 80) -> str:
    """Return ``value`` (text or JSON) on one line, cut to ``length`` characters, for list columns."""
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False)
    return Truncator(" ".join(value.split())).chars(length)
