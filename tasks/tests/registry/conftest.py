"""Fixtures for the registry tests: ML model records for tiny model directories, a clean registry cache."""

import pytest

from tasks.loop.model_checks import directory_checksum
from tests.tiny_models import build_tiny_classifier


@pytest.fixture(autouse=True)
def one_torch_thread(one_torch_thread):
    """Every registry test runs torch on one thread (the root ``one_torch_thread``)."""
    yield


@pytest.fixture(autouse=True)
def empty_registry():
    """Every test starts and ends with an empty registry cache."""
    from tasks.loop.registry import clear_cache

    clear_cache()
    yield
    clear_cache()


@pytest.fixture
def register_model(db):
    """Return ``register(path, task, name=...) -> MLModel``: a Hugging Face directory record of ``task``."""
    from tasks.models import MLModel

    def register(path, task, *, name="tiny", **fields):
        return MLModel.objects.create(
            task=task, name=name, kind=MLModel.Kind.HF_DIRECTORY, path=str(path),
            checksum=directory_checksum(path), **fields,
        )

    return register


@pytest.fixture
def sentiment_model(register_model, sentiment_task, tiny_classifier_dir):
    """A registered tiny sentiment classifier (labels positive/negative/neutral)."""
    return register_model(tiny_classifier_dir, sentiment_task, name="tiny-sentiment")


@pytest.fixture(scope="session")
def tiny_nli_dir(tmp_path_factory):
    """A tiny NLI classifier directory (labels entailment/neutral/contradiction)."""
    return build_tiny_classifier(tmp_path_factory.mktemp("tiny-nli"), ["entailment", "neutral", "contradiction"])


@pytest.fixture
def nli_model(register_model, nli_task, tiny_nli_dir):
    return register_model(tiny_nli_dir, nli_task, name="tiny-nli")


@pytest.fixture
def qa_model(register_model, qa_task, tiny_qa_dir):
    return register_model(tiny_qa_dir, qa_task, name="tiny-qa")
