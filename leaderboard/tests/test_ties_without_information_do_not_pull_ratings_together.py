"""Ties that say nothing about the two answers (a judge who calls some pairs a tie whatever they
are) leave the arena's ratings where the decisive battles put them, while Davidson's tie model
reads them as closeness and pulls every rating toward the mean; a bootstrap replicate redraws
ties with the rest, so the number of decisive battles varies between replicates."""

import numpy as np
import pytest

from leaderboard import arena


def _battles(theta, votes, tie_share, rng):
    m = len(theta)
    a = rng.integers(0, m, votes)
    b = (a + rng.integers(1, m, votes)) % m
    won = rng.random(votes) < 1 / (1 + np.exp(theta[b] - theta[a]))
    outcome = np.where(won, arena.A_WINS, arena.B_WINS)
    return a, b, np.where(rng.random(votes) < tie_share, arena.TIE, outcome)


def _slope(fitted, theta):
    return np.polyfit(theta - theta.mean(), fitted, 1)[0]


def test_uninformative_ties_leave_the_spread_of_ratings_as_it_is():
    rng = np.random.default_rng(11)
    theta = np.linspace(-2, 2, 6)
    pairs = arena.count_pairs(*_battles(theta, 30_000, 0.3, rng), n_models=6)
    decisive, nu = arena.fit_strengths(pairs)
    davidson, _ = arena.fit_strengths(pairs, tie_model=arena.DAVIDSON)
    assert nu == 0.0
    assert _slope(decisive, theta) == pytest.approx(1.0, abs=0.05)
    assert _slope(davidson, theta) < 0.9


def test_a_replicate_redraws_ties_with_the_decisive_battles():
    # Two models, ten battles: a wins 4, b wins 2, 4 ties. Every replicate's rating follows its
    # own draw of decisive battles, so replicates differ even where a fixed tie count would not.
    a, b = np.zeros(10, dtype=int), np.ones(10, dtype=int)
    outcome = np.array([arena.A_WINS] * 4 + [arena.B_WINS] * 2 + [arena.TIE] * 4)
    pairs = arena.count_pairs(a, b, outcome, n_models=2)
    theta, nu = arena.fit_strengths(pairs)
    assert theta[0] - theta[1] == pytest.approx(np.log(4 / 2), abs=0.02)  # the ties do not enter the point fit
    replicates = arena.bootstrap_strengths(pairs, theta, nu, resamples=60, seed=1)
    assert len({round(float(r[0]), 6) for r in replicates}) > 5


def test_an_unknown_tie_model_is_refused():
    with pytest.raises(ValueError, match="tie_model must be one of"):
        arena.rank_arena([0], [1], [arena.TIE], models=["x", "y"], tie_model="coin")
