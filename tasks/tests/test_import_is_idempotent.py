"""Re-importing a file adds nothing; a stored uid whose content changed is refused, not overwritten."""

import pytest
from django.core.management import CommandError, call_command

from tasks.models import DatasetItem
from tests.shared_data import shared_file

DYNASENT_ARGS = ["--map", "text=sentence", "--map", "label=gold_label", "--uid", "text_id"]


def test_it_adds_nothing_when_the_same_file_is_imported_again(sentiment_task):
    path = str(shared_file("dynasent/dynasent-v1.1-round02-dynabench-dev.jsonl"))
    call_command("import_dataset", "sentiment", "dynasent-r2-dev", path, *DYNASENT_ARGS)
    ids = set(DatasetItem.objects.values_list("pk", flat=True))

    summary = call_command("import_dataset", "sentiment", "dynasent-r2-dev", path, *DYNASENT_ARGS)

    assert summary == "dataset sentiment/dynasent-r2-dev: 0 added, 720 already present"
    assert set(DatasetItem.objects.values_list("pk", flat=True)) == ids


def test_it_adds_only_new_uids_from_a_longer_file(sentiment_task, tmp_path):
    lines = shared_file("dynasent/dynasent-v1.1-round02-dynabench-dev.jsonl").read_text().splitlines(keepends=True)
    first, both = tmp_path / "first.jsonl", tmp_path / "both.jsonl"
    first.write_text("".join(lines[:10]))
    both.write_text("".join(lines[:25]))
    call_command("import_dataset", "sentiment", "part", str(first), *DYNASENT_ARGS)

    summary = call_command("import_dataset", "sentiment", "part", str(both), *DYNASENT_ARGS)

    assert summary == "dataset sentiment/part: 15 added, 10 already present"
    assert DatasetItem.objects.filter(dataset__name="part").count() == 25


def test_it_refuses_a_stored_uid_with_a_different_label(sentiment_task, tmp_path):
    first, changed = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text("uid,text,label\n1,Great food,positive\n2,Cold soup,negative\n")
    changed.write_text("uid,text,label\n3,Fine,neutral\n2,Cold soup,positive\n")
    call_command("import_dataset", "sentiment", "tiny", str(first))

    with pytest.raises(CommandError, match=r"line 3: uid '2' is already in dataset sentiment/tiny with a different target"):
        call_command("import_dataset", "sentiment", "tiny", str(changed))

    assert sorted(DatasetItem.objects.values_list("uid", flat=True)) == ["1", "2"]
    assert DatasetItem.objects.get(uid="2").target == {"label": "negative"}


def test_it_refuses_to_change_an_existing_datasets_access(sentiment_task, tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("uid,text,label\n1,Great food,positive\n")
    call_command("import_dataset", "sentiment", "tiny", str(path), "--access", "scoring")

    with pytest.raises(CommandError, match="exists with access=scoring, not standard"):
        call_command("import_dataset", "sentiment", "tiny", str(path), "--access", "standard")
