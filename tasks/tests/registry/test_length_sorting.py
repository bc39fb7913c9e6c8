"""Inputs are batched in order of length, each batch padded only to its own longest input, and
outputs come back in the caller's order."""

import pytest

from tasks.loop.registry import get_predictor
from tests.tiny_models import CORPUS


def test_it_pads_each_batch_to_its_longest_input_and_restores_the_order(sentiment_model, monkeypatch):
    predictor = get_predictor(sentiment_model)
    texts = [" ".join(CORPUS[: n]) for n in (9, 1, 5, 10, 2, 7, 3, 8, 4, 6)]  # lengths deliberately shuffled
    widths = []
    forward = predictor.model.forward

    def recording_forward(**inputs):
        widths.append(inputs["input_ids"].shape[1])
        return forward(**inputs)

    monkeypatch.setattr(predictor.model, "forward", recording_forward)

    outputs = predictor.predict([{"text": t} for t in texts], batch_size=3)

    lengths = sorted(len(predictor.tokenizer(t)["input_ids"]) for t in texts)
    assert widths == [max(lengths[i : i + 3]) for i in range(0, len(texts), 3)]
    monkeypatch.undo()
    for text, output in zip(texts, outputs):
        assert output["probs"] == pytest.approx(predictor.predict([{"text": text}])[0]["probs"], abs=1e-5)


def test_it_cuts_batches_of_long_inputs_by_padded_tokens(sentiment_model, monkeypatch):
    from tasks.loop import registry

    predictor = get_predictor(sentiment_model)
    monkeypatch.setattr(registry, "MAX_BATCH_TOKENS", 100)
    texts = [" ".join(CORPUS[: n]) for n in (1, 2, 3, 8, 9, 10)]  # about 10 ... 90 tokens
    shapes = []
    forward = predictor.model.forward

    def recording_forward(**inputs):
        shapes.append(tuple(inputs["input_ids"].shape))
        return forward(**inputs)

    monkeypatch.setattr(predictor.model, "forward", recording_forward)

    outputs = predictor.predict([{"text": t} for t in texts], batch_size=64)

    assert len(outputs) == len(texts)
    assert len(shapes) > 1
    assert all(rows * width <= 100 or rows == 1 for rows, width in shapes)
    assert sum(rows for rows, _ in shapes) == len(texts)
