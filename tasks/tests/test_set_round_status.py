"""``set_round_status`` opens and closes rounds for their owners only."""

import pytest

from dynabench.errors import NotAllowed, RuleError
from tasks.models import Round
from tasks.services import set_round_status


def test_it_closes_a_round_for_its_owner(owner, nli_task):
    round1 = nli_task.current_round()

    closed = set_round_status(round=round1, status="closed", acting_user=owner)

    round1.refresh_from_db()
    assert closed.status == round1.status == Round.Status.CLOSED
    assert round1.end is not None


def test_it_changes_nothing_when_the_status_is_already_set(owner, nli_task):
    round1 = set_round_status(round=nli_task.current_round(), status="closed", acting_user=owner)
    ended = round1.end

    again = set_round_status(round=round1, status="closed", acting_user=owner)

    assert again.end == ended


def test_it_refuses_someone_who_does_not_own_the_task(outsider, nli_task):
    with pytest.raises(NotAllowed, match="only owners of nli"):
        set_round_status(round=nli_task.current_round(), status="closed", acting_user=outsider)

    assert nli_task.current_round().status == Round.Status.OPEN


def test_it_refuses_an_unknown_status(owner, nli_task):
    with pytest.raises(RuleError, match="unknown round status 'paused'"):
        set_round_status(round=nli_task.current_round(), status="paused", acting_user=owner)
