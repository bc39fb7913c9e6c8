"""The model's id2label is matched to the task's labels by name, case-insensitively or through aliases."""

import numpy as np
import pytest
import torch

from tasks.loop.registry import get_predictor
from tests.tiny_models import build_tiny_classifier

TEXTS = ["the food was great and the staff were friendly", "the room was dirty", "a man is playing a guitar"]


def _raw_probs(predictor, text):
    encoding = predictor.tokenizer(text, return_tensors="pt")
    with torch.inference_mode():
        return predictor.model(**encoding).logits.softmax(-1)[0].numpy()


def test_it_maps_model_labels_in_another_order_and_case_to_the_task_labels(tmp_path, register_model, sentiment_task):
    model = register_model(build_tiny_classifier(tmp_path, ["NEUTRAL", "Positive", "negative"]), sentiment_task)
    predictor = get_predictor(model)

    for text, output in zip(TEXTS, predictor.predict([{"text": t} for t in TEXTS])):
        raw = _raw_probs(predictor, text)  # model order: neutral, positive, negative
        assert list(output["probs"]) == ["positive", "negative", "neutral"]
        np.testing.assert_allclose(
            [output["probs"]["neutral"], output["probs"]["positive"], output["probs"]["negative"]], raw, rtol=1e-4
        )
        assert output["label"] == ["neutral", "positive", "negative"][int(raw.argmax())]


def test_it_maps_labels_through_the_task_aliases(tmp_path, register_model, hate_task):
    # hate-speech aliases: "not hateful" -> nothate, "hateful" -> hate
    model = register_model(build_tiny_classifier(tmp_path, ["Not Hateful", "hateful"]), hate_task)
    predictor = get_predictor(model)

    [output] = predictor.predict([{"text": TEXTS[0]}])
    raw = _raw_probs(predictor, TEXTS[0])
    assert list(output["probs"]) == ["hate", "nothate"]
    assert output["probs"]["nothate"] == pytest.approx(float(raw[0]), rel=1e-4)
    assert output["probs"]["hate"] == pytest.approx(float(raw[1]), rel=1e-4)
