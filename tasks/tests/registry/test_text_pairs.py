"""A text-pair task (NLI) feeds premise and hypothesis to the model as one pair, in config order,
encoded exactly as the model's tokenizer encodes a pair."""

import numpy as np
import pytest
import torch

from dynabench.errors import RuleError
from tasks.loop.registry import get_predictor

PAIRS = [
    {"premise": "a man is playing a guitar on the street", "hypothesis": "nobody is playing music outside"},
    {"premise": "the museum opened in 1921", "hypothesis": "the museum hosts many visitors"},
]


def test_it_encodes_premise_and_hypothesis_as_a_pair(nli_model):
    predictor = get_predictor(nli_model)

    outputs = predictor.predict(PAIRS)

    for pair, output in zip(PAIRS, outputs):
        encoding = predictor.tokenizer(pair["premise"], pair["hypothesis"], return_tensors="pt")
        assert encoding["input_ids"][0].tolist().count(predictor.tokenizer.sep_token_id) == 2  # two segments
        with torch.inference_mode():
            raw = predictor.model(**encoding).logits.softmax(-1)[0].numpy()
        np.testing.assert_allclose(list(output["probs"].values()), raw, rtol=1e-4, atol=1e-6)
        assert list(output["probs"]) == ["entailment", "neutral", "contradiction"]


def test_it_truncates_a_pair_longer_than_the_model_takes(nli_model):
    predictor = get_predictor(nli_model)
    long_premise = " ".join(["the museum opened in 1921 and hosts many visitors"] * 60)

    [output] = predictor.predict([{"premise": long_premise, "hypothesis": "the museum is old"}])

    assert sum(output["probs"].values()) == pytest.approx(1.0, rel=1e-5)


def test_it_refuses_a_pair_without_its_second_text(nli_model):
    with pytest.raises(RuleError) as refusal:
        get_predictor(nli_model).predict([{"premise": "a man is playing a guitar"}])

    assert refusal.value.field == "hypothesis"
