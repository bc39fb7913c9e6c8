"""A model whose artefact changed (new checksum) is loaded again, replacing the stale predictor."""

from tasks.loop.model_checks import directory_checksum
from tasks.loop.registry import cache_info, get_predictor
from tests.tiny_models import build_tiny_classifier

TEXT = [{"text": "the food was great and the staff were friendly"}]


def test_a_changed_checksum_reloads_the_model(tmp_path, register_model, sentiment_task):
    path = build_tiny_classifier(tmp_path / "model", sentiment_task.labels, seed=1)
    model = register_model(path, sentiment_task)
    before = get_predictor(model).predict(TEXT)

    build_tiny_classifier(path, sentiment_task.labels, seed=2)  # retrained in place
    model.checksum = directory_checksum(path)
    model.save()
    after = get_predictor(model).predict(TEXT)

    assert after != before
    assert cache_info()["loads"] == 2
    assert cache_info()["models"] == [(model.pk, str(path), model.checksum)]


def test_an_unchanged_checksum_keeps_the_loaded_model(sentiment_model):
    first = get_predictor(sentiment_model)
    sentiment_model.name = "renamed"
    sentiment_model.save()

    assert get_predictor(sentiment_model) is first
