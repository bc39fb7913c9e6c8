"""A round's use of its endpoint models, for the console: what ``EndpointUsage`` counted against its budget
(reserved and charged at the gate, ``tasks/loop/gate.py``)."""

from __future__ import annotations

def round_usage(round) -> dict:
    """``{"calls", "tokens", "call_budget", "token_budget"}`` of ``round``'s endpoint models."""
    from django.db.models import Sum

    from tasks.models import EndpointUsage

    used = EndpointUsage.objects.filter(round=round).aggregate(calls=Sum("calls"), tokens=Sum("tokens"))
    return {"calls": used["calls"] or 0, "tokens": used["tokens"] or 0, "call_budget": round.endpoint_call_budget,
            "token_budget": round.endpoint_token_budget}
