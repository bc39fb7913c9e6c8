"""The fixed seed split: every seed row's stored split follows the hash rule, groups stay whole,
each held-out set has enough items per label, and seed training sees the train split only."""

import json
from collections import Counter, defaultdict

import pytest

from tasks.data.seed import load_task_definition
from tasks.data.seed_split import SEED_DATA_DIR, seed_split
from tasks.loop.training.examples import seed_examples

CODES = ["nli", "qa", "sentiment", "hate-speech"]
#: At least this many held-out items per label (classification) or questions (QA) in each set.
MINIMUM = {"test": 10, "dev": 7}
QA_MINIMUM = {"test": 20, "dev": 15}


def _rows(code):
    with open(SEED_DATA_DIR / f"{code}.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.mark.parametrize("code", CODES)
def test_every_stored_split_is_the_hash_rule_s(code):
    for row in _rows(code):
        assert row["split"] == seed_split(row), row["uid"]


def test_the_rule_is_the_documented_bucket_of_the_sha256():
    # bucket = int(sha256("dynabench-seed-split:" + key)[:8], 16) % 100: 0-24 test, 25-39 dev, 40-99 train
    assert seed_split({"uid": "nli-01e", "group": "premise-01"}) == "test"  # bucket 12
    assert seed_split({"uid": "hate-001"}) == "dev"  # bucket 38
    assert seed_split({"uid": "sent-001"}) == "train"  # bucket 93
    assert seed_split({"uid": "qa-01-1", "group": "passage-01"}) == "train"  # bucket 50: the group decides, not the uid


@pytest.mark.parametrize("code", ["nli", "qa"])
def test_a_premise_or_passage_lies_in_one_split_only(code):
    field = "premise" if code == "nli" else "passage"
    splits = defaultdict(set)
    for row in _rows(code):
        splits[row[field]].add(row["split"])
    assert all(len(s) == 1 for s in splits.values())


@pytest.mark.parametrize("code", ["nli", "sentiment", "hate-speech"])
def test_each_held_out_set_has_enough_items_of_every_label(code):
    labels = load_task_definition(code)["config"]["labels"]
    counts = Counter((row["split"], row["label"]) for row in _rows(code))
    for split, minimum in MINIMUM.items():
        assert all(counts[split, label] >= minimum for label in labels), (split, counts)


def test_qa_held_out_sets_have_enough_questions():
    counts = Counter(row["split"] for row in _rows("qa"))
    assert all(counts[split] >= minimum for split, minimum in QA_MINIMUM.items()), counts


@pytest.mark.parametrize("code", CODES)
def test_seed_training_examples_are_the_train_split_only(default_tasks, code):
    rows = _rows(code)
    train = {row["uid"] for row in rows if row["split"] == "train"}

    examples = seed_examples(default_tasks[code])

    assert {ex.uid for ex in examples} == train
    assert {ex.uid for ex in seed_examples(default_tasks[code], split="test")} == {r["uid"] for r in rows if r["split"] == "test"}
