"""The look-up of a validation's submission key, run under the example's lock before every keyed
verdict (``validation.replay.with_key``, ``dynabench.hotsql.keyed_id_sql``), uses the key's unique index in a prepared
statement's generic plan: it does not read every validation of the validator."""

import pytest
from django.db import connection

from annotation.models import Example
from dynabench import hotsql
from tests.plans import generic_plan
from validation.models import Validation
from validation.replay import with_key, with_key_sql
from validation.tests.conftest import make_example


@pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared statements' generic plans are PostgreSQL's")
def test_the_key_lookup_plan_uses_the_key_index(sentiment_task, annotator, validator):
    first = make_example(sentiment_task, annotator)
    examples = Example.objects.bulk_create(
        Example(round=first.round, context=first.context, author=annotator, model=first.model, input={"text": f"example {i}"},
                target={"label": "neutral"}, model_wrong=True)
        for i in range(400)
    )
    Validation.objects.bulk_create(
        Validation(example=example, validator=validator, label="correct", submission_key=f"key-{i:08d}")
        for i, example in enumerate(examples)
    )
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {connection.ops.quote_name(Validation._meta.db_table)}")

    plan = generic_plan(hotsql.statement("validation.with_key", with_key_sql), [validator.pk, "key-00000007"])

    assert "validation_submission_key_once" in plan, plan
    assert with_key(validator, "key-00000007").example_id == examples[7].pk
    assert with_key(validator, "key-99999999") is None
