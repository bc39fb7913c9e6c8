"""Arena intervals: how many true strengths the 95% intervals hold, Davidson's tie model beside
the platform's decisive-battle fit.

    .venv/bin/python benchmarks/arena_coverage.py [--models 20] [--votes 200000 20000] [--ties 0.10] [--boards 20]

For each number of votes, each of ``--boards`` simulated boards draws ``--models`` log-strengths
(normal, standard deviation 1) and battles between uniformly chosen pairs, plain Bradley-Terry,
of which a share ``--ties`` is then turned into ties that carry no information about strength
(a judge who calls some pairs a tie, or "both bad", whatever the answers). A second scenario
draws ties from Davidson's model instead (``nu = 0.3``), where Davidson's fit is the right one.
Each board is ranked by ``leaderboard.arena.rank_arena`` with ``tie_model="davidson"`` (the
previous platform fit) and with the default ``"uninformative"`` (Bradley-Terry on the decisive
battles, ties resampled with the rest), ``--resamples`` bootstrap replicates each, and the
script prints, per scenario and fit: the true (centred) strengths the 95% intervals hold, as a
mean over boards with the lowest board, out of ``--models``; the mean interval half-width on
the Elo scale; and the slope of fitted on true strengths (1: no shrinkage).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from leaderboard import arena  # noqa: E402  (pure NumPy/SciPy: no Django set-up needed)


def simulate(theta, votes, *, rng, random_ties=0.0, nu=0.0):
    """Battles ``(a, b, outcome)`` between uniform random pairs: Davidson's probabilities with
    ``nu`` (0: plain Bradley-Terry), then a share ``random_ties`` replaced by ties."""
    m = len(theta)
    a = rng.integers(0, m, votes)
    b = (a + rng.integers(1, m, votes)) % m
    pa, pb = np.exp(theta[a]), np.exp(theta[b])
    d = pa + pb + nu * np.sqrt(pa * pb)
    u = rng.random(votes)
    outcome = np.where(u < pa / d, arena.A_WINS, np.where(u < (pa + pb) / d, arena.B_WINS, arena.TIE))
    if random_ties:
        outcome = np.where(rng.random(votes) < random_ties, arena.TIE, outcome)
    return a, b, outcome


def coverage(theta, battles, *, tie_model, resamples, seed):
    """``(covered, mean half-width in Elo points, slope)`` of one fit on one board."""
    models = list(range(len(theta)))
    result = arena.rank_arena(*battles, models=models, resamples=resamples, seed=seed, tie_model=tie_model)
    truth = arena.to_elo(theta - theta.mean())
    rows = sorted(result.rows, key=lambda row: row.model)
    low = np.array([row.rating_low for row in rows])
    high = np.array([row.rating_high for row in rows])
    fitted = np.array([row.rating for row in rows])
    covered = int(np.sum((low <= truth) & (truth <= high)))
    return covered, float(np.mean(high - low) / 2), float(np.polyfit(truth, fitted, 1)[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--votes", type=int, nargs="+", default=[200_000, 20_000])
    parser.add_argument("--ties", type=float, default=0.10)
    parser.add_argument("--boards", type=int, default=20)
    parser.add_argument("--resamples", type=int, default=arena.DEFAULT_RESAMPLES)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    fits = [("davidson (before)", arena.DAVIDSON), ("decisive (now)", arena.UNINFORMATIVE)]
    scenarios = [(f"{args.ties:.0%} ties without information", dict(random_ties=args.ties)),
                 ("ties follow Davidson (nu=0.3)", dict(nu=0.3))]
    print(f"{args.models} models, {args.boards} boards per row, {args.resamples} bootstrap replicates; "
          f"covered: true strengths inside the 95% interval, mean (lowest) of {args.models}")
    print(f"{'votes':>9} {'scenario':<34} " + " ".join(f"{name + ' covered':>27} {'±elo':>6} {'slope':>6}" for name, _ in fits))
    for votes in args.votes:
        for name, kwargs in scenarios:
            per_fit = {model: [] for _, model in fits}
            for board in range(args.boards):
                rng = np.random.default_rng([args.seed, votes, board])
                theta = rng.normal(0, 1, args.models)
                battles = simulate(theta, votes, rng=rng, **kwargs)
                for _, model in fits:
                    per_fit[model].append(coverage(theta, battles, tie_model=model, resamples=args.resamples, seed=board))
            cells = []
            for _, model in fits:
                covered, width, slope = (np.array(x) for x in zip(*per_fit[model]))
                cells.append(f"{covered.mean():>20.2f} ({covered.min():>3}) {width.mean():6.1f} {slope.mean():6.3f}")
            print(f"{votes:>9,} {name:<34} " + " ".join(cells))


if __name__ == "__main__":
    main()
