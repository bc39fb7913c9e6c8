"""Batched prediction gives the same outputs as predicting one input at a time."""

import pytest

from tasks.loop.registry import get_predictor
from tests.tiny_models import CORPUS

TEXTS = [" ".join(CORPUS[: 1 + i % 7]) + (" " + CORPUS[i % 10]) * (i % 3) for i in range(23)]


@pytest.mark.parametrize("batch_size", [1, 4, 64])
def test_batches_equal_one_by_one_for_classification(sentiment_model, batch_size):
    predictor = get_predictor(sentiment_model)
    inputs = [{"text": t} for t in TEXTS]

    batched = predictor.predict(inputs, batch_size=batch_size)
    one_by_one = [predictor.predict([item])[0] for item in inputs]

    for got, want in zip(batched, one_by_one, strict=True):
        assert got["label"] == want["label"]
        assert got["probs"] == pytest.approx(want["probs"], abs=1e-5)


def test_batches_equal_one_by_one_for_question_answering(qa_model):
    predictor = get_predictor(qa_model)
    inputs = [
        {"question": CORPUS[5 + i % 2], "passage": " ".join(CORPUS[j % 10] for j in range(i, i + 3 + 4 * i))}
        for i in range(9)
    ]

    batched = predictor.predict(inputs, batch_size=4)
    one_by_one = [predictor.predict([item])[0] for item in inputs]

    for got, want in zip(batched, one_by_one, strict=True):
        assert (got["answer"], got["start"], got["end"]) == (want["answer"], want["start"], want["end"])
        assert got["score"] == pytest.approx(want["score"], abs=1e-5)
