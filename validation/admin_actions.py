"""Admin actions on rounds, for ``tasks/admin.py``'s ``RoundAdmin.actions`` (the tasks app owns
that admin): close the selected rounds into datasets, export them as JSONL.

    from validation.admin_actions import close_rounds_into_datasets, export_rounds_jsonl
    class RoundAdmin(admin.ModelAdmin):
        actions = [close_rounds_into_datasets, export_rounds_jsonl]
"""

from django.contrib import admin, messages

from annotation.models import Example
from dynabench.errors import RuleError
from validation.services import close_round


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
    from validation.htmx_views import jsonl_response

    rounds = list(queryset.select_related("task"))
    refused = [r for r in rounds if not r.task.is_owner(request.user)]
    if refused:
        modeladmin.message_user(request, f"Only task owners can export: {', '.join(map(str, refused))}.", messages.ERROR)
        return None
    name = rounds[0].task.code + "-" + "-".join(f"r{r.number}" for r in rounds) if rounds else "rounds"
    return jsonl_response(Example.objects.filter(round__in=rounds), f"{name}.jsonl")
