"""``dynabench download ROUND --task T -o FILE`` writes the round's public rows as JSONL (hidden sets
left out) and says how many."""

import json

from rest_framework.authtoken.models import Token

from tests.cli_support import dynabench


def test_download_writes_the_public_rows(live_server, researcher, sentiment_datasets, tmp_path):
    cli = dict(url=live_server.url, token=Token.objects.create(user=researcher).key, config=tmp_path / "config.json")
    output = tmp_path / "r1.jsonl"

    result = dynabench("download", 1, "--task", "sentiment", "-o", output, **cli)

    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    assert [(r["source"], r["uid"]) for r in rows] == [("sent-r1-dev", f"sent-r1-dev-{i}") for i in range(3)]
    assert "3 rows of sentiment round 1" in result.stderr
    assert result.stdout.strip() == str(output)
