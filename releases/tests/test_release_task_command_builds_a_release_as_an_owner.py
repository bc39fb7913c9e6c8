"""``manage.py release_task`` builds a release inline and prints a one-line summary; it refuses
anyone but an owner."""

import pytest
from django.core.management import CommandError, call_command


def test_it_builds_release_1_0_0_and_says_so(dynasent_task, owner):
    summary = call_command("release_task", "dynasent", "--as", owner.username)

    release = dynasent_task.releases.get()
    assert summary == f"release dynasent 1.0.0: 4320 examples, {release.size} bytes, sha256 {release.sha256}"


def test_it_refuses_someone_who_does_not_own_the_task(dynasent_task, outsider):
    with pytest.raises(CommandError, match="Only the task's owners"):
        call_command("release_task", "dynasent", "--as", outsider.username)
    assert not dynasent_task.releases.exists()
