"""The seed data of the default tasks (``tasks/data/seed_data/<code>.jsonl``) and its fixed split
into train, dev (public) and test (hidden) rows. No ORM: the seed scoring datasets
(``tasks.data.seed``) and the default models' training (``tasks.loop.training``) both read it."""

from __future__ import annotations

import hashlib
from pathlib import Path

SEED_DATA_DIR = Path(__file__).resolve().parent / "seed_data"


def seed_data_path(task) -> Path:
    """Return the seed JSONL file of ``task`` (``tasks/data/seed_data/<code>.jsonl``)."""
    return SEED_DATA_DIR / f"{task.code}.jsonl"


#: Percent of the seed data held out as the hidden test set and as the public dev set; the rest trains.
SEED_TEST_PERCENT = 25
SEED_DEV_PERCENT = 15
SEED_SPLIT_SALT = "dynabench-seed-split"


def seed_split(row: dict) -> str:
    """Return the split (``train``, ``dev`` or ``test``) of seed row ``row`` by the fixed seed split.

    The split key is the row's ``group`` when it has one (NLI rows share a premise and QA rows a
    passage: the whole group goes to one split, so no premise or passage of the test set is seen
    in training), else its ``uid``. Bucket = ``int(sha256("dynabench-seed-split:" + key)[:8], 16) % 100``;
    buckets 0-24 are ``test``, 25-39 ``dev``, 40-99 ``train``. Each seed row stores the result in
    its ``split`` field, and ``tasks/tests/test_seed_split.py`` checks that every stored split
    follows this rule, so a row can never be moved between splits by hand.
    """
    key = str(row.get("group") or row["uid"])
    bucket = int(hashlib.sha256(f"{SEED_SPLIT_SALT}:{key}".encode()).hexdigest()[:8], 16) % 100
    if bucket < SEED_TEST_PERCENT:
        return "test"
    if bucket < SEED_TEST_PERCENT + SEED_DEV_PERCENT:
        return "dev"
    return "train"
