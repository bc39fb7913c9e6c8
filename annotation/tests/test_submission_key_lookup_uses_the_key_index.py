"""The look-up of a submission key, run before every keyed example (``annotation.saving._replayed``, ``dynabench.hotsql.keyed_id_sql``),
uses the key's unique index in a prepared statement's generic plan: it does not read every
example of the author, however many they wrote."""

import pytest
from django.db import connection

from annotation import saving
from annotation.models import Example
from dynabench import hotsql
from tests.plans import generic_plan


@pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared statements' generic plans are PostgreSQL's")
def test_the_key_lookup_plan_uses_the_key_index(annotator, sentiment_context, sentiment_model):
    Example.objects.bulk_create(
        Example(round=sentiment_context.round, context=sentiment_context, author=annotator, model=sentiment_model,
                input={"text": f"example {i}"}, target={"label": "neutral"}, model_wrong=False, submission_key=f"key-{i:08d}")
        for i in range(400)
    )
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {hotsql.table(Example)}")

    plan = generic_plan(hotsql.statement("annotation.replayed", saving._replayed_sql), [annotator.pk, "key-00000007"])

    assert "example_submission_key_once" in plan, plan
    assert saving._replayed(user=annotator, submission_key="key-00000007").input == {"text": "example 7"}
    assert saving._replayed(user=annotator, submission_key="key-99999999") is None
