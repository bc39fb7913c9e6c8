"""Fixtures of the leaderboard tests: a private MEDIA_ROOT, scoring datasets, archives, submitted models."""

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest

SENTIMENT_ITEMS = [
    ("s1", "the food was great and the staff were friendly", "positive", "food"),
    ("s2", "the service was slow and the room was dirty", "negative", "service"),
    ("s3", "the museum opened in 1921", "neutral", ""),
    ("s4", "He said his waiter was friendly", "positive", "service"),
    ("s5", "i hate waiting in long queues at the airport", "negative", ""),
    ("s6", "John thinks the room is fine.", "neutral", "room"),
]


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    """Every test writes uploads, models and predictions under its own temporary MEDIA_ROOT."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir()
    return settings.MEDIA_ROOT


@pytest.fixture(autouse=True)
def empty_cache():
    """Rate-limit counters (e.g. the hourly upload attempts) start at zero in every test."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def empty_registry():
    from tasks.loop.registry import clear_cache

    clear_cache()
    yield
    clear_cache()


def make_dataset(task, name, items, *, round_number=1, access="scoring", weight=1.0):
    """Create a dataset of ``task`` with ``items`` = [(uid, input dict, target dict, tag)]."""
    from tasks.models import Dataset, DatasetItem, Round

    round_ = Round.objects.get_or_create(task=task, number=round_number)[0] if round_number else None
    dataset = Dataset.objects.create(task=task, round=round_, name=name, access=access, weight=weight)
    DatasetItem.objects.bulk_create(
        [DatasetItem(dataset=dataset, uid=uid, input=inp, target=target, tag=tag) for uid, inp, target, tag in items]
    )
    return dataset


@pytest.fixture
def sentiment_dataset(sentiment_task):
    items = [(uid, {"text": text}, {"label": label}, tag) for uid, text, label, tag in SENTIMENT_ITEMS]
    return make_dataset(sentiment_task, "sentiment-r1-dev", items)


@pytest.fixture
def sentiment_datasets(sentiment_dataset, sentiment_task):
    """Two scoring datasets: round 1 (6 items) and round 2 (3 items)."""
    items = [(f"r2-{i}", {"text": t}, {"label": label}, "") for i, (_, t, label, _) in enumerate(SENTIMENT_ITEMS[:3])]
    return [sentiment_dataset, make_dataset(sentiment_task, "sentiment-r2-dev", items, round_number=2)]


def zip_directory(path: Path, *, prefix: str = "model/", extra: dict | None = None) -> bytes:
    """Return a zip (bytes) of every file under ``path``, inside ``prefix``, plus ``extra`` {name: bytes}."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for file in sorted(Path(path).rglob("*")):
            if file.is_file():
                archive.write(file, prefix + str(file.relative_to(path)))
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return buffer.getvalue()


def tar_directory(path: Path, *, prefix: str = "model/") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(path, arcname=prefix.rstrip("/"))
    return buffer.getvalue()


@pytest.fixture(scope="session")
def tiny_sentiment_zip(tiny_classifier_dir):
    return zip_directory(tiny_classifier_dir)


def predictions_jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


@pytest.fixture
def submitted_model(researcher, sentiment_task, sentiment_dataset, tiny_sentiment_zip):
    """A tiny sentiment model submitted as a zip by the researcher and unpacked by its job (queued, not evaluated)."""
    from tests.upload_support import submit_unpacked

    return submit_unpacked(user=researcher, task=sentiment_task, upload=tiny_sentiment_zip, name="tiny-bert",
                           description="A **tiny** model.")


def evaluate_now(model) -> list[str]:
    """Run ``evaluate_model`` and every run job inline (as a worker would); return their summaries."""
    from leaderboard.jobs import evaluate_model, evaluate_run
    from leaderboard.models import EvaluationRun

    summaries = [evaluate_model(model.pk)]
    for run in EvaluationRun.objects.filter(model=model).order_by("pk"):
        summaries.append(evaluate_run(run.pk))
    return summaries


def answers(correct: int, items=SENTIMENT_ITEMS, prefix=""):
    """Predictions right on the first ``correct`` items and wrong on the rest."""
    wrong = {"positive": "negative", "negative": "neutral", "neutral": "positive"}
    return [{"uid": prefix + uid, "label": label if i < correct else wrong[label]} for i, (uid, _, label, _) in enumerate(items)]


@pytest.fixture
def ranked_sentiment(researcher, outsider, sentiment_task, sentiment_datasets, settings):
    """Three evaluated prediction-file models on two scoring datasets (round 1: 6 items, round 2: 3 items):
    alpha 6/6 and 1/3, beta 4/6 and 3/3, gamma 2/6 and 0/3. With equal dataset weights the order
    is beta (83.3), alpha (66.7), gamma (16.7); weighting round 1 only gives alpha, beta, gamma.
    ``beta`` belongs to the outsider (made a researcher: submitting needs the role) and is anonymous.
    """
    from django.contrib.auth.models import Group

    from leaderboard.jobs import recompute_leaderboard
    from leaderboard.services import submit_predictions

    settings.MODEL_SUBMISSIONS_PER_DAY = 100
    outsider.groups.add(Group.objects.get(name="researcher"))
    r2 = SENTIMENT_ITEMS[:3]
    models = {}
    for name, user, first, second, anonymous in [("alpha", researcher, 6, 1, False), ("beta", outsider, 4, 3, True), ("gamma", researcher, 2, 0, False)]:
        rows = [{**row, "dataset": "sentiment-r1-dev"} for row in answers(first)]
        rows += [{"uid": f"r2-{i}", "label": row["label"], "dataset": "sentiment-r2-dev"} for i, row in enumerate(answers(second, r2))]
        model = submit_predictions(user=user, task=sentiment_task, upload=predictions_jsonl(rows), name=name, anonymous=anonymous)
        evaluate_now(model)
        models[name] = model
    recompute_leaderboard(sentiment_task.pk)
    return models


def make_clustered_dataset(task, name, places, clusters, *, author, label_visibility="public"):
    """A dataset of ``task``'s current round whose items hold one example each by ``author`` (as
    ``validation/round_close.py`` writes them), and the round's finished diversity report: ``clusters`` its ``figures["clusters"]``,
    ``places[i]`` the cluster of item i's example (-1: none; None: no ``ExampleDiversity`` row, the example
    written after the report)."""
    from annotation.diversity_models import ExampleDiversity, RoundDiversity
    from annotation.models import Example
    from tasks.models import Dataset, DatasetItem

    round_ = task.current_round()
    context = round_.contexts.order_by("pk").first()
    dataset = Dataset.objects.create(task=task, round=round_, name=name, label_visibility=label_visibility)
    RoundDiversity.objects.update_or_create(round=round_, defaults={"status": "done", "figures": {"clusters": clusters}})
    for i, place in enumerate(places):
        example = Example.objects.create(round=round_, context=context, author=author, input={"text": f"{name} {i}"},
                                         target={"label": "positive"}, model_output={"label": "negative"}, model_wrong=True)
        DatasetItem.objects.create(dataset=dataset, uid=f"{name}-{i}", input=example.input, target=example.target,
                                   metadata={"example_id": example.pk})
        if place is not None:
            ExampleDiversity.objects.create(example=example, round=round_, cluster=place, representative=example, group_size=1)
    return dataset


def make_scored_run(model, dataset, *, right):
    """A done run of ``model`` on ``dataset`` whose stored per-item results are right where ``right[i]`` is true
    (label codes: gold 0, predicted 0 or 1, in the dataset's item order)."""
    import numpy as np

    from leaderboard.models import EvaluationRun
    from leaderboard.scoring import serialise

    gold = np.zeros(len(right), dtype=np.int16)
    predicted = np.array([0 if r else 1 for r in right], dtype=np.int16)
    return EvaluationRun.objects.create(
        model=model, dataset=dataset, status=EvaluationRun.Status.DONE, n_examples=len(right),
        performance=sum(right) / len(right), metrics={"accuracy": sum(right) / len(right)}, dataset_version=dataset.version,
        item_results=serialise(np.stack([gold, predicted])),
    )
