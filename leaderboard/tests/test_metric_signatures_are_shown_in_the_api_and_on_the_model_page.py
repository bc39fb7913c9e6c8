"""The sacreBLEU signature strings stored with a translation model's scores are shown to every reader:
in the model's API record (``evaluations[].metric_signatures``) and on its model page, next to the
score they describe; a model scored by metrics without a signature shows none."""

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils.html import escape

from leaderboard.models import EvaluationRun
from leaderboard.services import submit_predictions
from leaderboard.tests.conftest import evaluate_now, predictions_jsonl
from tasks.models import Task

DEFINITION = Path(__file__).resolve().parents[2] / "tasks" / "data" / "task_definitions" / "flores-mini.json"

# (uid, references, answer): one item with one reference and one with two, so BLEU says nrefs:var.
ITEMS = [
    ("s-1", ["Le musée ouvre à neuf heures du matin."], "Le musée ouvre à neuf heures le matin."),
    ("s-2", ["Le comité publiera son rapport la semaine prochaine.",
             "La commission rendra son rapport public la semaine prochaine."], ""),
]


@pytest.fixture
def translation_model(db, researcher, tmp_path):
    call_command("create_task", str(DEFINITION))
    data = tmp_path / "devtest.jsonl"
    data.write_text("".join(
        json.dumps({"uid": uid, "language_pair": "eng_Latn-fra_Latn", "source": f"source {uid}", "references": refs}) + "\n"
        for uid, refs, _ in ITEMS
    ), encoding="utf-8")
    call_command("import_dataset", "flores-mini", "flores-mini-devtest", str(data), "--no-progress")
    model = submit_predictions(user=researcher, task=Task.objects.get(code="flores-mini"), name="system-s", published=True,
                               upload=predictions_jsonl([{"uid": uid, "translation": hyp} for uid, _, hyp in ITEMS]))
    evaluate_now(model)
    return model


def test_a_reader_sees_each_metrics_signature_in_the_api_and_on_the_page(client, outsider, translation_model):
    run = EvaluationRun.objects.get(model=translation_model)
    assert run.status == "done", run.error
    signatures = run.metric_signatures
    assert signatures["bleu"].startswith("nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp|version:")
    assert signatures["chrfpp"].startswith("nrefs:var|case:mixed|eff:yes|nc:6|nw:2|")
    client.force_login(outsider)

    (evaluation,) = client.get(f"/api/v1/models/{translation_model.pk}").json()["evaluations"]
    page = client.get(f"/models/{translation_model.pk}/").content.decode()

    assert evaluation["metric_signatures"] == signatures
    assert "Metric signatures" in page
    for metric in ("bleu", "chrfpp"):
        assert f"<dt>{metric} <small class=\"muted\">{100 * run.metrics[metric]:.2f}</small></dt><dd><code>{signatures[metric]}</code></dd>" in page
    for signature in signatures.values():  # spBLEU's, where its model is not installed, says why it has no score
        assert f"<code>{escape(signature)}</code>" in page


def test_a_model_without_signatures_shows_none(client, researcher, submitted_model, sentiment_dataset):
    evaluate_now(submitted_model)
    client.force_login(researcher)

    (evaluation,) = client.get(f"/api/v1/models/{submitted_model.pk}").json()["evaluations"]
    page = client.get(f"/models/{submitted_model.pk}/").content.decode()

    assert evaluation["metric_signatures"] == {}
    assert "Metric signatures" not in page
