"""Shared check for the refusal tests: a refused validation changes nothing."""

import pytest

from dynabench.errors import RuleError
from validation.models import Validation


def snapshot(example):
    example.refresh_from_db()
    return (
        example.validation_state, example.validation_count, example.correct_count,
        example.incorrect_count, example.flagged_count, Validation.objects.count(),
    )


def assert_refused(call, *, code, match, example):
    before = snapshot(example)
    with pytest.raises(RuleError, match=match) as info:
        call()
    assert info.value.code == code
    assert snapshot(example) == before
    return info.value
