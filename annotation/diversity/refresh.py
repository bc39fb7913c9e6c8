"""A round's diversity report follows its data: when validation settles an example that fooled the model
(``tasks.signals.example_settled``), the round's report is queued again once its validated fooling examples
have grown by ``settings.DYNABENCH_DIVERSITY_REFRESH`` (a fraction: 0.25 is a quarter more than the last
report counted), and for the first time once there are ``FIRST_REPORT_AT``. A report already queued or
running is left to finish, and a failed one waits for the owner to read why and ask again; 0 turns this
off (the owner's *Compute now* still works)."""

from __future__ import annotations

from django.conf import settings
from django.dispatch import receiver

from annotation.diversity import report
from annotation.diversity_models import RoundDiversity
from annotation.models import VALIDATED, Example, ValidationState
from tasks.signals import example_settled

FIRST_REPORT_AT = 10
"""Validated fooling examples a round needs before its first report is computed by itself (twice the
smallest cluster HDBSCAN is asked for)."""


def is_due(*, fooling_now: int, fooling_then: int | None, growth: float) -> bool:
    """Whether a report is due: ``fooling_then`` is what the last report counted (None: no report yet)."""
    if growth <= 0:
        return False
    if fooling_then is None:
        return fooling_now >= FIRST_REPORT_AT
    return fooling_now >= max(FIRST_REPORT_AT, fooling_then * (1 + growth))


def refresh_if_due(round_id: int) -> bool:
    """Queue the round's report (``report.queue_round_diversity``) when ``is_due``; True when queued."""
    growth = float(getattr(settings, "DYNABENCH_DIVERSITY_REFRESH", 0.25))
    if growth <= 0:
        return False
    last = RoundDiversity.objects.filter(round_id=round_id).values("status", "figures").first()
    if last is not None and last["status"] != "done":
        return False  # queued or running: it will count them; failed: the owner reads why and asks again
    fooling_then = None if last is None else int(last["figures"].get("fooling_examples", 0))
    fooling_now = Example.objects.filter(VALIDATED, round_id=round_id, model_wrong=True).count()
    if not is_due(fooling_now=fooling_now, fooling_then=fooling_then, growth=growth):
        return False
    return report.queue_round_diversity(round_id, unless_busy=True) is not None


@receiver(example_settled, dispatch_uid="annotation.diversity.refresh")
def on_example_settled(sender, example_id, state, **kwargs) -> None:
    """Refresh the example's round's report when the example is a validated fooling one."""
    if state != ValidationState.VERIFIED_CORRECT:
        return
    round_id = Example.objects.filter(pk=example_id, model_wrong=True).values_list("round_id", flat=True).first()
    if round_id is not None:
        refresh_if_due(round_id)
