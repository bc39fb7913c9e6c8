"""Issue 28 (inputs): a NUL in imported text failed on PostgreSQL only (a 500 or a crashed command).
The vote imports now refuse it, and JSON out of bounds, naming the line or row; nothing is written.
Run with ``DATABASE_URL=postgres://...`` to check it there too."""

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Example
from validation.models import Validation


def test_an_anli_examples_row_with_a_nul_is_refused_naming_it(nli_task, tmp_path):
    examples = tmp_path / "anli.csv"
    examples.write_text("uid,context,statement,gold_label,adversary_pred\nu1,A premise.,A hypo\x00thesis.,e,n\n", encoding="utf-8")
    votes = tmp_path / "votes.jsonl"
    votes.write_text('{"uid": "u1", "verifier labels": ["e", "e"]}\n', encoding="utf-8")

    with pytest.raises(CommandError, match=r"row 1: column 'statement' holds a NUL character \(\\u0000\) at column 7"):
        call_command("import_votes", "nli", 1, str(votes), "--format", "anli", "--examples", str(examples))

    assert not Example.objects.exists() and not Validation.objects.exists()


@pytest.mark.parametrize("line, phrase", [
    ('{"text_id": "t1", "sentence": "a\\u0000b", "label_distribution": {}, "gold_label": "positive"}', "NUL character"),
    ('{"text_id": ' + "1" * 5000 + "}", "more than 19 digits"),
    ("[" * 50_000 + "]" * 50_000, "levels deep"),
])
def test_a_dynasent_line_out_of_bounds_is_refused_naming_it(sentiment_task, tmp_path, line, phrase):
    votes = tmp_path / "dynasent.jsonl"
    votes.write_text(line + "\n", encoding="utf-8")

    with pytest.raises(CommandError, match=f"line 1 is refused: .*{phrase}"):
        call_command("import_votes", "sentiment", 1, str(votes), "--format", "dynasent")

    assert not Example.objects.exists() and not Validation.objects.exists()
