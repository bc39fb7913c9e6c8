"""Extractive QA datasets import SQuAD-style answers, each checked against the passage."""

import json

import pytest
from django.core.management import CommandError, call_command

from tasks.models import DatasetItem

PASSAGE = "Ada Lovelace wrote the first published algorithm in 1843."


def _write(tmp_path, *records):
    path = tmp_path / "qa.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_it_imports_squad_and_hugging_face_answer_shapes(qa_task, tmp_path):
    path = _write(
        tmp_path,
        {"id": "q1", "context": PASSAGE, "question": "When?", "answers": [{"text": "1843", "answer_start": 52}]},
        {"id": "q2", "context": PASSAGE, "question": "Who?", "answers": {"text": ["Ada Lovelace", "Lovelace"], "answer_start": [0, 4]}},
    )

    call_command("import_dataset", "qa", "tiny-qa", str(path), "--map", "passage=context", "--uid", "id")

    q1, q2 = DatasetItem.objects.get(uid="q1"), DatasetItem.objects.get(uid="q2")
    assert q1.input == {"question": "When?", "passage": PASSAGE}
    assert q1.target == {"answers": [{"text": "1843", "answer_start": 52}]}
    assert q2.target == {"answers": [{"text": "Ada Lovelace", "answer_start": 0}, {"text": "Lovelace", "answer_start": 4}]}


def test_it_refuses_an_answer_that_is_not_at_its_start_in_the_passage(qa_task, tmp_path):
    path = _write(
        tmp_path,
        {"id": "q1", "context": PASSAGE, "question": "When?", "answers": [{"text": "1843", "answer_start": 52}]},
        {"id": "q2", "context": PASSAGE, "question": "Who?", "answers": [{"text": "Ada", "answer_start": 3}]},
    )

    with pytest.raises(CommandError, match="line 2: answers: 'Ada' is not at character 3 of the passage"):
        call_command("import_dataset", "qa", "tiny-qa", str(path), "--map", "passage=context", "--uid", "id")

    assert not DatasetItem.objects.exists()
