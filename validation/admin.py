from django.contrib import admin

from validation.models import Validation


@admin.register(Validation)
class ValidationAdmin(admin.ModelAdmin):
    """Read-mostly: validations are recorded through ``record_validation``, never edited here,
    so that examples' states and counters stay derived from them."""

    list_display = ("id", "example", "validator", "label", "mode", "created_at")
    list_filter = ("label", "mode", "example__round__task")
    search_fields = ("validator__username", "example__id")
    raw_id_fields = ("example", "validator")
    readonly_fields = ("example", "validator", "label", "mode", "metadata", "created_at")

    def has_add_permission(self, request):
        return False
