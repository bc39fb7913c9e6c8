"""Admin actions of the round lifecycle and of retraining, added to the tasks app's admin by
``validation/admin.py``: close the selected rounds into datasets, export them as JSONL,
retrain the selected tasks' target models from their validated examples."""

from django.contrib import admin, messages

from dynabench.errors import RuleError
from validation.htmx_views import jsonl_response
from validation.services import close_round, request_retraining


@admin.action(description="Close selected rounds and build their train/dev/test datasets")
def close_rounds_into_datasets(modeladmin, request, queryset):
    for round in queryset.select_related("task"):
        try:
            datasets = close_round(round=round, acting_user=request.user)
        except RuleError as exc:
            modeladmin.message_user(request, f"{round}: {exc.message}", messages.ERROR)
            continue
        sizes = ", ".join(f"{d.name} ({d.items.count()})" for d in datasets)
        modeladmin.message_user(request, f"{round} closed: {sizes}", messages.SUCCESS)


@admin.action(description="Export selected rounds as JSONL (anonymised, with validations)")
def export_rounds_jsonl(modeladmin, request, queryset):
    rounds = list(queryset.select_related("task"))
    refused = [r for r in rounds if not r.task.is_owner(request.user)]
    if refused:
        modeladmin.message_user(request, f"Only task owners can export: {', '.join(map(str, refused))}.", messages.ERROR)
        return None
    name = rounds[0].task.code + "-" + "-".join(f"r{r.number}" for r in rounds) if rounds else "rounds"
    return jsonl_response(request, rounds, f"{name}.jsonl")


@admin.action(description="Retrain the target model from validated examples (plus the seed set)", permissions=["change"])
def retrain_target_models(modeladmin, request, queryset):
    for task in queryset:
        try:
            model = request_retraining(task=task, acting_user=request.user)
        except RuleError as exc:
            modeladmin.message_user(request, f"{task}: {exc.message}", messages.ERROR)
            continue
        modeladmin.message_user(
            request, f"{task}: training model {model.name} on the training queue; its progress shows on the model.",
            messages.SUCCESS,
        )
