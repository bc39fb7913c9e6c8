"""Writes of releases: the owner's card text, and asking for a release (built by ``releases.jobs``)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import django_rq
from django.db import transaction
from django.utils import timezone

from dynabench.errors import NotAllowed, RuleError
from releases.error_codes import ReleaseErrorCode
from releases.models import Release, ReleaseCardText
from releases.selectors import release_datasets
from tasks.data.croissant import dataset_license_of_task
from tasks.models import Task

QUEUE = "default"
JOB_TIMEOUT_S = 6 * 3600
"""Seconds a release's job may run; a release queued or building for longer is failed by the next request."""
CARD_FIELDS = ("motivation", "intended_uses", "limitations")


def _check_owner(task: Task, user) -> None:
    if user is None or not task.is_owner(user):
        raise NotAllowed(ReleaseErrorCode.NOT_OWNER, "Only the task's owners make its releases.")


def card_text_of(task: Task) -> dict:
    """``{"motivation", "intended_uses", "limitations"}``: the owner's current draft (empty strings when none)."""
    draft = ReleaseCardText.objects.filter(task=task).first()
    return {field: getattr(draft, field, "") if draft else "" for field in CARD_FIELDS}


def save_card_text(*, task: Task, acting_user, **text: str) -> ReleaseCardText:
    """Save the owner's draft of the card's free text (``motivation``, ``intended_uses``,
    ``limitations``; Markdown, at most 20,000 characters each), used by releases built after it.
    Raises ``NotAllowed`` for anyone but the task's owners."""
    _check_owner(task, acting_user)
    values = {field: str(text.get(field) or "")[:20_000] for field in CARD_FIELDS}
    draft, _ = ReleaseCardText.objects.update_or_create(task=task, defaults=values)
    return draft


@transaction.atomic
def request_release(*, task: Task, acting_user, dataset_ids: list[int] | None = None, queue: bool = True) -> Release:
    """Ask for a new release of ``task``'s public datasets (every public dataset of its closed
    rounds, or the owner's pick ``dataset_ids``), with the owner's current card text and the task's
    licence. With ``queue`` the RQ job ``releases.jobs.build_release`` is queued when this
    transaction commits; without, the caller builds it (``manage.py release_task``).

    Raises ``NotAllowed`` (not an owner), ``RuleError`` ``release_in_progress`` (one is queued or
    building; one older than ``JOB_TIMEOUT_S`` is marked failed first: its job died), ``release_unknown_dataset`` (a picked id is not a dataset of a closed round of the
    task) or ``release_no_datasets`` (nothing public to release)."""
    _check_owner(task, acting_user)
    Task.objects.select_for_update().filter(pk=task.pk).first()  # one request at a time per task
    Release.objects.filter(  # a job that died (its worker killed) never blocks the next release
        task=task, status__in=[Release.Status.QUEUED, Release.Status.BUILDING],
        created_at__lt=timezone.now() - timedelta(seconds=JOB_TIMEOUT_S),
    ).update(status=Release.Status.FAILED, failure_reason="The job did not finish in time (its worker stopped).")
    if Release.objects.filter(task=task, status__in=[Release.Status.QUEUED, Release.Status.BUILDING]).exists():
        raise RuleError(ReleaseErrorCode.IN_PROGRESS, "A release of this task is being built; wait for it to finish.", status_code=409)
    picked = sorted({int(i) for i in dataset_ids or []})
    public, hidden = release_datasets(task, picked)
    if picked and {d.pk for d in public + hidden} != set(picked):
        raise RuleError(ReleaseErrorCode.UNKNOWN_DATASET, "Pick datasets of this task's closed rounds only.", field="datasets")
    if not public:
        raise RuleError(ReleaseErrorCode.NO_DATASETS, "There is no public dataset of a closed round to release.")
    release = Release.objects.create(
        task=task, requested_by=acting_user, dataset_ids=picked, license=dataset_license_of_task(task),
        card_text=card_text_of(task), job_id=f"release-{task.code}-{uuid.uuid4().hex[:8]}",
    )
    if queue:
        release_id, job_id = release.pk, release.job_id
        transaction.on_commit(lambda: django_rq.get_queue(QUEUE).enqueue(
            "releases.jobs.build_release", release_id, job_id=job_id, job_timeout=JOB_TIMEOUT_S))
    return release
