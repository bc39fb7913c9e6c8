"""Places on a ranking with ties shared: identical scores share their place.

Decides: the standard competition ranking ("1224": a tied group takes the best place of the group,
the next model skips the places it fills) and the last place of each group (the modified
competition ranking, "1334"), with scores within ``TIE_TOLERANCE`` counted as one group.
"""

from __future__ import annotations

import numpy as np

TIE_TOLERANCE = 1e-9


def competition_ranks(scores: np.ndarray, tolerance: float = TIE_TOLERANCE) -> tuple[np.ndarray, np.ndarray]:
    """Rank each row of ``scores`` (B, M), higher is better, with ties sharing their place.

    Returns ``(best, worst)``, both (B, M) ints in model order. ``best`` is the standard
    competition ranking ("1224": identical scores share the best place of their group, the next
    model skips the places they fill); ``worst`` is the last place of the group (the modified
    competition ranking, "1334"). A model alone in its group has ``best == worst``. Scores
    within ``tolerance`` of their neighbour in sorted order are one group (floating-point noise
    of the same arithmetic on identical inputs is far below it).
    """
    n_rep, n_models = scores.shape
    if n_models == 0:
        empty = np.zeros((n_rep, 0), dtype=int)
        return empty, empty
    order = np.argsort(-scores, axis=1, kind="stable")
    ordered = np.take_along_axis(scores, order, axis=1)
    starts = np.ones((n_rep, n_models), dtype=bool)
    starts[:, 1:] = (ordered[:, :-1] - ordered[:, 1:]) > tolerance
    positions = np.broadcast_to(np.arange(n_models), (n_rep, n_models))
    group_start = np.maximum.accumulate(np.where(starts, positions, 0), axis=1)
    ends = np.ones((n_rep, n_models), dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    group_end = np.minimum.accumulate(np.where(ends, positions, n_models)[:, ::-1], axis=1)[:, ::-1]
    best = np.empty((n_rep, n_models), dtype=int)
    worst = np.empty((n_rep, n_models), dtype=int)
    np.put_along_axis(best, order, group_start + 1, axis=1)
    np.put_along_axis(worst, order, group_end + 1, axis=1)
    return best, worst
