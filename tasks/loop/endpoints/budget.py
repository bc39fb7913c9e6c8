"""A round's budget for its endpoint models: checked before a call, charged after it (``EndpointUsage``)."""

from __future__ import annotations


from django.db import transaction
from django.db.models import F

from dynabench.errors import RuleError
from tasks.loop.endpoints.base import EndpointCode


def check_round_budget(round, model) -> None:
    """Raise ``endpoint_budget_spent`` (409) when ``round``'s endpoint calls or tokens are used up."""
    if round.endpoint_call_budget is None and round.endpoint_token_budget is None:
        return
    from django.db.models import Sum

    from tasks.models import EndpointUsage

    used = EndpointUsage.objects.filter(round=round).aggregate(calls=Sum("calls"), tokens=Sum("tokens"))
    calls, tokens = used["calls"] or 0, used["tokens"] or 0
    if (round.endpoint_call_budget is not None and calls >= round.endpoint_call_budget) or (
        round.endpoint_token_budget is not None and tokens >= round.endpoint_token_budget
    ):
        raise RuleError(
            EndpointCode.BUDGET_SPENT,
            f"Round {round.number} has used its budget for the endpoint model in the loop ({calls} calls, {tokens} tokens). "
            "Nothing was saved; a task owner can raise the budget.", status_code=409,
        )


def charge_round(round, model, output: dict) -> None:
    """Count one endpoint answer (unless it came from the cache) against ``round``'s budget."""
    from tasks.models import EndpointUsage

    info = output.get("endpoint") or {}
    if info.get("cached", True):
        return
    tokens = (info.get("prompt_tokens") or 0) + (info.get("completion_tokens") or 0)
    counted = dict(calls=F("calls") + 1, tokens=F("tokens") + tokens)
    if not EndpointUsage.objects.filter(round=round, model=model).update(**counted):
        with transaction.atomic():
            usage, _ = EndpointUsage.objects.select_for_update().get_or_create(round=round, model=model)
            EndpointUsage.objects.filter(pk=usage.pk).update(**counted)


def round_usage(round) -> dict:
    """``{"calls", "tokens", "call_budget", "token_budget"}`` of ``round``'s endpoint models."""
    from django.db.models import Sum

    from tasks.models import EndpointUsage

    used = EndpointUsage.objects.filter(round=round).aggregate(calls=Sum("calls"), tokens=Sum("tokens"))
    return {"calls": used["calls"] or 0, "tokens": used["tokens"] or 0, "call_budget": round.endpoint_call_budget,
            "token_budget": round.endpoint_token_budget}
