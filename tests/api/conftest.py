"""Fixtures for the API tests: token clients per role, an owner of another task, datasets."""

import io
import tarfile
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.core.cache import cache
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tasks.models import Dataset, DatasetItem, MLModel


@pytest.fixture(autouse=True)
def _private_media_root(settings, tmp_path):
    """Uploaded models and predictions go under each test's own MEDIA_ROOT."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir()


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    """Rate-limit counters live in the cache (Redis), which outlives a test's database."""
    cache.clear()
    yield
    cache.clear()


def run_worker() -> None:
    """Run every queued RQ job (unpacking, evaluation, leaderboard recompute) in this process, as ``rqworker --burst`` would."""
    import django_rq
    from rq import SimpleWorker

    django_rq.get_worker("evaluation", "default", worker_class=SimpleWorker).work(burst=True)


def tar_gz(directory) -> io.BytesIO:
    """A .tar.gz of the files of ``directory`` (a Hugging Face model directory)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for file in sorted(Path(directory).rglob("*")):
            if file.is_file():
                archive.add(file, arcname=str(file.relative_to(directory)))
    buffer.seek(0)
    buffer.name = "model.tar.gz"
    return buffer


def client_for(user=None) -> APIClient:
    """An API client authenticated with ``user``'s token (anonymous when ``user`` is None)."""
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def nli_owner(db, default_tasks):
    """A user who owns the NLI task only: the owner of another task than sentiment."""
    user = User.objects.create_user(username="nora", password="pw-nora")
    user.groups.add(*Group.objects.filter(name__in=["annotator", "validator", "researcher"]))
    default_tasks["nli"].owners.add(user)
    return user


@pytest.fixture
def sentiment_datasets(sentiment_task):
    """Round 1 of sentiment with a scoring dev set whose labels the owner published (key ``scoring``)
    and a scoring test set with hidden labels (key ``hidden``), three items each."""
    round1 = sentiment_task.rounds.get(number=1)
    datasets = {}
    for name, key, visibility, split in (("sent-r1-dev", "scoring", "public", "dev"), ("sent-r1-test", "hidden", "hidden", "test")):
        dataset = Dataset.objects.create(task=sentiment_task, round=round1, name=name, access="scoring", split=split,
                                         label_visibility=visibility)
        DatasetItem.objects.bulk_create(
            DatasetItem(
                dataset=dataset, uid=f"{name}-{i}", input={"text": f"{name} sentence {i}"},
                target={"label": label}, metadata={"gold_votes": [label] * 5},
            )
            for i, label in enumerate(["positive", "negative", "neutral"])
        )
        datasets[key] = dataset
    return datasets


@pytest.fixture
def sentiment_model(sentiment_task, tiny_classifier_dir, owner):
    """A tiny sentiment classifier, in the loop of round 1."""
    model = MLModel.objects.create(
        task=sentiment_task, owner=owner, name="tiny-sentiment", kind=MLModel.Kind.HF_DIRECTORY,
        path=str(tiny_classifier_dir), status=MLModel.Status.EVALUATED, published=True,
    )
    sentiment_task.rounds.get(number=1).target_models.add(model)
    return model
