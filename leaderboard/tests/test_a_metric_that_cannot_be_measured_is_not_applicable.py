"""A metric that cannot be measured on a dataset (fairness where no item has a gendered word or a
name) is "not applicable" there: averaged over the datasets where it applies, left out when it
applies nowhere, and never a reason to hold a model back as pending."""

import pytest

from leaderboard.dynascore import ModelScores, dynascore
from leaderboard.metric_rules import DEFAULT_METRIC_WEIGHTS, MISSING_EXCLUDE_MODEL, Rule
from leaderboard.tests.test_dynascore import scores


def rows_without_fairness():
    """Three models measured on A and B; nobody has fairness (no item had a fairness variant)."""
    return [
        ModelScores(name, {d: scores(perf + (10 if d == "B" else 0), thr, mem, rob, None) for d in "AB"})
        for name, perf, thr, mem, rob in (("X", 60, 10, 2, 50), ("Y", 40, 30, 4, 70), ("Z", 20, 20, 1, 60))
    ]


def test_it_is_left_out_for_everyone_and_holds_no_model_back_when_it_applies_nowhere():
    result = dynascore(rows_without_fairness(), metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights={"A": 1, "B": 1},
                       memory_gib=16, missing_metric=MISSING_EXCLUDE_MODEL, not_applicable={"A": ["fairness"], "B": ["fairness"]})

    assert result.pending == []
    assert [r.model for r in result.ranked] == ["X", "Y", "Z"]
    assert result.metrics["fairness"].rule == Rule.NOT_APPLICABLE
    assert result.metrics["fairness"].effective_weight == 0
    assert all(r.missing == () for r in result.ranked)


def test_without_the_mark_the_same_scores_are_missing_and_make_models_pending():
    result = dynascore(rows_without_fairness(), metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights={"A": 1, "B": 1},
                       memory_gib=16, missing_metric=MISSING_EXCLUDE_MODEL)
    assert [p.model for p in result.pending] == ["X", "Y", "Z"]


def test_where_it_applies_on_some_datasets_it_is_averaged_over_those():
    rows = [
        ModelScores("X", {"A": scores(60, 10, 2, 50, None), "B": scores(70, 10, 2, 50, 80)}),
        ModelScores("Y", {"A": scores(40, 30, 4, 70, None), "B": scores(50, 30, 4, 70, 60)}),
        ModelScores("Z", {"A": scores(20, 20, 1, 60, None), "B": scores(30, 20, 1, 60, 90)}),
    ]
    result = dynascore(rows, metric_weights=DEFAULT_METRIC_WEIGHTS, dataset_weights={"A": 3, "B": 1}, memory_gib=16,
                       not_applicable={"A": ["fairness"]})

    assert result.by_model()["X"].averages["fairness"] == pytest.approx(80)  # B alone, not 0.25 × 80
    assert result.by_model()["X"].averages["performance"] == pytest.approx(0.75 * 60 + 0.25 * 70)
    assert result.metrics["fairness"].rule == Rule.AMRS
    assert result.metrics["fairness"].not_applicable_on == ("A",)
