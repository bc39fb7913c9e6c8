"""The maintainers' admin for tasks, rounds, contexts, ML model records and datasets."""

from django import forms
from django.contrib import admin, messages
from django.db.models import Count
from django.forms.models import BaseInlineFormSet
from django.urls import reverse
from django.utils.html import format_html

from annotation.selectors import round_counts
from dynabench.admin_tools import OwnerScopedAdmin, PrettyJSONField, short
from dynabench.errors import RuleError
from tasks.models import Context, Dataset, DatasetItem, MLModel, Round, Task
from tasks.services import set_round_status
from validation.admin_actions import close_rounds_into_datasets, export_rounds_jsonl

CONTEXT_INLINE_LIMIT = 25


class TaskAdminForm(forms.ModelForm):
    config = PrettyJSONField(
        help_text="JSON checked against the task config schema (tasks/config.py) on save; each error names its field."
    )

    class Meta:
        model = Task
        fields = "__all__"


class RoundInline(admin.TabularInline):
    model = Round
    fields = ("number", "status", "start", "end")
    readonly_fields = ("status",)
    extra = 0
    show_change_link = True
    ordering = ("number",)


@admin.register(Task)
class TaskAdmin(OwnerScopedAdmin):
    form = TaskAdminForm
    list_display = ("code", "name", "kind", "active", "current_round_display", "round_count", "dataset_count", "owner_list")
    list_filter = ("kind", "active")
    search_fields = ("code", "name")
    autocomplete_fields = ("owners",)
    inlines = (RoundInline,)
    fieldsets = (
        (None, {"fields": ("code", "name", "kind", "active", "owners")}),
        ("Instructions", {"fields": ("instructions",)}),
        ("Configuration", {"fields": ("config",)}),
    )

    def get_queryset(self, request):
        return (
            super().get_queryset(request)
            .annotate(round_count=Count("rounds", distinct=True), dataset_count=Count("datasets", distinct=True))
            .prefetch_related("owners", "rounds")
        )

    def get_readonly_fields(self, request, obj=None):
        return ("code", "kind") if obj is not None else ()

    @admin.display(description="current round")
    def current_round_display(self, obj):
        rounds = sorted(obj.rounds.all(), key=lambda r: -r.number)
        current = next((r for r in rounds if r.status == Round.Status.OPEN), rounds[0] if rounds else None)
        return f"{current.number} ({current.get_status_display().lower()})" if current else "—"

    @admin.display(description="rounds", ordering="round_count")
    def round_count(self, obj):
        return obj.round_count

    @admin.display(description="datasets", ordering="dataset_count")
    def dataset_count(self, obj):
        return obj.dataset_count

    @admin.display(description="owners")
    def owner_list(self, obj):
        return ", ".join(u.username for u in obj.owners.all()) or "—"


class LimitedContextFormSet(BaseInlineFormSet):
    """Only the newest ``CONTEXT_INLINE_LIMIT`` contexts are edited inline; the rest are one link away."""

    def get_queryset(self):
        if not hasattr(self, "_limited_queryset"):
            self._limited_queryset = super().get_queryset().order_by("-id")[:CONTEXT_INLINE_LIMIT]
        return self._limited_queryset


class ContextInline(admin.TabularInline):
    model = Context
    formset = LimitedContextFormSet
    fields = ("uid", "data", "tag", "active", "times_used")
    readonly_fields = ("times_used",)
    extra = 0
    show_change_link = True
    verbose_name_plural = f"Contexts (the newest {CONTEXT_INLINE_LIMIT}; see 'all contexts' above for the rest)"


@admin.register(Round)
class RoundAdmin(OwnerScopedAdmin):
    list_display = ("__str__", "task", "number", "status", "start", "end", "models_in_loop", "context_count", "example_counts")
    list_filter = ("status", "task")
    list_select_related = ("task",)
    search_fields = ("task__code", "task__name")
    autocomplete_fields = ("target_models",)
    readonly_fields = ("status", "all_contexts", "example_counts", "created_at")
    fields = ("task", "number", "status", "start", "end", "target_models", "all_contexts", "example_counts", "created_at")
    inlines = (ContextInline,)
    actions = ("open_rounds", close_rounds_into_datasets, export_rounds_jsonl)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(
            context_count=Count("contexts", distinct=True), model_count=Count("target_models", distinct=True)
        )

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields + (("task", "number") if obj is not None else ())

    @admin.display(description="models in the loop", ordering="model_count")
    def models_in_loop(self, obj):
        return obj.model_count

    @admin.display(description="contexts", ordering="context_count")
    def context_count(self, obj):
        return obj.context_count

    @admin.display(description="all contexts")
    def all_contexts(self, obj):
        if obj.pk is None:
            return "—"
        url = reverse("admin:tasks_context_changelist") + f"?round__id__exact={obj.pk}"
        return format_html('<a href="{}">{} contexts</a>', url, obj.contexts.count())

    @admin.display(description="collected / fooled / verified fooled (vMER)")
    def example_counts(self, obj):
        if obj.pk is None:
            return "—"
        counts = round_counts(obj)
        vmer = "—" if counts.vmer is None else f"{counts.vmer:.1%}"
        return f"{counts.collected} / {counts.fooled} / {counts.verified_fooled} ({vmer})"

    def _set_status(self, request, queryset, status):
        changed = 0
        for round_ in queryset.select_related("task"):
            try:
                before = round_.status
                set_round_status(round=round_, status=status, acting_user=request.user)
                changed += before != status
            except RuleError as exc:
                self.message_user(request, f"{round_}: {exc.message}", messages.ERROR)
        self.message_user(request, f"{changed} round(s) {'opened' if status == Round.Status.OPEN else 'closed'}.", messages.SUCCESS)

    @admin.action(description="Open the selected rounds", permissions=["change"])
    def open_rounds(self, request, queryset):
        self._set_status(request, queryset, Round.Status.OPEN)


@admin.register(Context)
class ContextAdmin(OwnerScopedAdmin):
    list_display = ("uid", "round", "data_preview", "tag", "times_used", "active", "created_at")
    list_filter = ("active", "round__task", "round")
    list_select_related = ("round__task",)
    search_fields = ("uid", "tag", "data")
    autocomplete_fields = ("round",)
    readonly_fields = ("times_used", "created_at")
    actions = ("activate", "deactivate")

    @admin.display(description="data")
    def data_preview(self, obj):
        return short(obj.data)

    @admin.action(description="Serve the selected contexts to annotators", permissions=["change"])
    def activate(self, request, queryset):
        self.message_user(request, f"{queryset.update(active=True)} context(s) activated.", messages.SUCCESS)

    @admin.action(description="Stop serving the selected contexts", permissions=["change"])
    def deactivate(self, request, queryset):
        self.message_user(request, f"{queryset.update(active=False)} context(s) deactivated.", messages.SUCCESS)


@admin.register(MLModel)
class MLModelAdmin(OwnerScopedAdmin):
    list_display = ("name", "task", "owner", "kind", "status", "progress_display", "published", "anonymous", "in_loop_rounds", "created_at")
    list_filter = ("status", "kind", "published", "task")
    list_select_related = ("task", "owner")
    search_fields = ("name", "owner__username", "checksum", "path")
    autocomplete_fields = ("owner",)
    readonly_fields = ("checksum", "progress", "failure_reason", "training_info", "created_at", "updated_at")
    date_hierarchy = "created_at"

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("rounds_in_loop")

    @admin.display(description="progress")
    def progress_display(self, obj):
        return f"{obj.progress:.0%}"

    @admin.display(description="in the loop of")
    def in_loop_rounds(self, obj):
        return ", ".join(f"round {r.number}" for r in obj.rounds_in_loop.all()) or "—"


@admin.register(Dataset)
class DatasetAdmin(OwnerScopedAdmin):
    list_display = ("name", "task", "round", "access", "split", "weight", "item_count", "checksum_short", "created_at")
    list_filter = ("access", "split", "task")
    list_select_related = ("task", "round")
    search_fields = ("name", "description", "source")
    autocomplete_fields = ("round",)
    readonly_fields = ("source", "checksum", "created_at", "items_link")

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(item_count=Count("items"))

    @admin.display(description="items", ordering="item_count")
    def item_count(self, obj):
        return obj.item_count

    @admin.display(description="sha256")
    def checksum_short(self, obj):
        return obj.checksum[:12] or "—"

    @admin.display(description="items")
    def items_link(self, obj):
        if obj.pk is None:
            return "—"
        url = reverse("admin:tasks_datasetitem_changelist") + f"?dataset__id__exact={obj.pk}"
        return format_html('<a href="{}">{} items</a>', url, obj.items.count())


@admin.register(DatasetItem)
class DatasetItemAdmin(OwnerScopedAdmin):
    list_display = ("uid", "dataset", "input_preview", "target_preview", "tag")
    list_filter = ("dataset__task", "dataset")
    list_select_related = ("dataset__task",)
    search_fields = ("uid", "tag")
    raw_id_fields = ("dataset",)

    @admin.display(description="input")
    def input_preview(self, obj):
        return short(obj.input)

    @admin.display(description="target")
    def target_preview(self, obj):
        return short(obj.target, 40)

