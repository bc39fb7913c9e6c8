"""The diversity figures match their references: the Vendi score the authors' ``vendi-score`` package
computes (to 1e-6), distinct-n and MinHash pairs on hand-checked texts, and the bootstrap interval."""

import numpy as np
import pytest

from annotation.diversity import calculations


@pytest.mark.parametrize("n, d", [(50, 8), (8, 50), (200, 32)])
def test_vendi_equals_the_vendi_score_package(n, d):
    from vendi_score import vendi

    X = np.random.default_rng(n).normal(size=(n, d))
    assert abs(calculations.vendi_score(X) - vendi.score_dual(X)) < 1e-6
    assert abs(calculations.vendi_score(X) - vendi.score_X(X)) < 1e-6


def test_vendi_is_one_for_copies_and_n_for_orthogonal_rows():
    assert calculations.vendi_score(np.ones((10, 4))) == pytest.approx(1.0)
    assert calculations.vendi_score(np.eye(6)) == pytest.approx(6.0)


def test_the_bootstrap_interval_lies_around_the_resampled_scores():
    X = np.random.default_rng(0).normal(size=(60, 16))
    low, high = calculations.vendi_interval(X, resamples=100)
    assert 1 <= low < high <= calculations.vendi_score(X) + 1e-9


def test_distinct_n_counts_distinct_word_ngrams():
    texts = ["the cat sat", "the cat ran"]
    assert calculations.distinct_n(texts, 1) == pytest.approx(4 / 6)
    assert calculations.distinct_n(texts, 2) == pytest.approx(3 / 4)


def test_self_bleu_is_100_for_copies_and_low_for_unrelated_texts():
    assert calculations.self_bleu(["a man plays a guitar on the street"] * 3) == pytest.approx(100.0)
    assert calculations.self_bleu(["a man plays a guitar", "penguins breed in winter", "the soup was cold"]) < 10


def test_minhash_finds_the_rewrite_and_not_the_other_text():
    texts = [
        "the food was great and the staff were friendly and quick",
        "the food was great and the staff were friendly and quick!",
        "nobody is playing music outside the museum today",
    ]
    pairs = calculations.lexical_pairs(texts, threshold=0.8)
    assert [(i, j) for i, j, _ in pairs] == [(0, 1)]
    assert pairs[0][2] == pytest.approx(1.0)


def test_clusters_group_close_rows_and_name_their_terms():
    rng = np.random.default_rng(1)
    centres = np.eye(8)[:2]
    X = np.concatenate([centres[0] + 0.01 * rng.normal(size=(10, 8)), centres[1] + 0.01 * rng.normal(size=(10, 8))])
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    texts = ["penguins breed in winter"] * 10 + ["the soup was cold"] * 10
    found, labels = calculations.clusters(X, texts, min_cluster_size=5)
    assert sorted(len(c.members) for c in found) == [10, 10]
    assert {tuple(sorted(c.terms)) for c in found} == {("breed", "penguins", "winter"), ("cold", "soup")}


def test_vendi_at_a_size_brackets_its_mean_and_needs_that_many_rows():
    X = np.random.default_rng(2).normal(size=(80, 16))
    mean, low, high = calculations.vendi_at(X, size=40, draws=20)
    assert low <= mean <= high
    assert calculations.vendi_at(X, size=81) is None
