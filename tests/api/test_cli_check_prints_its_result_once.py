"""``dynabench check`` says its result once, on standard output (the results' stream): the "OK: ..."
line, with nothing repeated on standard error (a bare "ok" after it said nothing more)."""

import json

from rest_framework.authtoken.models import Token

from tests.cli_support import dynabench


def test_a_passing_check_prints_one_line(live_server, researcher, sentiment_datasets, tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text("".join(json.dumps({"uid": f"{n}-{i}", "label": "neutral"}) + "\n" for n in ("sent-r1-dev", "sent-r1-test") for i in range(3)))
    cli = dict(url=live_server.url, token=Token.objects.create(user=researcher).key, config=tmp_path / "config.json")

    result = dynabench("check", good, "--task", "sentiment", **cli)

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [result.stdout.strip()] and result.stdout.startswith("OK: 6 predictions would be scored")
    assert result.stderr.strip() == ""
