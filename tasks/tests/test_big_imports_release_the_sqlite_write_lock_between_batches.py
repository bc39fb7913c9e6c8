"""Issue 28: on SQLite a 1M-row import held the database's one write lock for its whole transaction,
so logging in meanwhile took about 20 s. Outside a caller's transaction, an import on SQLite now
commits each batch of ``BATCH_SIZE`` rows on its own, holding no transaction while it reads the
file; a failed import deletes what its batches wrote (and the round or dataset it created), so the
outcome stays all-or-nothing. PostgreSQL keeps one transaction (its row locks block nobody)."""

import pytest
from django.db import connection

from tasks.data.importers.contexts import import_contexts
from tasks.data.importers.datasets import import_dataset
from tasks.data.importers.errors import ImportRowError
from tasks.data.importers.files import FileSpec
from tasks.data.importers.writing import BATCH_SIZE
from tasks.models import Context, Dataset, DatasetItem, Round

pytestmark = pytest.mark.django_db(transaction=True)
ROWS = BATCH_SIZE * 2 + 500


def rows(path, n, *, bad_at=None, prefix="r"):
    with open(path, "w", encoding="utf-8") as out:
        for i in range(1, n + 1):
            if i == bad_at:
                out.write('{"uid": "bad", "label": "positive"}\n')  # no text
            else:
                out.write(f'{{"uid": "{prefix}{i}", "text": "Sentence {i}", "label": "positive", "prompt": "Prompt {i}"}}\n')
    return path


def test_the_file_is_read_outside_any_transaction_and_each_batch_commits(sentiment_task, tmp_path):
    seen = []

    def on_progress(done, size):  # called while the file is read, between batches
        seen.append((connection.in_atomic_block, DatasetItem.objects.count()))

    result = import_dataset(task=sentiment_task, name="big", spec=FileSpec(path=rows(tmp_path / "d.jsonl", ROWS)),
                            split="dev", on_progress=on_progress)

    assert result.added == ROWS and DatasetItem.objects.count() == ROWS
    if connection.vendor == "sqlite":
        assert not any(inside for inside, _ in seen)  # no transaction (so no write lock) while reading
        assert any(0 < stored < ROWS for _, stored in seen)  # earlier batches committed before the end
    else:
        assert all(inside for inside, _ in seen)  # one transaction on PostgreSQL


def test_a_failure_after_committed_batches_deletes_them_and_the_dataset_it_created(sentiment_task, tmp_path):
    path = rows(tmp_path / "d.jsonl", ROWS, bad_at=ROWS - 10)

    with pytest.raises(ImportRowError) as refused:
        import_dataset(task=sentiment_task, name="big", spec=FileSpec(path=path), split="dev", round_number=7)

    assert refused.value.line == ROWS - 10
    assert not Dataset.objects.filter(name="big").exists() and DatasetItem.objects.count() == 0
    assert not Round.objects.filter(task=sentiment_task, number=7).exists()  # the round it created is gone too


def test_a_failure_keeps_what_was_there_before(sentiment_task, tmp_path):
    import_dataset(task=sentiment_task, name="big", spec=FileSpec(path=rows(tmp_path / "a.jsonl", 30, prefix="old")), split="dev")
    before = sorted(DatasetItem.objects.values_list("uid", flat=True))

    with pytest.raises(ImportRowError):
        import_dataset(task=sentiment_task, name="big", spec=FileSpec(path=rows(tmp_path / "b.jsonl", ROWS, bad_at=ROWS)))

    assert sorted(DatasetItem.objects.values_list("uid", flat=True)) == before


def test_contexts_too_are_all_or_nothing_across_batches(sentiment_task, tmp_path):
    before = Context.objects.count()

    with pytest.raises(ImportRowError):
        import_contexts(task=sentiment_task, round_number=9, spec=FileSpec(path=rows(tmp_path / "c.jsonl", ROWS, bad_at=ROWS - 1)),
                        create_round=True)

    assert Context.objects.count() == before
    assert not Round.objects.filter(task=sentiment_task, number=9).exists()
