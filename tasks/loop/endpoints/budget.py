"""A round's use of its endpoint models, for the console: what the gate counted in ``RoundSpend``
(``tasks/loop/gate.py``: each request reserved before it is sent, the unused part given back)."""

from __future__ import annotations


def round_usage(round) -> dict:
    """``{"calls", "tokens", "call_budget", "token_budget"}`` of ``round``'s endpoint models (calls in
    flight included)."""
    from tasks.models import RoundSpend

    spent = RoundSpend.objects.filter(round_id=round.pk).values("calls", "tokens").first() or {"calls": 0, "tokens": 0}
    return {"calls": spent["calls"], "tokens": spent["tokens"], "call_budget": round.endpoint_call_budget,
            "token_budget": round.endpoint_token_budget}
