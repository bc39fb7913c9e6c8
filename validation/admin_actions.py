"""Admin actions of the round lifecycle and of retraining, added to the tasks app's admin by
``validation/admin.py``: close the selected rounds into datasets, export them as JSONL,
retrain the selected tasks' target models from their validated examples."""

from django.contrib import admin, messages
from django.template.response import TemplateResponse

from dynabench.errors import RuleError
from validation.htmx_views import jsonl_response
from validation.retraining import request_retraining
from validation.round_close import close_round, preview_round_close


@admin.action(description="Close selected rounds and build their train/dev/test datasets")
def close_rounds_into_datasets(modeladmin, request, queryset):
    """First a confirmation page with each round's close preview (``preview_round_close``: split
    sizes, datasets written, models re-scored, what refuses it); the rounds close only when it
    is posted back with ``confirm``. Non-owners are refused by ``close_round`` itself."""
    rounds = list(queryset.select_related("task").order_by("task__code", "number"))
    if request.POST.get("confirm") != "yes":
        previews = []
        for round in rounds:
            try:
                previews.append((round, preview_round_close(round), ""))
            except RuleError as exc:
                previews.append((round, None, exc.message))
        context = {
            **modeladmin.admin_site.each_context(request), "title": "Close rounds into datasets", "previews": previews,
            "opts": modeladmin.model._meta, "action_name": "close_rounds_into_datasets",
            "selected": [r.pk for r in rounds], "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/validation/close_rounds_confirmation.html", context)
    for round in rounds:
        try:
            datasets = close_round(round=round, acting_user=request.user)
        except RuleError as exc:
            modeladmin.message_user(request, f"{round}: {exc.message}", messages.ERROR)
            continue
        sizes = ", ".join(f"{d.name} ({d.items.count()})" for d in datasets)
        modeladmin.message_user(request, f"{round} closed: {sizes}", messages.SUCCESS)
    return None


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
