"""``manage.py run_cycle`` runs a reduced sentiment cycle (24 DynaSent sentences per round, a
tiny BERT, one epoch) through a real Gunicorn server and a real RQ worker on a database of
its own, and every figure of its report agrees with an independent ORM query of that database."""

import copy
import io
import json
import os
import shutil
import subprocess
import sys
from collections import Counter, defaultdict

import numpy as np
import pytest
from django.conf import settings
from django.db import connections
from statsmodels.stats.inter_rater import fleiss_kappa

from annotation.models import Example
from dynabench import embedded_redis
from leaderboard.models import EvaluationRun
from tests.shared_data import shared_file
from tests.tiny_models import build_tiny_classifier
from validation.models import Validation

LIMIT = 24
pytestmark = pytest.mark.slow


def _scratch_database(tmp_path, request):
    """A database for the cycle's processes: a SQLite file, or a scratch PostgreSQL database when the suite runs on PostgreSQL.

    The SQLite file is a copy of this pytest process's migrated, empty template (``stack_template``,
    shared with the worker-stack tests), so the command's own ``migrate`` finds nothing to apply
    instead of building the schema once more; a PostgreSQL database is created empty and migrated by it."""
    db = connections["default"].settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        path = tmp_path / "cycle.sqlite3"
        shutil.copy(request.getfixturevalue("stack_template"), path)
        return f"sqlite:///{path}", {**db, "NAME": str(path)}, None
    import psycopg

    name = f"{db['NAME']}_cycle"[:63]
    params = {"host": db["HOST"] or None, "port": db["PORT"] or None, "user": db["USER"], "password": db["PASSWORD"] or None, "dbname": "postgres"}
    with psycopg.connect(**{k: v for k, v in params.items() if v}, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    auth = f"{db['USER']}:{db['PASSWORD']}@" if db["PASSWORD"] else f"{db['USER']}@"
    url = f"postgres://{auth}{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{name}"

    def drop():
        with psycopg.connect(**{k: v for k, v in params.items() if v}, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return url, {**db, "NAME": name}, drop


@pytest.fixture
def cycle_run(tmp_path, request, django_db_blocker):
    """Run the command in a child process; yield (report figures, the ORM alias of its database)."""
    shared_file("dynasent/dynasent-v1.1-round02-dynabench-dev.jsonl")
    tiny = build_tiny_classifier(tmp_path / "tiny", ["positive", "negative", "neutral"])
    url, alias_settings, drop = _scratch_database(tmp_path, request)
    # Its own var/, so its own embedded Redis even when the suite runs on a Redis server: a worker
    # of another platform (or a job an earlier test left in this pytest worker's Redis database)
    # must never meet the cycle's jobs, and no fixed database number can collide with a worker's.
    env = {
        **{k: v for k, v in os.environ.items() if k != "REDIS_URL"}, "MEDIA_ROOT": str(tmp_path / "media"),
        "DYNABENCH_MODELS_DIR": str(tmp_path / "models"), "DYNABENCH_VAR_DIR": str(tmp_path / "var"),
    }
    command = [
        sys.executable, "manage.py", "run_cycle", "--database-url", url, "--report", str(tmp_path / "report"),
        "--limit", str(LIMIT), "--base-model", str(tiny), "--epochs", "1", "--web-workers", "1",
    ]
    try:
        done = subprocess.run(command, cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-4000:]
        connections.settings["cycle"] = copy.deepcopy(alias_settings)
        with django_db_blocker.unblock():
            yield json.loads((tmp_path / "report" / "report.json").read_text()), done, tmp_path / "report"
    finally:
        embedded_redis.stop(tmp_path / "var" / "redis.sock")
        if "cycle" in connections.settings:
            connections["cycle"].close()
            del connections.settings["cycle"]
        if drop:
            drop()


def _file_rows():
    path = shared_file("dynasent/dynasent-v1.1-round02-dynabench-dev.jsonl")
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh][:LIMIT]


def test_the_reports_figures_match_the_database(cycle_run):
    figures, done, report_dir = cycle_run
    sentiment = figures["tasks"]["sentiment"]
    round2 = sentiment["rounds"][1]
    examples = list(Example.objects.using("cycle").filter(round__task__code="sentiment", round__number=2, retracted=False))
    rows = _file_rows()

    # Collection: every sentence once, by one account per DynaSent author, with its gold label.
    assert done.stdout.startswith("Cycle done")
    assert sorted(e.input["text"] for e in examples) == sorted(r["sentence"] for r in rows)
    assert len({e.author_id for e in examples}) == len({r["sentence_author"] for r in rows}) == round2["authors"]
    assert Counter(e.target["label"] for e in examples) == Counter(r["gold_label"] for r in rows)

    # Fooled: recomputed from the model's stored answer, not from the model_wrong flag.
    fooled = [e for e in examples if e.model_output["label"] != e.target["label"]]
    verified = [e for e in examples if e.validation_state == "verified_correct"]
    verified_fooled = [e for e in fooled if e.validation_state == "verified_correct"]
    assert round2["counts"]["collected"] == len(examples) == LIMIT
    assert round2["counts"]["fooled"] == len(fooled)
    assert round2["counts"]["verified_fooled"] == len(verified_fooled)
    assert round2["counts"]["vmer"] == pytest.approx(len(verified_fooled) / len(examples))

    # Examples per label.
    for label, row in round2["per_label"].items():
        assert row["collected"] == sum(e.target["label"] == label for e in examples)
        assert row["fooled"] == sum(e.target["label"] == label for e in fooled)
        assert row["verified_correct"] == sum(e.target["label"] == label for e in verified)
        assert row["verified_fooled"] == sum(e.target["label"] == label for e in verified_fooled)

    # Validations: real votes, in the metadata; consensus at three equal verdicts settles each example.
    validations = list(Validation.objects.using("cycle").filter(example__in=[e.pk for e in examples]).order_by("example_id", "id"))
    assert round2["validations"]["recorded"] == len(validations)
    assert round2["validations"]["submitted"] == 5 * LIMIT == len(validations) + round2["validations"]["refused_settled"]
    by_example = defaultdict(list)
    for v in validations:
        by_example[v.example_id].append(v)
    for e in examples:
        verdicts = Counter(v.label for v in by_example[e.pk])
        assert max(verdicts.values()) == 3, e.pk
        assert e.validation_state == ("verified_correct" if verdicts["correct"] == 3 else "verified_incorrect")
        assert all(v.label == ("correct" if v.metadata["voted_label"] == e.target["label"] else "incorrect") for v in by_example[e.pk])

    # Fleiss' kappa on the voted categories, from the stored votes with statsmodels.
    k = round2["agreement"]["platform_raters"]
    categories = sorted({v.metadata["voted_label"] for v in validations})
    table = np.array([[sum(v.metadata["voted_label"] == c for v in by_example[e.pk][:k]) for c in categories]
                      for e in examples if len(by_example[e.pk]) >= k])
    assert round2["agreement"]["platform_kappa"] == pytest.approx(fleiss_kappa(table, method="fleiss"))

    # Accuracy per model and dataset, from the evaluation runs' stored gold and predicted labels.
    runs = EvaluationRun.objects.using("cycle").filter(model__task__code="sentiment").select_related("model", "dataset")
    by_model = {m["name"]: m for m in sentiment["models"]}
    assert set(by_model) == {"minilm-r1", "minilm-r1-r2"}
    checked = 0
    for run in runs:
        gold, predicted = np.load(io.BytesIO(bytes(run.item_results)), allow_pickle=False)
        accuracy = float(np.mean(gold == predicted))
        assert run.status == "done" and run.n_examples == len(gold)
        if run.dataset.access == "scoring":
            assert by_model[run.model.name]["per_dataset"][run.dataset.name] == pytest.approx(accuracy)
            checked += 1
    assert checked == 2 * len(sentiment["scoring_datasets"]) and "dynasent-r2-test" in sentiment["scoring_datasets"]

    # The retrained model learnt from rounds 1 and 2, leaving out what round 2's close held
    # out for dev and test; model 1 was in the loop of round 2.
    assert round2["model_in_loop"] == "minilm-r1"
    rounds_used = {s["source"]: s.get("per_round") for s in by_model["minilm-r1-r2"]["training_data"]}
    held_out = [e for e in verified if e.split in ("dev", "test")]
    assert held_out and rounds_used["validated"] == {"1": LIMIT, "2": len(verified) - len(held_out)}

    # The report itself.
    text = (report_dir / "report.md").read_text()
    assert f"vMER {100 * round2['counts']['vmer']:.1f}%" in text and "0.681" in text
    assert {p.name for p in report_dir.glob("*.svg")} >= {"sentiment-step-times.svg", "sentiment-round2-labels.svg", "sentiment-performance-by-round.svg"}
