"""On PostgreSQL the database builds each export line itself: the same content as ``export_rows``."""

import json
from datetime import datetime, timezone

import pytest
from django.db import connection

from annotation.diversity_models import ExampleDiversity
from annotation.models import Example
from annotation.services import retract_example
from tasks.models import MLModel
from validation.judge_models import AIVote
from validation.models import Validation
from validation.export import _postgres_lines, export_rows
from validation.services import record_validation
from validation.tests.conftest import make_example, make_user, leased

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="the SQL-built export lines are PostgreSQL's")


def test_sql_lines_equal_the_python_rows(sentiment_task, qa_task, annotator, owner):
    people = [make_user(f"p{i}", "validator") for i in range(3)]
    plain = make_example(sentiment_task, annotator, text="Ça déchire 😀 \\ \"quoted\"\nnew line", time_spent=12.5)
    for person in people:
        record_validation(example=leased(plain, person), validator=person, label="correct", metadata={"explanation": "fine"})
    corrected = make_example(sentiment_task, annotator)
    record_validation(example=leased(corrected, people[0]), validator=people[0], label="flagged", metadata={"flag_reason": "odd"})
    record_validation(example=corrected, validator=owner, label="incorrect", mode="owner")
    record_validation(example=corrected, validator=owner, label="correct", mode="owner", metadata={"corrected_label": "negative"})
    pending = make_example(sentiment_task, annotator, model_wrong=False)
    retracted = make_example(sentiment_task, annotator)
    record_validation(example=retracted, validator=owner, label="correct", mode="owner")
    retract_example(example=retracted, user=annotator)
    answer = make_example(qa_task, annotator)
    passage = answer.context.data["passage"]
    word = passage.split()[1]
    record_validation(example=answer, validator=owner, label="correct", mode="owner",
                      metadata={"corrected_answer": {"text": word, "answer_start": passage.find(word)}})
    Validation.objects.filter(example=plain).update(created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc))
    Example.objects.filter(pk=pending.pk).update(created_at=datetime(2026, 1, 2, 3, 4, 5, 120000, tzinfo=timezone.utc))
    ids = [plain.pk, corrected.pk, pending.pk, retracted.pk, answer.pk]
    judge = MLModel.objects.create(task=sentiment_task, name="judge \"ai\"", kind=MLModel.Kind.ENDPOINT)
    AIVote.objects.create(example=plain, round=plain.round, model=judge, label="correct", reason="fits 😀", confidence=0.9,
                          counted_as="vote", arm="policy", settings_checksum="c" * 64)
    AIVote.objects.create(example=pending, round=pending.round, model=judge, parsed=False, reason="no JSON", raw="??")

    # the diversity report placed two of them: a cluster, and a near-duplicate group that "plain" leads
    for example, cluster in ((plain, 0), (corrected, -1)):
        ExampleDiversity.objects.create(example=example, round=example.round, cluster=cluster, representative=plain, group_size=2)

    rounds = sorted({sentiment_task.current_round().pk, qa_task.current_round().pk})
    lines = _postgres_lines(rounds, 0, max(ids), False).decode("utf-8").splitlines()

    expected = sorted(export_rows(Example.objects.filter(pk__in=ids)), key=lambda row: row["id"])
    assert [json.loads(line) for line in lines] == expected
    assert [row["final_target"] for row in expected[1:2]] == [{"label": "negative"}]
    assert [row["ai_vote_counted"] for row in expected] == [True, False, False, False, False]
    assert [len(row["ai_votes"]) for row in expected] == [1, 0, 1, 0, 0]
    assert [(row["cluster"], row["near_duplicate_of"], row["group_size"]) for row in expected[:3]] == [
        (0, None, 2), (-1, plain.pk, 2), (None, None, None)]
    assert expected[4]["final_target"] == {"answers": [{"text": word, "answer_start": passage.find(word)}]}


def test_the_deduplicated_view_is_the_same_in_sql(sentiment_task, annotator):
    first, copy, alone, retracted = (make_example(sentiment_task, annotator) for _ in range(4))
    for example, leader, size in ((first, first, 2), (copy, first, 2), (retracted, retracted, 1)):
        ExampleDiversity.objects.create(example=example, round=example.round, cluster=0, representative=leader, group_size=size)
    Example.objects.filter(pk=retracted.pk).update(retracted=True)

    lines = _postgres_lines([sentiment_task.current_round().pk], 0, retracted.pk, True).decode("utf-8").splitlines()

    assert [json.loads(line)["id"] for line in lines] == [first.pk, alone.pk]
