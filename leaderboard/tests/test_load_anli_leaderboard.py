"""Real input: ANLI R1–R3 dev and eight real models' predictions, scored exactly as the data README recomputes them."""

import re
from pathlib import Path

import pytest
from django.core.management import call_command

from leaderboard.anli import default_data_dir
from leaderboard.models import EvaluationRun
from tasks.models import Dataset, MLModel

pytestmark = pytest.mark.skipif(not Path(default_data_dir()).is_dir(), reason="the shared ANLI data is not at hand")

# ../shared/data/README.md, "Dev accuracy recomputed here from the *PredLabel columns (A1 / A2 / A3)".
README = {
    "anli-roberta-large": (73.8, 50.6, 46.1),
    "anli-xlnet-large": (73.5, 52.1, 50.7),
    "anli-albert-xxlarge": (76.0, 57.0, 56.8),
    "anli-bart-large": (73.5, 51.8, 50.3),
    "anli-electra-large": (67.1, 53.7, 55.0),
    "roberta-from-r3": (71.7, 44.8, 20.3),
    "roberta-from-r2": (67.2, 18.5, 22.0),
    "bert-r1": (0.0, 28.2, 31.9),
}


def test_loading_anli_ranks_eight_real_models_with_the_readmes_accuracies(db, default_tasks, client):
    # when
    output = call_command("load_anli_leaderboard")
    # then: three scoring datasets with the README's counts
    counts = {d.name: (d.access, d.round.number, d.items.count()) for d in Dataset.objects.filter(task__code="nli")}
    assert counts == {"anli-r1-dev": ("scoring", 1, 1000), "anli-r2-dev": ("scoring", 2, 1000), "anli-r3-dev": ("scoring", 3, 1198)}
    # the accuracies equal the README's table, recomputed from the same columns
    got = {}
    for model, dataset, performance, status in EvaluationRun.objects.filter(model__task__code="nli").values_list(
        "model__name", "dataset__name", "performance", "status"
    ):
        assert status == "done"
        got.setdefault(model, [None] * 3)[int(dataset[6]) - 1] = round(100 * performance, 1)
    assert {m: tuple(v) for m, v in got.items()} == README
    assert "anli-roberta-large" in output and "73.8" in output
    # the leaderboard ranks the eight of them
    html = client.get("/tasks/nli/leaderboard/").content.decode()
    ranked = re.findall(r'<a href="/models/\d+/">([^<]+)</a>', html.split("<tbody>")[1].split("</tbody>")[0])
    assert len(ranked) == 8 and MLModel.objects.filter(task__code="nli", status="evaluated").count() == 8
    assert ranked[0] == "anli-albert-xxlarge"  # best mean dev accuracy (63.3)
    assert ranked[-1] == "bert-r1"
    # running it again imports and submits nothing new
    before = sorted(MLModel.objects.filter(task__code="nli").values_list("pk", flat=True))
    assert "0 added, 1000 already present" in call_command("load_anli_leaderboard")
    assert sorted(MLModel.objects.filter(task__code="nli").values_list("pk", flat=True)) == before


def test_a_researcher_gets_the_readmes_accuracies_through_the_client_on_hidden_test_sets(
    live_server, default_tasks, researcher, tmp_path, settings
):
    """The same 24 accuracies when the three rounds are the NLI task's hidden test sets and a
    researcher (not an owner) submits the eight prediction files and reads the scores with the
    Python client, a real RQ worker evaluating them in between."""
    from dynabench_client import DynabenchClient
    from leaderboard.anli import ANLI_MODELS, ROUNDS, dataset_name, import_rounds, predictions_file
    from tests.api.conftest import run_worker

    # given: ANLI R1–R3 imported by the platform as rounds 1–3's test sets; the labels stay on the server
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MODEL_SUBMISSIONS_PER_DAY = len(ANLI_MODELS)
    import_rounds(default_tasks["nli"], Path(default_data_dir()), split="test")
    client = DynabenchClient.login("rita", "pw-rita", base_url=live_server.url)
    datasets = {d["name"]: d for d in client.datasets(task="nli")}
    assert {name: (d["labels_hidden"], d["split"]) for name, d in datasets.items()} == {
        dataset_name(n, "test"): (True, "test") for n in ROUNDS
    }
    assert {item["target"] for item in client.dataset_items(datasets["anli-r1-test"]["id"])} == {None}
    # when: the researcher submits each model's predictions and the worker scores them
    ids = {}
    for name in ANLI_MODELS:
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(predictions_file(Path(default_data_dir()), name, split="test"))
        ids[name] = client.submit_predictions(path, task="nli", name=name)
    assert client.submission_allowance()["remaining"] == 0
    run_worker()
    # then: every accuracy, per dataset and per round, is the README's
    results = {name: client.get_results(model_id) for name, model_id in ids.items()}
    assert {name: r["status"] for name, r in results.items()} == {name: "evaluated" for name in ANLI_MODELS}
    per_dataset = {
        name: tuple(round(100 * r["datasets"][dataset_name(n, "test")]["performance"], 1) for n in ROUNDS)
        for name, r in results.items()
    }
    per_round = {name: tuple(round(100 * r[f"round{n}_acc"], 1) for n in ROUNDS) for name, r in results.items()}
    assert per_dataset == README
    assert per_round == README
