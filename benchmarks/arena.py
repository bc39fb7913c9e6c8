"""Arena leaderboard: fit 100 models from 1,000,000 simulated votes of known strengths.

    .venv/bin/python benchmarks/arena.py [--models 100] [--votes 1000000] [--resamples 200] [--seed 0]

For each scenario it draws battles between uniformly chosen pairs from known log-strengths
(normal, standard deviation 1), ranks them with ``leaderboard.arena`` under each tie model (the platform's
``uninformative``: Bradley-Terry on the decisive battles; bootstrap 95% intervals) and prints, side by side:

- the seconds to fit (aggregation, point fit and every bootstrap replicate; goal < 10 s),
- Spearman's rho between fitted and true strengths (goal >= 0.99),
- the share of models whose 95% interval covers its true (centred) strength (nominal 0.95).

Scenarios: no ties (plain Bradley-Terry votes); ties that follow Davidson's model (nu = 0.3);
and 10% ties that carry no information about strength. With ties, the platform's fit is shown
beside Davidson's and the LMArena rule (a tie is half a win for each side). The coverage of 20
models over many boards is ``benchmarks/arena_coverage.py``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dynabench.settings")

import django  # noqa: E402

django.setup()

from leaderboard import arena  # noqa: E402


def simulate(theta, votes, *, rng, nu=0.0, random_ties=0.0):
    """Battles (a, b, outcome) between uniform random pairs with Davidson probabilities."""
    m = len(theta)
    a = rng.integers(0, m, votes)
    b = (a + rng.integers(1, m, votes)) % m
    pa, pb = np.exp(theta[a]), np.exp(theta[b])
    tie = nu * np.sqrt(pa * pb)
    d = pa + pb + tie
    u = rng.random(votes)
    outcome = np.where(u < pa / d, arena.A_WINS, np.where(u < (pa + pb) / d, arena.B_WINS, arena.TIE))
    if random_ties:
        outcome = np.where(rng.random(votes) < random_ties, arena.TIE, outcome)
    return a, b, outcome


def measure(theta, battles, *, resamples, tie_model=arena.UNINFORMATIVE):
    """Fit with intervals; return (seconds, spearman, coverage, nu)."""
    a, b, outcome = battles
    m = len(theta)
    started = time.perf_counter()
    pairs = arena.count_pairs(a, b, outcome, n_models=m)
    point, nu = arena.fit_strengths(pairs, tie_model=tie_model)
    reps = arena.bootstrap_strengths(pairs, point, nu, resamples=resamples, tie_model=tie_model)
    low, high = np.percentile(reps, [2.5, 97.5], axis=0)
    seconds = time.perf_counter() - started
    truth = theta - theta.mean()
    rho = spearmanr(point, truth).statistic
    coverage = float(np.mean((low <= truth) & (truth <= high)))
    return seconds, rho, coverage, nu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--votes", type=int, default=1_000_000)
    parser.add_argument("--resamples", type=int, default=arena.DEFAULT_RESAMPLES)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    theta = rng.normal(0, 1, args.models)
    print(f"{args.models} models, {args.votes:,} votes, {args.resamples} bootstrap replicates")
    print(f"{'scenario':<42} {'rule':<14} {'seconds':>8} {'spearman':>9} {'coverage':>9} {'nu':>6}")
    scenarios = [
        ("no ties", dict(), ["uninformative"]),
        ("ties follow Davidson (nu=0.3)", dict(nu=0.3), ["uninformative", "davidson", "half_win"]),
        ("10% ties without information", dict(random_ties=0.10), ["uninformative", "davidson", "half_win"]),
    ]
    for name, kwargs, rules in scenarios:
        battles = simulate(theta, args.votes, rng=rng, **kwargs)
        for rule in rules:
            seconds, rho, coverage, nu = measure(theta, battles, resamples=args.resamples, tie_model=rule)
            print(f"{name:<42} {rule:<14} {seconds:8.2f} {rho:9.4f} {coverage:9.2f} {nu:6.3f}")


if __name__ == "__main__":
    main()
