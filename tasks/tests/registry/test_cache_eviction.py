"""The registry cache is bounded by count and by memory, evicting the least recently used model."""

from tasks.loop.registry import cache_info, get_predictor
from tests.tiny_models import build_tiny_classifier


def _models(tmp_path, register_model, task, n):
    return [
        register_model(build_tiny_classifier(tmp_path / f"m{i}", task.labels, seed=i), task, name=f"m{i}")
        for i in range(n)
    ]


def _cached_pks():
    return [key[0] for key in cache_info()["models"]]


def test_it_evicts_the_least_recently_used_model_beyond_the_count(settings, tmp_path, register_model, sentiment_task):
    settings.DYNABENCH_REGISTRY_MAX_MODELS = 2
    first, second, third = _models(tmp_path, register_model, sentiment_task, 3)

    get_predictor(first)
    get_predictor(second)
    get_predictor(first)  # first is now the most recently used
    get_predictor(third)

    assert _cached_pks() == [first.pk, third.pk]
    get_predictor(second)  # evicted, so loaded again
    assert cache_info()["loads"] == 4
    assert _cached_pks() == [third.pk, second.pk]


def test_it_evicts_models_beyond_the_memory_bound(settings, tmp_path, register_model, sentiment_task):
    first, second, third = _models(tmp_path, register_model, sentiment_task, 3)
    one_model = get_predictor(first).nbytes
    settings.DYNABENCH_REGISTRY_MAX_GIB = 2.5 * one_model / 2**30  # room for two models

    get_predictor(second)
    get_predictor(third)

    assert _cached_pks() == [second.pk, third.pk]
    assert cache_info()["nbytes"] == 2 * one_model


def test_it_keeps_a_model_larger_than_the_memory_bound_alone(settings, tmp_path, register_model, sentiment_task):
    settings.DYNABENCH_REGISTRY_MAX_GIB = 1e-9
    first, second = _models(tmp_path, register_model, sentiment_task, 2)

    get_predictor(first)
    predictor = get_predictor(second)

    assert _cached_pks() == [second.pk]
    assert predictor.predict([{"text": "fine"}])[0]["label"] in sentiment_task.labels
