"""A release left queued or building past the job's time limit (its worker was killed) is marked failed
with the reason when the owner asks for the next release, which is then accepted; a recent one still
blocks."""

from datetime import timedelta

import pytest
from django.utils import timezone

from dynabench.errors import RuleError
from releases.models import Release
from releases.services import JOB_TIMEOUT_S, request_release


def test_a_stale_release_is_failed_and_a_recent_one_blocks(dynasent_task, owner):
    stale = Release.objects.create(task=dynasent_task, status=Release.Status.BUILDING)
    Release.objects.filter(pk=stale.pk).update(created_at=timezone.now() - timedelta(seconds=JOB_TIMEOUT_S + 60))

    fresh = request_release(task=dynasent_task, acting_user=owner, queue=False)

    stale.refresh_from_db()
    assert stale.status == "failed" and "did not finish" in stale.failure_reason
    assert fresh.status == "queued"
    with pytest.raises(RuleError) as refused:
        request_release(task=dynasent_task, acting_user=owner, queue=False)
    assert refused.value.code == "release_in_progress"
