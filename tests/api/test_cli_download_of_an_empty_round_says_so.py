"""``dynabench download`` of a round with no row one may download (no public dataset, examples not
downloadable before the round closes) writes no file, says why on standard error and exits 0."""

import json

from rest_framework.authtoken.models import Token

from tests.cli_support import dynabench


def test_an_empty_round_writes_no_file_and_says_why(live_server, researcher, sentiment_task, tmp_path):
    cli = dict(url=live_server.url, token=Token.objects.create(user=researcher).key, config=tmp_path / "config.json")
    output = tmp_path / "r1.jsonl"

    result = dynabench("download", 1, "--task", "sentiment", "-o", output, **cli)
    as_json = dynabench("--json", "download", 1, "--task", "sentiment", "-o", output, **cli)

    assert result.returncode == 0, result.stderr
    assert not output.exists()
    assert "Nothing to download for sentiment round 1" in result.stderr
    assert "once the round closes" in result.stderr and "No file written." in result.stderr
    assert result.stdout == ""
    assert json.loads(as_json.stdout) == {"path": None, "rows": 0}
