"""``dynabench check FILE --task T``: the server's own checks as a dry run. A bad predictions file gets
its problems listed with line numbers and exit status 3; a good one exit 0; a model directory is
checked with its weights left home; nothing is stored either way."""

import json
from pathlib import Path

from rest_framework.authtoken.models import Token

from tasks.models import MLModel
from tests.cli_support import dynabench


def test_check_lists_the_bad_lines_of_a_predictions_file(live_server, researcher, sentiment_datasets, tmp_path, settings):
    bad = tmp_path / "bad.jsonl"
    lines = [json.dumps({"uid": f"sent-r1-dev-{i}", "label": "neutral"}) for i in range(3)]
    lines += ["{oops", json.dumps({"uid": "sent-r1-test-0", "label": "furious"}), json.dumps({"uid": "sent-r1-dev-0", "label": "neutral"})]
    bad.write_text("\n".join(lines) + "\n")
    cli = dict(url=live_server.url, token=Token.objects.create(user=researcher).key, config=tmp_path / "config.json")

    result = dynabench("check", bad, "--task", "sentiment", **cli)

    assert result.returncode == 3
    assert "line 4" in result.stderr and "not valid JSON" in result.stderr
    assert "line 5" in result.stderr
    assert "line 6: sent-r1-dev-0 (first on line 1)" in result.stderr
    assert "(400 bad_predictions)" in result.stderr
    assert not MLModel.objects.exists()
    assert [p for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file()] == []


def test_check_passes_a_good_predictions_file_and_a_model_directory(
    live_server, researcher, sentiment_datasets, tiny_classifier_dir, tmp_path, settings
):
    good = tmp_path / "good.jsonl"
    good.write_text("".join(json.dumps({"uid": f"{n}-{i}", "label": "neutral"}) + "\n" for n in ("sent-r1-dev", "sent-r1-test") for i in range(3)))
    cli = dict(url=live_server.url, token=Token.objects.create(user=researcher).key, config=tmp_path / "config.json")

    predictions = dynabench("--json", "check", good, "--task", "sentiment", **cli)
    model = dynabench("--json", "check", tiny_classifier_dir, "--task", "sentiment", **cli)

    assert predictions.returncode == 0, predictions.stderr
    assert json.loads(predictions.stdout) == {"ok": True, "predictions": 6, "datasets": {"sent-r1-dev": 3, "sent-r1-test": 3}}
    assert model.returncode == 0, model.stderr
    assert "config.json" in json.loads(model.stdout)["files"]
    assert not MLModel.objects.exists()
    assert [p for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file()] == []
