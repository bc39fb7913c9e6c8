"""The Davidson likelihood's gradient that the arena fit hands L-BFGS-B equals finite differences."""

import numpy as np
from scipy.optimize import check_grad

from leaderboard import arena


def test_the_gradient_matches_finite_differences_with_and_without_ties():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 5, 400)
    b = (a + rng.integers(1, 5, 400)) % 5
    pairs = arena.count_pairs(a, b, rng.integers(0, 3, 400), n_models=5)
    for with_ties, size in ((True, 6), (False, 5)):
        x = rng.normal(0, 0.5, size)
        error = check_grad(lambda p: arena._negative_log_likelihood(p, pairs, 0.01, with_ties)[0],
                           lambda p: arena._negative_log_likelihood(p, pairs, 0.01, with_ties)[1], x)
        assert error < 1e-4
