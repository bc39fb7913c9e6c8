"""Battles are counted per pair and per model exactly, win rates follow, and malformed battles
are refused with a message that says what is wrong."""

import numpy as np
import pytest

from leaderboard import arena
from leaderboard.arena import A_WINS, B_WINS, TIE


def test_counts_win_rates_and_rows_follow_the_battles():
    # x beats y twice, y beats x once, x and y tie once; y beats z once; "w" never plays.
    a = [0, 1, 0, 1, 2]
    b = [1, 0, 1, 0, 1]
    outcome = [A_WINS, B_WINS, B_WINS, TIE, B_WINS]
    pairs = arena.count_pairs(a, b, outcome, n_models=4)
    assert pairs.battles == 5
    rates = arena.win_rate_matrix(pairs)
    assert rates[0, 1] == pytest.approx(2 / 4) and rates[1, 0] == pytest.approx(1 / 4)
    assert rates[1, 2] == 1.0 and rates[2, 1] == 0.0 and np.isnan(rates[0, 2])
    result = arena.rank_arena(a, b, outcome, models=["x", "y", "z", "w"], resamples=0)
    rows = {row.model: row for row in result.rows}
    assert set(rows) == {"x", "y", "z"}
    assert (rows["x"].wins, rows["x"].losses, rows["x"].ties, rows["x"].battles) == (2, 1, 1, 4)
    assert (rows["y"].wins, rows["y"].losses, rows["y"].ties, rows["y"].battles) == (2, 2, 1, 5)
    assert rows["z"].rank == 3 and rows["z"].rating_low == rows["z"].rating


@pytest.mark.parametrize(("a", "b", "outcome", "message"), [
    ([0], [0], [A_WINS], "two different models"),
    ([0], [5], [A_WINS], "must lie in"),
    ([0], [1], [3], "outcome codes"),
    ([0, 1], [1], [A_WINS], "one length"),
])
def test_malformed_battles_are_refused(a, b, outcome, message):
    with pytest.raises(ValueError, match=message):
        arena.count_pairs(a, b, outcome, n_models=2 if message != "must lie in" else 3)
