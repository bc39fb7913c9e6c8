"""The author retracts an example: it stays stored but leaves the counts."""

import pytest

from annotation.selectors import user_counts
from annotation.services import create_example, retract_example
from dynabench.errors import NotAllowed


@pytest.fixture
def example(annotator, sentiment_context):
    return create_example(user=annotator, context=sentiment_context, input={"text": "fine"}, target={"label": "neutral"})


def test_it_retracts_the_authors_example(annotator, example):
    retract_example(example=example, user=annotator)
    example.refresh_from_db()
    assert example.retracted is True
    assert user_counts(annotator).collected == 0


def test_it_is_harmless_twice(annotator, example):
    retract_example(example=example, user=annotator)
    retract_example(example=example, user=annotator)
    example.refresh_from_db()
    assert example.retracted is True


def test_it_refuses_anyone_but_the_author(owner, example):
    with pytest.raises(NotAllowed) as refused:
        retract_example(example=example, user=owner)
    assert refused.value.code == "not_author"
    example.refresh_from_db()
    assert example.retracted is False
