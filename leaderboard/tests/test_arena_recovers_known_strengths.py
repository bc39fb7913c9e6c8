"""``leaderboard.arena`` recovers the order of simulated models from their battles with ties
that follow Davidson's model, its bootstrap intervals cover the truth, and its Davidson fit
recovers the tie parameter."""

import numpy as np
from scipy.stats import spearmanr

from leaderboard import arena


def _battles(theta, votes, nu, rng):
    m = len(theta)
    a = rng.integers(0, m, votes)
    b = (a + rng.integers(1, m, votes)) % m
    pa, pb = np.exp(theta[a]), np.exp(theta[b])
    d = pa + pb + nu * np.sqrt(pa * pb)
    u = rng.random(votes)
    return a, b, np.where(u < pa / d, arena.A_WINS, np.where(u < (pa + pb) / d, arena.B_WINS, arena.TIE))


def test_it_recovers_the_order_and_the_tie_parameter():
    rng = np.random.default_rng(7)
    theta = np.linspace(-1.5, 1.5, 12)
    a, b, outcome = _battles(theta, 60_000, 0.4, rng)
    result = arena.rank_arena(a, b, outcome, models=[f"m{k}" for k in range(12)], resamples=40)
    fitted = {row.model: row.rating for row in result.rows}
    assert spearmanr([fitted[f"m{k}"] for k in range(12)], theta).statistic > 0.99
    assert result.nu == 0.0 and abs(result.tie_share - outcome.tolist().count(arena.TIE) / 60_000) < 1e-12
    assert [row.model for row in result.rows[:2]] == ["m11", "m10"]
    covered = [row.rating_low <= arena.to_elo(theta - theta.mean())[k] <= row.rating_high
               for k in range(12) for row in result.rows if row.model == f"m{k}"]
    assert sum(covered) >= 9  # nominal 95%: about 11 of 12
    davidson = arena.rank_arena(a, b, outcome, models=[f"m{k}" for k in range(12)], resamples=0, tie_model="davidson")
    assert abs(davidson.nu - 0.4) < 0.05


def test_the_half_win_rule_shrinks_ratings_that_davidson_keeps():
    """With ties that follow Davidson's model, counting a tie as half a win (LMArena's rule)
    pulls the spread of ratings toward the mean; Davidson's fit keeps the true spread."""
    rng = np.random.default_rng(3)
    theta = np.linspace(-1, 1, 6)
    pairs = arena.count_pairs(*_battles(theta, 40_000, 1.0, rng), n_models=6)
    davidson, _ = arena.fit_davidson(pairs)
    half_win, nu = arena.fit_davidson(pairs, ties=False)
    assert nu == 0.0
    assert np.ptp(half_win) < 0.8 * np.ptp(theta) < np.ptp(davidson)
