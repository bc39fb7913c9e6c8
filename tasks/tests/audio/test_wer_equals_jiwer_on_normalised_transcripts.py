"""``tasks.metrics.speech``: corpus WER and CER equal ``jiwer.wer`` and ``jiwer.cer`` on the same
normalised strings (300 random pairs, one reference each), and the speech spec's ``score`` reports
them with per-item utterance WER."""

import random

import jiwer
import pytest

from tasks.kinds import get_spec
from tasks.metrics.speech import corpus_scores, normalise_transcript, utterance_wer

WORDS = "turn on the lights off two 3 kitchen Door open, close! it's 1,500 red-green blue. 2.5% 21st".split()


def _sentence(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))


def _pairs(n=300, seed=7):
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        reference = _sentence(rng)
        words = reference.split()
        for _ in range(rng.randint(0, 4)):  # substitutions, deletions and insertions
            op, at = rng.choice("sdi"), rng.randrange(len(words) + 1)
            if op == "i" or not words:
                words.insert(at, rng.choice(WORDS))
            elif op == "d":
                words.pop(min(at, len(words) - 1))
            else:
                words[min(at, len(words) - 1)] = rng.choice(WORDS)
        pairs.append((reference, " ".join(words) or rng.choice(WORDS)))
    return pairs


def test_corpus_wer_and_cer_equal_jiwer_on_300_normalised_pairs():
    pairs = _pairs()
    references = [normalise_transcript(r) for r, _ in pairs]
    hypotheses = [normalise_transcript(h) for _, h in pairs]
    assert all(references) and all(hypotheses)
    ours = corpus_scores([h for _, h in pairs], [[r] for r, _ in pairs])
    assert ours["wer"] == pytest.approx(jiwer.wer(references, hypotheses), abs=1e-12)
    assert ours["cer"] == pytest.approx(jiwer.cer(references, hypotheses), abs=1e-12)
    for (reference, hypothesis), ref, hyp in zip(pairs, references, hypotheses):
        assert utterance_wer(hypothesis, [reference]) == pytest.approx(jiwer.wer(ref, hyp), abs=1e-12)


def test_the_normalisation_folds_case_punctuation_and_numbers():
    assert normalise_transcript("Turn ON the 2 lights, please!") == "turn on the two lights please"
    assert normalise_transcript("It’s 1,500 — or 2.5%?") == "it's one thousand five hundred or two point five percent"
    assert normalise_transcript("the 3rd, 21st and 12th red-green") == "the third twenty first and twelfth red green"


def test_the_spec_scores_wer_and_cer_with_per_item_wer():
    spec = get_spec("speech_recognition")
    items = [{"uid": "a", "target": {"transcripts": ["turn on two lights"]}},
             {"uid": "b", "target": {"transcripts": ["open the door", "open that door"]}}]
    outputs = [{"transcript": "Turn on 2 lights."}, {"transcript": "open that floor"}]
    scores = spec.score({"perf_metric": "wer"}, items, outputs)
    assert scores.per_item == [0.0, pytest.approx(1 / 3)]
    assert scores.metrics()["wer"] == pytest.approx(1 / 7)
    assert scores.metrics([0]) == {"wer": 0.0, "cer": 0.0, "n": 1}
