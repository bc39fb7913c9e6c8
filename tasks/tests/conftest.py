"""Fixtures for training tests: a tiny base encoder (with its sha256 pinned) and a scratch models dir."""

import pytest

from tasks.training import BaseEncoder, WEIGHTS_FILE, file_sha256


@pytest.fixture
def tiny_encoder(tiny_classifier_dir, settings):
    """A 2-layer BERT standing in for MiniLM, used by every training entry point through the setting."""
    encoder = BaseEncoder(path=tiny_classifier_dir, sha256=file_sha256(tiny_classifier_dir / WEIGHTS_FILE), name="tiny-bert")
    settings.DYNABENCH_TRAINING_BASE_ENCODER = {"path": str(encoder.path), "sha256": encoder.sha256, "name": encoder.name}
    settings.DYNABENCH_TRAINING_THREADS = 1  # a tiny model only loses time to a second thread
    return encoder


@pytest.fixture
def models_dir(tmp_path, settings):
    settings.MODELS_DIR = tmp_path / "models"
    return settings.MODELS_DIR
