"""The maintainers' admin for examples: read-mostly (examples are written through annotation services).

``validation/admin.py`` registers a subclass of ``ExampleAdmin`` that shows each example's validations.
"""

from django.contrib import admin

from dynabench.admin_tools import BoundedJSONMixin, OwnerScopedAdmin, short
from annotation import qualification
from annotation.models import CrowdStudy, Example, Qualification, QuizItem


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


class QuizItemInline(BoundedJSONMixin, admin.StackedInline):
    """Quiz items: ``input`` (the fields shown) and ``answer`` (the gold target, checked by the task kind)."""

    model = QuizItem
    extra = 1


@admin.register(Qualification)
class QualificationAdmin(OwnerScopedAdmin):
    """A task's onboarding: instructions, pass mark, attempts and the quiz pool (owners write it
    here); the page says when the pool is too small to be safe and who keeps failing."""

    list_display = ("task", "pass_mark", "questions_per_attempt", "max_attempts", "pool_safety", "active", "updated_at")
    list_filter = ("active",)
    readonly_fields = ("pool_safety", "failing_workers")
    inlines = [QuizItemInline]

    @admin.display(description="pool")
    def pool_safety(self, obj):
        if obj.pk is None:
            return "—"
        report = qualification.pool_report(obj)
        return "safe" if report.safe else " ".join(report.problems)

    @admin.display(description="repeated failures")
    def failing_workers(self, obj):
        if obj.pk is None:
            return "—"
        rows = qualification.repeated_failures(obj)
        return "; ".join(f"{r['username']}: {r['failed']} failed" for r in rows) or "none"


@admin.register(CrowdStudy)
class CrowdStudyAdmin(OwnerScopedAdmin):
    """Crowd studies: the study URL is ``/crowd/<task>/r<round>/<platform>/<activity>/``."""

    list_display = ("round", "platform", "platform_study_id", "activity", "required", "participant_cap", "active", "created_at")
    list_filter = ("platform", "activity", "active")
    raw_id_fields = ("round",)
    exclude = ("api_token",)  # a secret: set from the console's study form, never shown back
