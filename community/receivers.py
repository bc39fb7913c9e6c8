"""Receivers of the lower layers' signals (``tasks.signals``): each queues a ``community.jobs`` job by
dotted path, so nothing is written or emailed in the request or job that sent the signal."""

import django_rq
from django.dispatch import receiver

from tasks.signals import (
    crowd_study_completed, endpoint_misconfigured, example_settled, model_evaluation_finished, round_status_changed,
)


def _enqueue(job: str, *args) -> None:
    django_rq.get_queue("default").enqueue(job, *args)


@receiver(model_evaluation_finished, dispatch_uid="community.model_evaluation_finished")
def on_model_evaluation_finished(sender, model_id, status, reason="", **kwargs):
    _enqueue("community.jobs.notify_model_finished", model_id, status, reason)


@receiver(example_settled, dispatch_uid="community.example_settled")
def on_example_settled(sender, example_id, author_id, state, **kwargs):
    _enqueue("community.jobs.notify_example_settled", example_id, state)


@receiver(round_status_changed, dispatch_uid="community.round_status_changed")
def on_round_status_changed(sender, round_id, status, **kwargs):
    _enqueue("community.jobs.notify_round_status", round_id, status)


@receiver(crowd_study_completed, dispatch_uid="community.crowd_study_completed")
def on_crowd_study_completed(sender, session_id, user_id, **kwargs):
    _enqueue("community.jobs.notify_crowd_completion", session_id)


@receiver(endpoint_misconfigured, dispatch_uid="community.endpoint_misconfigured")
def on_endpoint_misconfigured(sender, model_id, reason, **kwargs):
    _enqueue("community.jobs.notify_endpoint_misconfigured", model_id, reason)
