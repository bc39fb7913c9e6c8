"""A VQA example's line in the round export carries every answer in its ``final_target``: the
annotator's, then each counted validator's own, up to the task's ``vqa_answers``, as the round's
datasets keep them, so VQA accuracy can be computed from the export alone. With ten answers, one of
them "light green", that answer scores 0.3 (it scored 0.0 against the annotator's answer alone)."""

import json

import pytest

from annotation.models import Example
from tasks.metrics.vqa import vqa_accuracy
from tasks.models import Context
from tests.vqa_support import vqa_task
from validation.export import export_lines, export_rows
from validation.selectors import validated_examples
from validation.services import record_validation
from validation.tests.conftest import leased, make_user

ANSWERS = ["green", "green", "light green", "green", "green", "Green", "green", "green", "green", "green"]


@pytest.fixture
def answered(owner, annotator):
    task = vqa_task(owner)
    round = task.current_round()
    context = Context.objects.create(round=round, uid="a" * 64, data={"image": "a" * 64})
    example = Example.objects.create(round=round, context=context, author=annotator, input={"image": "a" * 64, "question": "what colour"},
                                     target={"answers": [ANSWERS[0]]}, model_output={"answer": "red", "score": 0.4}, model_wrong=True)
    for n, answer in enumerate(ANSWERS[1:]):
        person = make_user(f"v{n}", "validator")
        record_validation(example=leased(example, person), validator=person, label="correct", metadata={"own_answer": answer})
    return example


def test_the_final_target_holds_the_ten_answers(answered):
    [line] = list(export_rows(Example.objects.filter(pk=answered.pk)))

    assert line["validation_state"] == "verified_correct"
    assert line["final_target"] == {"answers": ANSWERS}
    assert line["final_target"] == validated_examples(round=answered.round)[0].target
    assert vqa_accuracy("light green", line["final_target"]["answers"]) == pytest.approx(0.3)


def test_the_streamed_export_says_the_same(answered):
    [line] = [json.loads(row) for block in export_lines([answered.round]) for row in block.decode().splitlines() if row]

    assert line["final_target"] == {"answers": ANSWERS}
