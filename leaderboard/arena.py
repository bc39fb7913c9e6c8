"""The arena leaderboard's arithmetic: strengths of generative models from validated pairwise
judgments, with ties, bootstrap intervals and rank ranges. Pure functions over NumPy arrays, no
ORM; the arena page and its API read the votes and call :func:`rank_arena`.

**Model.** Bradley-Terry (Bradley and Terry, Biometrika 39, 1952) on the *decisive* battles:
with strengths ``π_i = exp(θ_i)``, ``P(i beats j | not a tie) = π_i / (π_i + π_j)``. Ties are
counted and shown, and they are resampled with every battle, but they do not move a rating. This
is the maximum-likelihood fit of the model in which a tie happens at some rate ``τ`` whatever the
two strengths are (``P(tie) = τ``, ``P(i beats j) = (1 − τ)·π_i / (π_i + π_j)``: the likelihood
factorises into a term in ``τ`` and Bradley-Terry on the decisive battles), and it stays
consistent when ties do say the two answers are close: under Davidson's extension of
Bradley-Terry to ties (R. R. Davidson, "On extending the Bradley-Terry model to accommodate ties
in paired comparison experiments", JASA 65(329), 1970, eq. 2.1)::

    P(i beats j) = π_i / D,   P(j beats i) = π_j / D,   P(tie) = ν·sqrt(π_i·π_j) / D,
    D = π_i + π_j + ν·sqrt(π_i·π_j)

the decisive battles follow the same ``π_i / (π_i + π_j)``. The converse fails: fitting
Davidson's likelihood to ties that carry no information (a judge who calls 10% of pairs a tie,
or "both bad", whatever the answers' strengths) reads each tie between distant models as a sign
that they are close, and pulls every rating toward the mean. That bias does not shrink with more
votes while the intervals do, so their coverage falls as votes grow. ``benchmarks/arena_coverage.py``
measures it (20 models, 10% such ties, means over 20 simulated boards): Davidson's 95%
intervals hold 12.5 of 20 true strengths at 200,000 votes and 17.5 at 20,000; the decisive
fit's hold 18.3 and 18.9. When ties do follow Davidson's model, the decisive fit's intervals are
about 2% wider and cover as well (18.5 and 18.9 of 20; Davidson's fit 18.4 and 18.7). ``tie_model="davidson"`` fits Davidson's likelihood
(maximised by SciPy's L-BFGS-B with its exact gradient; ``fit_davidson``) for comparison.

**Why not the LMArena rule.** LMArena (Chiang et al., "Chatbot Arena", ICML 2024, section 5)
fits Bradley-Terry by logistic regression and counts a tie as half a win for each side
(``tie_model="half_win"``). That pulls every rating toward the mean further still.

**Platform rule for "both bad".** A "both bad" verdict is a tie: neither answer is preferred.
(Each answer's failure is counted separately, in the generative vMER, not here.)

**Identifiability and separation.** Strengths are defined up to a constant: they are reported
centred (mean 0). A model that won or lost every battle has no finite maximum-likelihood
strength; a weak Gaussian prior (``ridge``, a precision of 0.01 by default, i.e. a prior
standard deviation of 10 on the log-strength scale, flat next to any informative data) keeps
the fit finite. Ratings are shown on the Elo scale LMArena uses: ``400·θ/ln 10 + 1000``.

**Intervals.** Bootstrap over battles (Efron and Tibshirani, "An Introduction to the
Bootstrap", 1993, ch. 13, percentile intervals): each replicate redraws as many battles as
there were from the observed pair-outcome counts (a multinomial draw, identical in law to
resampling the battle list, ties included), refits from the point estimate with the same tie
model (so the decisive battles' number and, for Davidson's fit, ``ν`` vary as they would), and the central 95% of the
replicates' strengths is each model's interval; rank ranges are the central 95% of the
replicates' competition ranks (``leaderboard.ranks.competition_ranks``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from leaderboard.ranks import competition_ranks

ELO_SCALE = 400 / math.log(10)
ELO_BASE = 1000.0
DEFAULT_RIDGE = 0.01
DEFAULT_RESAMPLES = 100

# Outcome codes of one battle between model a and model b.
A_WINS, B_WINS, TIE = 0, 1, 2

# How a fit treats ties: "uninformative" (the platform's: Bradley-Terry on the decisive battles),
# "davidson" (Davidson's tie model), "half_win" (LMArena's rule). See the module docstring.
UNINFORMATIVE, DAVIDSON, HALF_WIN = "uninformative", "davidson", "half_win"
TIE_MODELS = (UNINFORMATIVE, DAVIDSON, HALF_WIN)


@dataclass(frozen=True)
class PairCounts:
    """Battles aggregated per unordered pair ``i < j``: arrays of shape (P,).

    ``wins_i``: battles ``i`` won, ``wins_j``: battles ``j`` won, ``ties``: ties and "both bad".
    """

    n_models: int
    i: np.ndarray
    j: np.ndarray
    wins_i: np.ndarray
    wins_j: np.ndarray
    ties: np.ndarray

    @property
    def battles(self) -> int:
        return int(self.wins_i.sum() + self.wins_j.sum() + self.ties.sum())


def count_pairs(model_a: np.ndarray, model_b: np.ndarray, outcome: np.ndarray, *, n_models: int) -> PairCounts:
    """Aggregate battles into :class:`PairCounts`.

    ``model_a``, ``model_b``: (N,) int model indices in ``[0, n_models)``, never equal;
    ``outcome``: (N,) codes ``A_WINS``, ``B_WINS`` or ``TIE``. Raises ``ValueError`` on a
    self-battle, an index out of range or an unknown outcome code.
    """
    a, b, o = (np.asarray(x, dtype=np.int64) for x in (model_a, model_b, outcome))
    if not (a.shape == b.shape == o.shape and a.ndim == 1):
        raise ValueError("model_a, model_b and outcome must be 1-D arrays of one length")
    if a.size and (a.min() < 0 or b.min() < 0 or a.max() >= n_models or b.max() >= n_models):
        raise ValueError(f"model indices must lie in [0, {n_models})")
    if np.any(a == b):
        raise ValueError("a battle needs two different models")
    if o.size and (o.min() < 0 or o.max() > TIE):
        raise ValueError("outcome codes are 0 (a wins), 1 (b wins) or 2 (tie)")
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    lo_won = np.where(a < b, o == A_WINS, o == B_WINS)
    hi_won = np.where(a < b, o == B_WINS, o == A_WINS)
    cell = lo * n_models + hi
    size = n_models * n_models
    w_lo = np.bincount(cell, weights=lo_won, minlength=size)
    w_hi = np.bincount(cell, weights=hi_won, minlength=size)
    t = np.bincount(cell, weights=(o == TIE), minlength=size)
    seen = np.flatnonzero(w_lo + w_hi + t)
    return PairCounts(n_models, seen // n_models, seen % n_models, w_lo[seen], w_hi[seen], t[seen])


def _negative_log_likelihood(params: np.ndarray, pairs: PairCounts, ridge: float, with_ties: bool):
    """Davidson's negative log-likelihood (plus the ridge prior) and its gradient in
    ``params = (θ_0..θ_{M-1}, η)``."""
    m = pairs.n_models
    theta, eta = params[:m], (params[m] if with_ties else -np.inf)
    ti, tj = theta[pairs.i], theta[pairs.j]
    mid = 0.5 * (ti + tj)
    # log D with the largest term factored out, for stability.
    terms = np.stack([ti, tj, eta + mid]) if with_ties else np.stack([ti, tj])
    top = terms.max(axis=0)
    expd = np.exp(terms - top)
    total = expd.sum(axis=0)
    log_d = top + np.log(total)
    n = pairs.wins_i + pairs.wins_j + pairs.ties
    ll = pairs.wins_i @ ti + pairs.wins_j @ tj - n @ log_d
    if with_ties:
        ll += pairs.ties @ (eta + mid)
    value = -ll + 0.5 * ridge * float(theta @ theta)
    p_i, p_j = expd[0] / total, expd[1] / total
    p_t = expd[2] / total if with_ties else 0.0
    # d logD / dθ_i = p_i + p_t/2 ; d logD / dθ_j = p_j + p_t/2 ; d logD / dη = p_t
    half_ties = 0.5 * pairs.ties if with_ties else 0.0
    g_i = pairs.wins_i + half_ties - n * (p_i + 0.5 * p_t)
    g_j = pairs.wins_j + half_ties - n * (p_j + 0.5 * p_t)
    grad_theta = -(np.bincount(pairs.i, weights=g_i, minlength=m) + np.bincount(pairs.j, weights=g_j, minlength=m))
    grad_theta += ridge * theta
    if not with_ties:
        return value, grad_theta
    grad_eta = -float(pairs.ties.sum() - n @ p_t)
    return value, np.append(grad_theta, grad_eta)


def fit_davidson(pairs: PairCounts, *, ridge: float = DEFAULT_RIDGE, ties: bool = True,
                 start: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Maximum a-posteriori Davidson strengths from ``pairs``.

    Returns ``(theta, nu)``: ``theta`` (M,) log-strengths centred to mean 0, ``nu`` the tie
    parameter (0.0 with ``ties=False``, plain Bradley-Terry, where a tie counts as half a win
    for each side as LMArena counts it). ``start``: initial ``(θ, η)`` (M+1,) or ``θ`` (M,).
    Raises ``RuntimeError`` when the optimiser fails.
    """
    m = pairs.n_models
    if ties:
        fit_pairs = pairs
    else:  # the half-win rule: a tie is half a win for each side
        fit_pairs = PairCounts(m, pairs.i, pairs.j, pairs.wins_i + 0.5 * pairs.ties, pairs.wins_j + 0.5 * pairs.ties,
                               np.zeros_like(pairs.ties))
    size = m + 1 if ties else m
    x0 = np.zeros(size)
    if start is not None:
        x0[: min(size, len(start))] = start[:size]
    if ties and (start is None or len(start) <= m):
        share = pairs.ties.sum() / max(pairs.battles, 1)
        x0[m] = math.log(max(2 * share / max(1 - share, 1e-9), 1e-6))  # ν from the tie share at equal strengths
    # Imported here: scipy.optimize is about 0.6 s of import, which every Django process (web,
    # worker, each manage.py command) paid at start-up through the admin's import of this module.
    from scipy.optimize import minimize

    result = minimize(_negative_log_likelihood, x0, args=(fit_pairs, ridge, ties), jac=True, method="L-BFGS-B",
                      options={"maxiter": 1000, "gtol": 1e-8})
    if not result.success and "ABNORMAL" not in str(result.message):
        raise RuntimeError(f"the Davidson fit did not converge: {result.message}")
    theta = result.x[:m] - result.x[:m].mean()
    nu = float(math.exp(result.x[m])) if ties else 0.0
    return theta, nu


def decisive(pairs: PairCounts) -> PairCounts:
    """``pairs`` with its ties left out: the battles that one side won."""
    return PairCounts(pairs.n_models, pairs.i, pairs.j, pairs.wins_i, pairs.wins_j, np.zeros_like(pairs.ties))


def fit_strengths(pairs: PairCounts, *, tie_model: str = UNINFORMATIVE, ridge: float = DEFAULT_RIDGE,
                  start: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Strengths from ``pairs`` under ``tie_model`` (one of ``TIE_MODELS``, module docstring):
    ``(theta, nu)`` as :func:`fit_davidson` returns them; ``nu`` is 0.0 except for
    ``"davidson"``. Raises ``ValueError`` on an unknown tie model."""
    if tie_model == UNINFORMATIVE:
        return fit_davidson(decisive(pairs), ridge=ridge, ties=False, start=start)
    if tie_model == DAVIDSON:
        return fit_davidson(pairs, ridge=ridge, ties=True, start=start)
    if tie_model == HALF_WIN:
        return fit_davidson(pairs, ridge=ridge, ties=False, start=start)
    raise ValueError(f"tie_model must be one of {', '.join(TIE_MODELS)}, not {tie_model!r}")


@dataclass(frozen=True)
class ArenaRow:
    """One model on the arena leaderboard: Elo-scale rating with its 95% interval, the range of
    ranks it takes over the bootstrap, and its battles."""

    model: object
    rating: float
    rating_low: float
    rating_high: float
    rank: int
    rank_best: int
    rank_worst: int
    battles: int
    wins: int
    losses: int
    ties: int


@dataclass(frozen=True)
class ArenaResult:
    """The arena leaderboard: rows best first, the tie parameter ``nu``, the win-rate matrix
    (M, M) in the order of ``models`` (``win_rate[i, j]``: share of i's battles against j that
    i won; NaN where they never met), the number of battles, the share of them that were ties
    and the tie model of the fit (``nu`` is 0.0 unless it is ``"davidson"``)."""

    rows: list[ArenaRow]
    nu: float
    models: list
    win_rate: np.ndarray
    battles: int
    resamples: int
    tie_share: float = 0.0
    tie_model: str = UNINFORMATIVE


def to_elo(theta: np.ndarray) -> np.ndarray:
    """Log-strengths (natural log) on the Elo scale LMArena shows: ``400·θ/ln 10 + 1000``."""
    return ELO_SCALE * np.asarray(theta) + ELO_BASE


def bootstrap_strengths(pairs: PairCounts, theta: np.ndarray, nu: float, *, resamples: int, seed: int = 0,
                        ridge: float = DEFAULT_RIDGE, tie_model: str = UNINFORMATIVE) -> np.ndarray:
    """``(resamples, M)`` strengths refitted under ``tie_model`` on battles redrawn with
    replacement (a multinomial draw of the observed number of battles, ties included, over the
    observed pair-outcome cells), each fit started from the point estimate."""
    rng = np.random.default_rng(seed)
    cells = np.concatenate([pairs.wins_i, pairs.wins_j, pairs.ties])
    total = int(cells.sum())
    if total == 0 or resamples <= 0:
        return np.empty((0, pairs.n_models))
    probabilities = cells / total
    p = len(pairs.i)
    ties = tie_model == DAVIDSON
    start = np.append(theta, math.log(nu) if ties and nu > 0 else -5.0)
    out = np.empty((resamples, pairs.n_models))
    # A draw seen before has the same fit (few battles: few distinct draws); a draw equal to the
    # observed battles has the point estimate itself, not a second optimiser run a hair away from it.
    fitted: dict[bytes, np.ndarray] = {cells.astype(float).tobytes(): np.asarray(theta, dtype=float)}
    for r in range(resamples):
        draw = rng.multinomial(total, probabilities).astype(float)
        key = draw.tobytes()
        if key not in fitted:
            replicate = PairCounts(pairs.n_models, pairs.i, pairs.j, draw[:p], draw[p:2 * p], draw[2 * p:])
            fitted[key], _ = fit_strengths(replicate, tie_model=tie_model, ridge=ridge, start=start)
        out[r] = fitted[key]
    return out


def win_rate_matrix(pairs: PairCounts) -> np.ndarray:
    """(M, M) share of battles each model won against each other (ties count as not won)."""
    m = pairs.n_models
    won = np.full((m, m), np.nan)
    n = pairs.wins_i + pairs.wins_j + pairs.ties
    won[pairs.i, pairs.j] = pairs.wins_i / n
    won[pairs.j, pairs.i] = pairs.wins_j / n
    return won


def rank_arena(model_a, model_b, outcome, *, models: list, resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
               level: float = 0.95, ridge: float = DEFAULT_RIDGE, tie_model: str = UNINFORMATIVE) -> ArenaResult:
    """Rank ``models`` from battles (indices into ``models`` and outcome codes, as in
    :func:`count_pairs`) under ``tie_model`` (default: Bradley-Terry on the decisive battles,
    module docstring); intervals and rank ranges at ``level`` from ``resamples`` bootstrap
    replicates (0: none, the interval is the point). Models without a battle are left out.
    Raises ``ValueError`` on malformed battles or an unknown tie model."""
    if tie_model not in TIE_MODELS:
        raise ValueError(f"tie_model must be one of {', '.join(TIE_MODELS)}, not {tie_model!r}")
    pairs = count_pairs(model_a, model_b, outcome, n_models=len(models))
    theta, nu = fit_strengths(pairs, tie_model=tie_model, ridge=ridge) if pairs.battles else (np.zeros(len(models)), 0.0)
    replicates = bootstrap_strengths(pairs, theta, nu, resamples=resamples, seed=seed, ridge=ridge, tie_model=tie_model)
    m = len(models)
    n = pairs.wins_i + pairs.wins_j + pairs.ties
    battles = np.bincount(pairs.i, weights=n, minlength=m) + np.bincount(pairs.j, weights=n, minlength=m)
    played = np.flatnonzero(battles > 0)  # a model without a battle has no strength to rank
    tail = 100 * (1 - level) / 2
    point_rank = np.zeros(m, dtype=int)
    point_rank[played] = competition_ranks(theta[None, played])[0][0]
    low, high = theta.copy(), theta.copy()
    rank_lo, rank_hi = point_rank.copy(), point_rank.copy()
    if len(replicates) and len(played):
        low[played], high[played] = np.percentile(replicates[:, played], [tail, 100 - tail], axis=0)
        best, worst = competition_ranks(replicates[:, played])
        rank_lo[played] = np.percentile(best, tail, axis=0, method="lower")
        rank_hi[played] = np.percentile(worst, 100 - tail, axis=0, method="higher")
    wins = np.bincount(pairs.i, weights=pairs.wins_i, minlength=m) + np.bincount(pairs.j, weights=pairs.wins_j, minlength=m)
    losses = np.bincount(pairs.i, weights=pairs.wins_j, minlength=m) + np.bincount(pairs.j, weights=pairs.wins_i, minlength=m)
    ties = battles - wins - losses
    elo, elo_low, elo_high = to_elo(theta), to_elo(low), to_elo(high)
    rows = [
        ArenaRow(models[k], float(elo[k]), float(elo_low[k]), float(elo_high[k]), int(point_rank[k]),
                 int(rank_lo[k]), int(rank_hi[k]), int(battles[k]), int(wins[k]), int(losses[k]), int(ties[k]))
        for k in played
    ]
    rows.sort(key=lambda row: (row.rank, -row.rating))
    tie_share = float(pairs.ties.sum()) / pairs.battles if pairs.battles else 0.0
    return ArenaResult(rows, nu, list(models), win_rate_matrix(pairs), pairs.battles, len(replicates), tie_share, tie_model)
