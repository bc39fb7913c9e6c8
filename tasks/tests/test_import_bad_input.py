"""A malformed row stops an import with its line number and the reason, and nothing of the file is kept."""

import pytest
from django.core.management import CommandError, call_command

from tasks.models import Context, Dataset, DatasetItem

GOOD_ROWS = "".join(f'{{"uid": "ok-{i}", "text": "Sentence number {i}", "label": "positive"}}\n' for i in range(1500))


def _state():
    return Dataset.objects.count(), DatasetItem.objects.count(), Context.objects.count()


def _import_fails(path, message, *args, command="import_dataset", target=("sentiment", "broken")):
    before = _state()
    with pytest.raises(CommandError, match=message):
        call_command(command, *target, str(path), *args)
    assert _state() == before


@pytest.mark.parametrize(
    "bad_line, message",
    [
        ('{"uid": "x", "text": "Nice", "label": "positive"', r"line 1501: bad JSON: Expecting ',' delimiter"),
        ('["x", "Nice", "positive"]', "line 1501: expected a JSON object, found list"),
        ('{"uid": "x", "label": "positive"}', r"line 1501: missing field 'text' \(for text\)"),
        ('{"uid": "x", "text": "   ", "label": "positive"}', r"line 1501: empty text in field 'text'"),
        ('{"uid": "x", "text": "Nice", "label": "mixed"}', "line 1501: unknown label 'mixed' in field 'label'; expected positive, negative, neutral"),
        ('{"uid": "x", "text": "Nice"}', r"line 1501: missing field 'label'"),
        ('{"text": "Nice", "label": "positive"}', r"line 1501: missing uid field 'uid' \(name the uid column with --uid FIELD"),
        ('{"uid": "ok-3", "text": "Sentence number 3", "label": "positive"}', "line 1501: uid 'ok-3' appears earlier in this file"),
        ('{"uid": "ok-1499", "text": "Sentence number 1499", "label": "positive"}', "line 1501: uid 'ok-1499' repeats line 1500"),
    ],
    ids=["bad-json", "not-an-object", "missing-field", "empty-text", "unknown-label", "missing-label", "missing-uid",
         "duplicate-uid-in-an-earlier-batch", "duplicate-uid-in-the-same-batch"],
)
def test_it_names_the_line_and_keeps_nothing_after_a_malformed_jsonl_row(sentiment_task, tmp_path, bad_line, message):
    path = tmp_path / "rows.jsonl"
    path.write_text(GOOD_ROWS + bad_line + "\n" + '{"uid": "after", "text": "After", "label": "neutral"}\n')

    _import_fails(path, message)


def test_it_names_the_line_of_a_file_in_the_wrong_encoding(sentiment_task, tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("uid,text,label\n1,Fine,neutral\n2,Très bon café,positive\n".encode("latin-1"))

    _import_fails(path, r"line 3: not valid utf-8 text \(byte 0xe8 at column 5\); save the file as UTF-8 or pass --encoding")


def test_it_reads_that_file_when_told_its_encoding(sentiment_task, tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("uid,text,label\n1,Fine,neutral\n2,Très bon café,positive\n".encode("latin-1"))

    call_command("import_dataset", "sentiment", "latin", str(path), "--encoding", "latin-1")

    assert DatasetItem.objects.get(uid="2").input == {"text": "Très bon café"}


def test_it_names_a_csv_row_with_the_wrong_number_of_fields(sentiment_task, tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text('uid,text,label\n1,"A quoted\nmulti-line text",positive\n2,Too,many,fields\n')

    _import_fails(path, "line 4: expected 3 fields as in the header, found 4")


def test_it_names_a_bad_label_in_a_csv_file(nli_task, tmp_path):
    path = tmp_path / "nli.csv"
    path.write_text("uid,context,statement,gold_label\n1,A dog runs.,An animal moves.,e\n2,A cat naps.,It sleeps.,x\n")

    _import_fails(
        path, r"line 3: unknown label 'x' in field 'gold_label'; expected entailment, neutral, contradiction \(or e, n, c\)",
        "--map", "premise=context", "--map", "hypothesis=statement", "--map", "label=gold_label", target=("nli", "broken"),
    )


def test_it_keeps_no_context_of_a_file_with_a_bad_row(nli_task, tmp_path):
    path = tmp_path / "premises.jsonl"
    path.write_text('{"uid": "p1", "premise": "A man sleeps."}\n{"uid": "p2", "premise": ""}\n')

    _import_fails(path, r"line 2: empty text in field 'premise'", command="import_contexts", target=("nli", "1"))


def test_it_refuses_a_map_to_an_unknown_task_field(sentiment_task, tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(GOOD_ROWS)

    _import_fails(path, "--map names unknown task field.s. premise; this import takes", "--map", "premise=text")


def test_it_refuses_a_filter_that_matches_nothing(hate_task, tmp_path):
    path = tmp_path / "hate.csv"
    path.write_text("uid,text,label,round.base\n1,Some text,nothate,1\n")

    _import_fails(path, "no rows matched --filter", "--filter", "round.base=9", target=("hate-speech", "broken"))
