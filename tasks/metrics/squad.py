"""SQuAD answer metrics, shared by the model-wrong rule (annotation) and evaluation (leaderboard).

A line-for-line port of the official SQuAD v1.1 evaluation script's normalisation,
exact match and token F1 (Rajpurkar et al., "SQuAD: 100,000+ Questions for Machine
Comprehension of Text", EMNLP 2016, section 6), which no installable package ships
offline (``evaluate.load("squad")`` fetches its script from a hub).
"""

import re
import string
from collections import Counter

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation and the articles a/an/the, collapse whitespace."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def squad_f1(prediction: str, ground_truth: str) -> float:
    """Word-level F1 in [0, 1] between two answers after ``normalize_answer``."""
    pred_tokens = normalize_answer(prediction).split()
    truth_tokens = normalize_answer(ground_truth).split()
    if not pred_tokens or not truth_tokens:
        return float(pred_tokens == truth_tokens)
    common = Counter(pred_tokens) & Counter(truth_tokens)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(pred_tokens)
    recall = overlap / len(truth_tokens)
    return 2 * precision * recall / (precision + recall)


def squad_exact_match(prediction: str, ground_truth: str) -> float:
    """1.0 if the normalised answers are equal, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(ground_truth))


def best_over_ground_truths(metric, prediction: str, ground_truths: list[str]) -> float:
    """The metric's maximum over several accepted answers (SQuAD scores against the best one)."""
    if not ground_truths:
        return 0.0
    return max(metric(prediction, truth) for truth in ground_truths)
