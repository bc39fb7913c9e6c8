"""RQ jobs that turn the lower layers' events into notifications (queued by ``community.receivers``)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.models import CrowdSession, Example
from validation.models import Validation
from community.badges import badges_of
from community.models import Notification
from community.models import NotificationPreference, TaskProposal
from community.proposals import approval_summary
from community.services import notify, send_digest
from tasks.models import MLModel, Round


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


def notify_endpoint_misconfigured(model_id: int, reason: str) -> str:
    """Tell the task's owners and the model's owner that an endpoint model's server refused a request as
    misconfigured, with the server's ``reason``: once per version of the endpoint's settings (a save of the
    connection makes the next refusal news again)."""
    model = MLModel.objects.select_related("owner", "task", "endpoint").filter(pk=model_id).first()
    if model is None or not model.is_endpoint or not hasattr(model, "endpoint"):
        return f"model {model_id}: no endpoint to report"
    task, version = model.task, f"{model.endpoint.updated_at.timestamp():.6f}"
    owners = list(task.owners.filter(is_active=True))
    people = owners + ([model.owner] if model.owner is not None and model.owner.is_active and model.owner not in owners else [])
    message = (f"The endpoint model {model.name} of {task.name} is misconfigured: its server refused a request and said: "
               f"{reason} Annotators cannot use it until its connection is fixed: edit it, then use Test connection.")
    sent = 0
    for person in people:
        url = (reverse("console:endpoint", args=[task.code, model.pk]) if person in owners
               else reverse("leaderboard:model", args=[model.pk]))
        key = f"endpoint_misconfigured:{model.pk}:{version}"[:128]
        if notify(user=person, kind=Notification.Kind.ENDPOINT_MISCONFIGURED, key=key, message=message, url=url):
            sent += 1
    return f"model {model_id}: {sent} notified"


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
    earned = notify_new_badges(example.author)
    return f"example {example_id}: {'notified' if note else 'muted'}{f', {earned} new badges' if earned else ''}"


def notify_new_badges(user) -> int:
    """Notify ``user`` once of each badge they hold (``community.badges.badges_of``, from the running
    tallies) that they were not notified of yet; return how many were new."""
    new = 0
    for badge in badges_of(user):
        key = f"badge:{badge.code}:{badge.name}"[:128]
        if Notification.objects.filter(user=user, key=key).exists():
            continue
        if notify(user=user, kind=Notification.Kind.BADGE_EARNED, key=key, message=f"You earned a badge: {badge.name}. {badge.detail}",
                  url=reverse("validation:user", args=[user.username])):
            new += 1
    return new


def notify_round_status(round_id: int, status: str) -> str:
    """Tell the people who work on a round's task that it opened (those who wrote or validated examples
    in any of the task's rounds) or closed (those who wrote or validated examples in it)."""
    round = Round.objects.select_related("task").filter(pk=round_id).first()
    if round is None:
        return f"round {round_id}: gone"
    task = round.task
    if status == Round.Status.OPEN:
        scope = {"round__task": task}
        kind = Notification.Kind.ROUND_OPENED
        message = f"Round {round.number} of {task.name} is open: new examples are welcome."
        url = reverse("annotation:task_detail", args=[task.code])
    else:
        scope = {"round": round}
        kind = Notification.Kind.ROUND_CLOSED
        message = f"Round {round.number} of {task.name}, which you worked on, is closed."
        url = reverse("validation:round", args=[task.code, round.number])
    authors = set(Example.objects.filter(**scope).values_list("author_id", flat=True))
    validators = set(Validation.objects.filter(**{f"example__{k}": v for k, v in scope.items()}).values_list("validator_id", flat=True))
    people = get_user_model().objects.filter(pk__in=(authors | validators) - {None}, is_active=True)
    sent = sum(1 for person in people if notify(user=person, kind=kind, key=f"{kind}:{round.pk}", message=message, url=url))
    return f"round {round_id} {status}: {sent} notified"


def send_digests() -> str:
    """Email every user who wants a daily digest the notifications not emailed yet (``send_digest``);
    run once a day (``manage.py send_notification_digests``, from cron or a scheduler)."""
    users = [p.user for p in NotificationPreference.objects.filter(email=True, digest=True).select_related("user")]
    sent = [n for n in (send_digest(user) for user in users) if n]
    return f"{len(sent)} digests, {sum(sent)} notifications"


def notify_proposal_decided(proposal_id: int, status: str, revision: int = 1) -> str:
    """Tell a task's proposer that an admin decided their proposal: approved (the task is theirs),
    sent back for changes (with the admin's message) or rejected."""
    proposal = TaskProposal.objects.select_related("proposer", "task").filter(pk=proposal_id).first()
    if proposal is None:
        return f"proposal {proposal_id}: gone"
    if status == TaskProposal.Status.APPROVED and proposal.task is not None:
        message = f"Your task proposal '{proposal.name}' was approved: task {proposal.task.code} is yours. {approval_summary(proposal.task)}"
        url = reverse("console:settings", args=[proposal.task.code])
    else:
        said = {TaskProposal.Status.CHANGES_REQUESTED: "sent back for changes", TaskProposal.Status.REJECTED: "rejected"}
        message = f"Your task proposal '{proposal.name}' was {said.get(status, status)}."
        if proposal.review_message:
            message += f" The reviewer wrote: {proposal.review_message}"
        url = reverse("community:proposal", args=[proposal.pk])
    note = notify(user=proposal.proposer, kind=Notification.Kind.PROPOSAL_DECIDED,
                  key=f"proposal:{proposal.pk}:{revision}:{status}", message=message, url=url)
    return f"proposal {proposal_id} {status}: {'notified' if note else 'muted'}"


def notify_crowd_completion(session_id: int) -> str:
    """Tell a crowd worker that the study they joined has their completion code (Prolific: the code
    itself; Mechanical Turk: submit the assignment), so it stays on their notifications page."""
    session = CrowdSession.objects.select_related("study__round__task", "worker__user").filter(pk=session_id).first()
    if session is None or session.completed_at is None:
        return f"crowd session {session_id}: not completed"
    study, round = session.study, session.study.round
    where = f"the {study.get_platform_display()} study of {round.task.name} (round {round.number})"
    if session.completion_code:
        message = f"You finished {where}: your completion code is {session.completion_code}."
    else:
        message = f"You finished {where}: submit your assignment on the platform to be paid."
    note = notify(user=session.worker.user, kind=Notification.Kind.STUDY_COMPLETION_CODE, key=f"crowd:{session.pk}",
                  message=message, url=reverse("annotation:crowd_progress", args=[round.task.code, round.number, study.platform, study.activity]))
    return f"crowd session {session_id}: {'notified' if note else 'muted'}"
