"""The author flags an example with a reason."""

import pytest

from annotation.services import create_example, flag_example
from dynabench.errors import NotAllowed, RuleError


@pytest.fixture
def example(annotator, sentiment_context):
    return create_example(user=annotator, context=sentiment_context, input={"text": "fine"}, target={"label": "neutral"})


def test_it_flags_with_the_reason(annotator, example):
    flag_example(example=example, user=annotator, reason="  I picked the wrong label ")
    example.refresh_from_db()
    assert example.flagged is True
    assert example.metadata["flag_reason"] == "I picked the wrong label"


def test_it_needs_a_reason(annotator, example):
    with pytest.raises(RuleError) as refused:
        flag_example(example=example, user=annotator, reason=" ")
    assert (refused.value.code, refused.value.field) == ("flag_reason_required", "reason")
    example.refresh_from_db()
    assert example.flagged is False


def test_it_refuses_a_reason_too_long(annotator, example):
    with pytest.raises(RuleError) as refused:
        flag_example(example=example, user=annotator, reason="x" * 501)
    assert refused.value.code == "too_long"


def test_it_refuses_anyone_but_the_author(owner, example):
    with pytest.raises(NotAllowed):
        flag_example(example=example, user=owner, reason="spam")
    example.refresh_from_db()
    assert example.flagged is False
