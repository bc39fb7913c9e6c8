"""The maintainers' admin for validations: read-only (validations are recorded by ``validation/services.py``,
which keeps each example's validation state and counts in the same transaction)."""

from django.contrib import admin

from dynabench.admin_tools import OwnerScopedAdmin
from validation.models import Validation


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
