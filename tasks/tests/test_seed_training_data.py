"""The seed training examples we wrote: enough of them, balanced, well-formed, unique uids, exact QA spans."""

import json
from collections import Counter

import pytest

from tasks.data.seed import load_task_definition
from tasks.data.seed_split import SEED_DATA_DIR

CLASSIFICATION = {"sentiment": 150, "hate-speech": 150, "nli": 150}


def _rows(code):
    with open(SEED_DATA_DIR / f"{code}.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.mark.parametrize("code, minimum", CLASSIFICATION.items())
def test_each_classification_task_has_enough_balanced_examples(code, minimum):
    rows = _rows(code)
    config = load_task_definition(code)["config"]
    counts = Counter(row["label"] for row in rows)

    assert len(rows) >= minimum
    assert set(counts) == set(config["labels"])
    assert min(counts.values()) / max(counts.values()) >= 0.9, counts


@pytest.mark.parametrize("code", ["sentiment", "hate-speech", "nli", "qa"])
def test_rows_carry_the_task_model_inputs_and_a_unique_uid(code):
    rows = _rows(code)
    config = load_task_definition(code)["config"]
    target = "answers" if code == "qa" else "label"

    for row in rows:
        for name in config["model_inputs"]:
            assert isinstance(row[name], str) and row[name].strip(), (row["uid"], name)
        assert target in row, row["uid"]
    assert len({row["uid"] for row in rows}) == len(rows)


@pytest.mark.parametrize("code", ["sentiment", "hate-speech", "nli"])
def test_no_example_text_is_repeated(code):
    rows = _rows(code)
    key = ("premise", "hypothesis") if code == "nli" else ("text",)

    assert len({tuple(row[k] for k in key) for row in rows}) == len(rows)


def test_qa_has_a_hundred_questions_whose_answers_are_exact_spans_of_the_passage():
    rows = _rows("qa")

    assert len(rows) >= 100
    assert len({(row["passage"], row["question"]) for row in rows}) == len(rows)
    for row in rows:
        assert row["answers"], row["uid"]
        for answer in row["answers"]:
            start = answer["answer_start"]
            assert row["passage"][start:start + len(answer["text"])] == answer["text"], row["uid"]
