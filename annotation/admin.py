"""The maintainers' admin for examples: read-mostly (examples are written through annotation services)."""

from django.contrib import admin

from dynabench.admin_tools import OwnerScopedAdmin, short
from annotation.models import Example
from validation.models import Validation


class ValidationInline(admin.TabularInline):
    model = Validation
    fields = ("validator", "label", "mode", "metadata", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Example)
class ExampleAdmin(OwnerScopedAdmin):
    list_display = (
        "id", "round", "author", "input_preview", "target_preview", "model_wrong", "validation_state",
        "correct_count", "incorrect_count", "flagged_count", "retracted", "flagged", "created_at",
    )
    list_filter = ("validation_state", "model_wrong", "retracted", "flagged", "split", "round__task", "round")
    list_select_related = ("round__task", "author")
    search_fields = ("=id", "author__username", "tag")
    raw_id_fields = ("context", "author", "model", "leased_to")
    date_hierarchy = "created_at"
    inlines = (ValidationInline,)
    # Everything the platform derives (the model's answer, model_wrong, validation state and
    # counts) is read-only here: it is written by annotation and validation services only.
    readonly_fields = (
        "round", "context", "author", "input", "target", "model", "model_output", "model_wrong",
        "time_spent", "created_at", "validation_state", "validation_count", "correct_count",
        "incorrect_count", "flagged_count", "leased_to", "leased_until",
    )
    fieldsets = (
        (None, {"fields": ("round", "context", "author", "created_at", "time_spent")}),
        ("Example", {"fields": ("input", "target", "metadata", "tag", "split")}),
        ("Model in the loop", {"fields": ("model", "model_output", "model_wrong")}),
        ("Validation", {"fields": (
            "validation_state", "validation_count", "correct_count", "incorrect_count", "flagged_count",
            "retracted", "flagged", "leased_to", "leased_until",
        )}),
    )

    def has_add_permission(self, request):
        return False

    @admin.display(description="input")
    def input_preview(self, obj):
        return short(obj.input)

    @admin.display(description="target")
    def target_preview(self, obj):
        return short(obj.target, 40)
