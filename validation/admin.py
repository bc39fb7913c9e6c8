"""The maintainers' admin for validations, and what the validation app adds to the admin of
the apps below it (they cannot import this app):

- ``Validation``: read-only (validations are recorded by ``validation/services.py``, which
  keeps each example's validation state and counts in the same transaction).
- ``Example``: ``annotation.admin.ExampleAdmin`` plus each example's validations inline.
- ``Task`` and ``Round``: ``tasks.admin.TaskAdmin`` / ``RoundAdmin`` plus the round lifecycle
  (close into datasets, export) and retraining actions, and each round's counts and vMER.
"""

from django.contrib import admin

from annotation import admin as annotation_admin
from annotation.models import Example
from annotation.selectors import round_counts
from dynabench.admin_tools import OwnerScopedAdmin
from tasks import admin as tasks_admin
from tasks.models import Round, Task
from validation.admin_actions import close_rounds_into_datasets, export_rounds_jsonl, retrain_target_models
from validation.models import GoldItem, RoundPay, Validation, ValidatorStanding


@admin.register(Validation)
class ValidationAdmin(OwnerScopedAdmin):
    list_display = ("id", "example", "validator", "label", "mode", "created_at")
    list_filter = ("label", "mode", "example__round__task")
    list_select_related = ("example__round__task", "validator")
    search_fields = ("=example__id", "validator__username")
    date_hierarchy = "created_at"
    raw_id_fields = ("example", "validator")
    readonly_fields = ("example", "validator", "label", "mode", "metadata", "created_at")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ValidationInline(admin.TabularInline):
    model = Validation
    fields = ("validator", "label", "mode", "metadata", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


class ExampleAdmin(annotation_admin.ExampleAdmin):
    inlines = (ValidationInline,)


class TaskAdmin(tasks_admin.TaskAdmin):
    actions = (retrain_target_models,)


class RoundAdmin(tasks_admin.RoundAdmin):
    list_display = (*tasks_admin.RoundAdmin.list_display, "example_counts")
    readonly_fields = (*tasks_admin.RoundAdmin.readonly_fields, "example_counts")
    fields = (*tasks_admin.RoundAdmin.fields[:-1], "example_counts", tasks_admin.RoundAdmin.fields[-1])
    actions = (*tasks_admin.RoundAdmin.actions, close_rounds_into_datasets, export_rounds_jsonl)

    @admin.display(description="collected / fooled / verified fooled (vMER)")
    def example_counts(self, obj):
        if obj.pk is None:
            return "—"
        counts = round_counts(obj)
        vmer = "—" if counts.vmer is None else f"{counts.vmer:.1%}"
        return f"{counts.collected} / {counts.fooled} / {counts.verified_fooled} ({vmer})"


for model, model_admin in ((Example, ExampleAdmin), (Task, TaskAdmin), (Round, RoundAdmin)):
    admin.site.unregister(model)
    admin.site.register(model, model_admin)


@admin.register(GoldItem)
class GoldItemAdmin(OwnerScopedAdmin):
    """Gold items: made on the owner's gold page (``validation.gold.mark_gold``); here they can be switched off."""

    list_display = ("id", "round", "example", "verdict", "active", "created_at")
    list_filter = ("active", "verdict", "round__task")
    readonly_fields = ("round", "example", "verdict", "created_by", "created_at")

    def has_add_permission(self, request):
        return False


@admin.register(ValidatorStanding)
class ValidatorStandingAdmin(OwnerScopedAdmin):
    """Validators' gold accuracy per task (written by ``validation.gold.update_standing``; read-only)."""

    list_display = ("task", "validator", "answered", "correct", "excluded", "changed_at")
    list_filter = ("excluded", "task")
    readonly_fields = ("task", "validator", "answered", "correct", "excluded", "reason", "changed_at", "recomputed_examples")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(RoundPay)
class RoundPayAdmin(OwnerScopedAdmin):
    """What a round pays its crowd workers (the owner's pay page sets the same fields)."""

    list_display = ("round", "currency", "per_example", "per_validation", "bonus_per_fooling", "updated_at")
    raw_id_fields = ("round",)
