"""Admin for evaluation runs and saved leaderboards, and the owners' "register a model directory" form."""

from django import forms
from django.contrib import admin, messages
from django.shortcuts import redirect, render
from django.urls import path, reverse

from dynabench.errors import RuleError
from leaderboard.jobs import enqueue_evaluation
from leaderboard.models import EvaluationRun, LeaderboardCache, LeaderboardConfig
from leaderboard.services import register_model_directory
from tasks.models import Task


class RegisterModelDirectoryForm(forms.Form):
    task = forms.ModelChoiceField(queryset=Task.objects.all())
    name = forms.CharField(max_length=200)
    path = forms.CharField(max_length=1024, help_text="Absolute path of a Hugging Face directory on this server (safetensors).")
    description = forms.CharField(widget=forms.Textarea, required=False, help_text="Model card, Markdown.")
    published = forms.BooleanField(required=False, initial=True)


@admin.register(EvaluationRun)
class EvaluationRunAdmin(admin.ModelAdmin):
    list_display = ("model", "dataset", "status", "progress", "performance", "throughput", "memory_gib", "attempt", "finished_at")
    list_filter = ("status", "dataset__task", "dataset")
    search_fields = ("model__name", "dataset__name", "error")
    readonly_fields = [f.name for f in EvaluationRun._meta.fields]
    actions = ["re_evaluate"]
    change_list_template = "admin/leaderboard/evaluationrun/change_list.html"

    def has_add_permission(self, request):
        return False

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
        form = RegisterModelDirectoryForm(request.POST or None)
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
class LeaderboardConfigAdmin(admin.ModelAdmin):
    list_display = ("name", "task", "owner", "frozen", "created_at")
    list_filter = ("task", "frozen")
    search_fields = ("name", "slug")
    readonly_fields = ("slug", "snapshot", "created_at")


@admin.register(LeaderboardCache)
class LeaderboardCacheAdmin(admin.ModelAdmin):
    list_display = ("task", "computed_at")
    readonly_fields = ("task", "rows", "datasets", "computed_at")
    exclude = ("replicates",)
    actions = ["recompute"]

    @admin.action(description="Recompute now")
    def recompute(self, request, queryset):
        from leaderboard.jobs import recompute_leaderboard

        for cache in queryset:
            self.message_user(request, recompute_leaderboard(cache.task_id))
