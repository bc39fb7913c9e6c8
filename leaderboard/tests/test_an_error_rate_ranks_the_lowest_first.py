"""A task whose performance metric is an error rate (WER, CER: ``spec.lower_is_better``) ranks the
model with the lowest rate first: performance is oriented as ``100 - x`` before the Dynascore, and
its bootstrap replicates the same way for the rank ranges."""

import numpy as np

from leaderboard.dynascore import ModelScores, dynascore, orientation
from leaderboard.rank_ranges import rank_ranges


def _rows():
    return [ModelScores(m, {"d": {"performance": wer}}) for m, wer in (("worse", 40.0), ("better", 10.0), ("middle", 25.0))]


def test_the_lowest_error_rate_ranks_first():
    result = dynascore(_rows(), metric_weights={"performance": 1}, dataset_weights={"d": 1}, memory_gib=16,
                       orient=orientation(memory_gib=16, error_rate=True))

    assert [r.model for r in result.ranked] == ["better", "middle", "worse"]
    assert result.by_model()["better"].oriented["performance"] == 90.0


def test_higher_is_better_stays_the_default():
    result = dynascore(_rows(), metric_weights={"performance": 1}, dataset_weights={"d": 1}, memory_gib=16)

    assert [r.model for r in result.ranked] == ["worse", "middle", "better"]


def test_the_rank_ranges_orient_the_replicates_too():
    result = dynascore(_rows(), metric_weights={"performance": 1}, dataset_weights={"d": 1}, memory_gib=16,
                       orient=orientation(memory_gib=16, error_rate=True))
    models = [r.model for r in result.ranked]
    wer = {"worse": 40.0, "better": 10.0, "middle": 25.0}
    replicates = np.array([[[wer[m] + jitter] for m in models] for jitter in (-1.0, 0.0, 1.0)])

    ranges = rank_ranges(result, replicates, replicate_models=models)

    assert ranges == {"better": (1, 1), "middle": (2, 2), "worse": (3, 3)}
