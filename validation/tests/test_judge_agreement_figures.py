"""The agreement figures of a rater against a reference: κ equals scikit-learn's, the per-label κ is that
label against the others, the confusion matrix counts reference × rater, intervals hold the estimate, and
a person is measured against the other people only."""

import pytest
from sklearn.metrics import cohen_kappa_score

from validation.judge_agreement import expected_kappa, leave_one_out_reference, rater_agreement

LABELS = ["correct", "incorrect", "flagged"]


def test_kappa_and_accuracy_match_scikit_learn_with_an_interval_around_them():
    rater = ["correct"] * 30 + ["incorrect"] * 15 + ["correct"] * 5 + ["flagged"] * 4
    ref = ["correct"] * 30 + ["incorrect"] * 15 + ["incorrect"] * 5 + ["flagged"] * 4
    figures = rater_agreement(list(zip(rater, ref)), LABELS)

    assert figures["n"] == 54
    assert figures["kappa"]["value"] == pytest.approx(cohen_kappa_score(ref, rater))
    assert figures["accuracy"]["value"] == pytest.approx(49 / 54)
    for name in ("kappa", "accuracy"):
        assert figures[name]["low"] <= figures[name]["value"] <= figures[name]["high"]
    binary_incorrect = cohen_kappa_score([r == "incorrect" for r in ref], [r == "incorrect" for r in rater])
    assert figures["per_label"]["incorrect"]["kappa"]["value"] == pytest.approx(binary_incorrect)
    assert figures["confusion"]["matrix"][1] == [5, 15, 0]  # reference incorrect: 5 called correct, 15 incorrect


def test_no_pairs_gives_no_figures_and_one_label_gives_no_kappa():
    assert rater_agreement([], LABELS)["kappa"]["value"] is None
    same = rater_agreement([("correct", "correct")] * 8, LABELS)
    assert same["accuracy"]["value"] == 1.0 and same["kappa"]["value"] is None


def test_a_person_is_measured_against_the_others_only():
    votes = [(1, "correct"), (2, "incorrect"), (3, "incorrect")]
    assert leave_one_out_reference(votes, 1) == "incorrect"
    assert leave_one_out_reference(votes, 2) is None  # one correct, one incorrect left: a tie
    assert leave_one_out_reference([(1, "correct")], 1) is None


def test_the_expected_kappa_of_a_perfect_and_a_random_rater():
    assert expected_kappa([0.6, 0.4], [[1, 0], [0, 1]]) == pytest.approx(1.0)
    assert expected_kappa([0.6, 0.4], [[0.5, 0.5], [0.5, 0.5]]) == pytest.approx(0.0)
