"""RQ jobs that turn the lower layers' events into notifications (queued by ``community.receivers``)."""

from __future__ import annotations

from django.urls import reverse

from annotation.models import Example
from community.models import Notification
from community.services import notify
from tasks.models import MLModel


def notify_model_finished(model_id: int, status: str, reason: str = "") -> str:
    """Tell a model's owner that its evaluation finished (``evaluated``) or failed (with the reason)."""
    model = MLModel.objects.select_related("owner", "task").filter(pk=model_id).first()
    if model is None or model.owner is None:
        return f"model {model_id}: no owner to notify"
    if status == MLModel.Status.FAILED:
        kind, message = Notification.Kind.MODEL_FAILED, f"The evaluation of your model {model.name} on {model.task.name} failed: {reason}"
    else:
        kind, message = Notification.Kind.MODEL_EVALUATED, f"Your model {model.name} on {model.task.name} is evaluated."
    note = notify(user=model.owner, kind=kind, key=f"{kind}:{model.pk}", message=message,
                  url=reverse("leaderboard:model", args=[model.pk]))
    return f"model {model_id}: {'notified' if note else 'muted'}"


def notify_example_settled(example_id: int, state: str) -> str:
    """Tell an example's author that validation settled it (validated correct, incorrect or flagged)."""
    example = Example.objects.select_related("author", "round__task").filter(pk=example_id).first()
    if example is None or example.author is None:
        return f"example {example_id}: no author to notify"
    outcome = {"verified_correct": "validated as correct", "verified_incorrect": "judged incorrect",
               "flagged": "flagged"}.get(state, state)
    message = f"Your example #{example.pk} on {example.round.task.name} (round {example.round.number}) was {outcome}."
    note = notify(user=example.author, kind=Notification.Kind.EXAMPLE_VALIDATED, key=f"example:{example.pk}:{state}",
                  message=message, url=reverse("annotation:my_examples"))
    return f"example {example_id}: {'notified' if note else 'muted'}"
