"""A context whose data has the wrong key (or an empty field) is refused, naming the field,
instead of being stored with a blank prompt (the admin calls ``full_clean``)."""

import pytest
from django.core.exceptions import ValidationError

from tasks.models import Context


def test_a_wrong_key_is_refused_naming_the_task_fields(sentiment_task):
    context = Context(round=sentiment_task.current_round(), uid="c-new", data={"promt": "Typo in the key."})
    with pytest.raises(ValidationError) as refused:
        context.full_clean()
    message = refused.value.message_dict["data"][0]
    assert "unknown field(s) promt" in message and "missing or empty text for prompt" in message


def test_the_right_key_passes(sentiment_task):
    Context(round=sentiment_task.current_round(), uid="c-ok", data={"prompt": "Fine."}).full_clean()
