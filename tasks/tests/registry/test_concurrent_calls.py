"""Threads asking for the same model share one load, and predict concurrently with correct results."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tasks.loop.registry import cache_info, get_predictor
from tests.tiny_models import CORPUS


def test_concurrent_calls_load_once_and_return_correct_results(sentiment_model, qa_model, monkeypatch):
    from tasks.loop import registry

    real_load = registry.load_predictor

    def slow_load(path, *, task):
        time.sleep(0.3)  # clock-ok: only makes the other threads ask while it loads; the verdict is the load count
        return real_load(path, task=task)

    monkeypatch.setattr(registry, "load_predictor", slow_load)
    go = threading.Event()
    jobs = [(sentiment_model, [{"text": CORPUS[(i + j) % 10]} for j in range(1 + i % 4)]) for i in range(16)]
    jobs += [(qa_model, [{"question": CORPUS[5], "passage": " ".join(CORPUS[i % 10 :])}]) for i in range(8)]

    def call(job):
        go.wait()
        model, inputs = job
        return get_predictor(model).predict(inputs)

    with ThreadPoolExecutor(max_workers=8) as pool:
        futures = [pool.submit(call, job) for job in jobs]
        go.set()
        results = [future.result(timeout=60) for future in futures]

    assert cache_info()["loads"] == 2
    for (model, inputs), got in zip(jobs, results):
        want = get_predictor(model).predict(inputs)
        if model == sentiment_model:
            assert [g["label"] for g in got] == [w["label"] for w in want]
            assert [g["probs"] for g in got] == [pytest.approx(w["probs"], abs=1e-5) for w in want]
        else:
            assert [(g["start"], g["end"], g["answer"]) for g in got] == [(w["start"], w["end"], w["answer"]) for w in want]
