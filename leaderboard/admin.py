"""The maintainers' admin for evaluation runs, leaderboard configs and caches, and the owners'
"register a model directory" form (which calls ``leaderboard.services.register_model_directory``)."""

from django import forms
from django.contrib import admin, messages
from django.shortcuts import redirect, render
from django.urls import path, reverse

from dynabench.admin_tools import OwnerScopedAdmin, scope_to_owner
from dynabench.errors import RuleError
from leaderboard.jobs import recompute_leaderboard
from leaderboard.queueing import enqueue_evaluation
from leaderboard.models import EvaluationRun, LeaderboardCache, LeaderboardConfig
from leaderboard.services import register_model_directory
from tasks.models import MLModel, Task


class RegisterModelDirectoryForm(forms.Form):
    task = forms.ModelChoiceField(queryset=Task.objects.none())
    name = forms.CharField(max_length=200)
    path = forms.CharField(max_length=1024, help_text="Absolute path of a Hugging Face directory on this server (safetensors).")
    description = forms.CharField(widget=forms.Textarea, required=False, help_text="Model card, Markdown.")
    published = forms.BooleanField(required=False, initial=MLModel.PUBLISHED_BY_DEFAULT)

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["task"].queryset = scope_to_owner(Task.objects.all(), user)


@admin.register(EvaluationRun)
class EvaluationRunAdmin(OwnerScopedAdmin):
    list_display = (
        "model", "dataset", "status", "progress_display", "performance", "throughput", "memory_gib",
        "robustness", "fairness", "attempt", "finished_at",
    )
    list_filter = ("status", "dataset__task", "dataset__access")
    list_select_related = ("model__task", "dataset__task")
    search_fields = ("model__name", "dataset__name", "job_id", "error")
    raw_id_fields = ("model", "dataset")
    date_hierarchy = "queued_at"
    readonly_fields = (
        "status", "progress", "error", "job_id", "attempt", "n_examples", "performance", "metrics", "per_tag",
        "throughput", "memory_gib", "robustness", "fairness", "predictions_file", "queued_at", "started_at",
        "finished_at", "heartbeat_at",
    )
    exclude = ("item_results",)
    actions = ["re_evaluate"]
    change_list_template = "admin/leaderboard/evaluationrun/change_list.html"

    def has_add_permission(self, request):
        return False

    @admin.display(description="progress")
    def progress_display(self, obj):
        return f"{obj.progress:.0%}"

    @admin.action(description="Re-evaluate the models of the selected runs")
    def re_evaluate(self, request, queryset):
        model_ids = sorted(set(queryset.values_list("model_id", flat=True)))
        for model_id in model_ids:
            enqueue_evaluation(model_id)
        self.message_user(request, f"{len(model_ids)} models queued for evaluation.")

    def get_urls(self):
        return [path("register-model/", self.admin_site.admin_view(self.register_model), name="leaderboard_register_model"), *super().get_urls()]

    def register_model(self, request):
        """Task owners register a model directory already on the server; it is checked and queued."""
        form = RegisterModelDirectoryForm(request.POST or None, user=request.user)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                model = register_model_directory(actor=request.user, task=data["task"], path=data["path"], name=data["name"],
                                                 description=data["description"], published=data["published"])
            except RuleError as error:
                form.add_error(error.field if error.field in form.fields else None, error.message)
            else:
                messages.success(request, f"Model '{model.name}' registered and queued for evaluation.")
                return redirect(reverse("leaderboard:model", args=[model.pk]))
        context = {**self.admin_site.each_context(request), "form": form, "title": "Register a model directory", "opts": self.model._meta}
        return render(request, "admin/leaderboard/register_model.html", context, status=400 if form.errors else 200)


@admin.register(LeaderboardConfig)
class LeaderboardConfigAdmin(OwnerScopedAdmin):
    list_display = ("name", "task", "owner", "frozen", "missing_metric", "slug", "created_at")
    list_filter = ("frozen", "missing_metric", "task")
    list_select_related = ("task", "owner")
    search_fields = ("name", "slug", "owner__username")
    raw_id_fields = ("owner",)
    readonly_fields = ("created_at",)


@admin.register(LeaderboardCache)
class LeaderboardCacheAdmin(admin.ModelAdmin):
    list_display = ("task", "computed_at")
    readonly_fields = ("task", "rows", "datasets", "computed_at")
    exclude = ("replicates",)
    actions = ["recompute"]

    def has_add_permission(self, request):
        return False

    @admin.action(description="Recompute now")
    def recompute(self, request, queryset):
        for cache in queryset:
            self.message_user(request, recompute_leaderboard(cache.task_id))
