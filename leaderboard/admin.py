"""The maintainers' admin for evaluation runs (scores written by evaluation jobs) and leaderboard configs."""

from django.contrib import admin

from dynabench.admin_tools import OwnerScopedAdmin
from leaderboard.models import EvaluationRun, LeaderboardConfig


@admin.register(EvaluationRun)
class EvaluationRunAdmin(OwnerScopedAdmin):
    list_display = (
        "model", "dataset", "status", "progress_display", "performance", "throughput", "memory_gib",
        "robustness", "fairness", "finished_at",
    )
    list_filter = ("status", "dataset__task", "dataset__access")
    list_select_related = ("model__task", "dataset__task")
    search_fields = ("model__name", "dataset__name", "job_id")
    raw_id_fields = ("model", "dataset")
    date_hierarchy = "queued_at"
    readonly_fields = (
        "status", "progress", "error", "job_id", "attempt", "n_examples", "performance", "metrics", "per_tag",
        "throughput", "memory_gib", "robustness", "fairness", "predictions_file", "queued_at", "started_at", "finished_at",
    )

    def has_add_permission(self, request):
        return False

    @admin.display(description="progress")
    def progress_display(self, obj):
        return f"{obj.progress:.0%}"


@admin.register(LeaderboardConfig)
class LeaderboardConfigAdmin(OwnerScopedAdmin):
    list_display = ("name", "task", "owner", "frozen", "slug", "created_at")
    list_filter = ("frozen", "task")
    list_select_related = ("task", "owner")
    search_fields = ("name", "slug", "owner__username")
    raw_id_fields = ("owner",)
    readonly_fields = ("created_at",)
