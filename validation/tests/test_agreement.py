"""Fleiss' κ and Krippendorff's α per round, with too little data said plainly."""

import pytest

from validation.calculations import agreement_from_ratings
from validation.round_statistics import round_agreement
from validation.services import record_validation
from validation.tests.conftest import make_example, make_user, leased


def test_it_matches_a_textbook_case():
    # Fleiss (1971) table has 10 items x 14 raters; here a small hand-checked case:
    ratings = [["a", "a", "a"], ["a", "a", "b"], ["b", "b", "b"], ["a", "b", "b"]]
    agreement = agreement_from_ratings(ratings)
    # P_i = (1, 1/3, 1, 1/3) -> P_bar = 2/3; p_a = p_b = 1/2 -> P_e = 1/2; kappa = (2/3 - 1/2) / (1/2) = 1/3
    assert agreement.fleiss_kappa == pytest.approx(1 / 3)
    assert agreement.krippendorff_alpha == pytest.approx(0.3889, abs=1e-4)
    assert (agreement.n_items, agreement.n_ratings, agreement.raters_per_item) == (4, 12, 3)


def test_it_says_why_when_there_is_too_little_data():
    assert agreement_from_ratings([["a", "a"]]).reason.startswith("needs at least 2 examples")
    unanimous = agreement_from_ratings([["a", "a"], ["a", "a", "a"]])
    assert unanimous.fleiss_kappa is None and unanimous.krippendorff_alpha is None
    assert "agreement is undefined" in unanimous.reason


def test_fleiss_uses_the_most_common_number_of_raters_and_alpha_uses_all():
    agreement = agreement_from_ratings([["a", "a", "b"], ["b", "b", "b"], ["a", "b"], ["a", "a", "a", "b"]])
    assert agreement.raters_per_item == 3 and agreement.fleiss_items == 3
    assert agreement.n_ratings == 12 and agreement.krippendorff_alpha is not None


def test_round_agreement_counts_user_validations_of_the_round(sentiment_task, annotator, owner):
    people = [make_user(f"rater{i}", "validator") for i in range(3)]
    verdicts = [("correct", "correct", "correct"), ("correct", "incorrect", "correct"), ("incorrect", "incorrect", "flagged")]
    for labels in verdicts:
        example = make_example(sentiment_task, annotator)
        for person, label in zip(people, labels):
            record_validation(example=leased(example, person), validator=person, label=label,
                              metadata={"flag_reason": "spam"} if label == "flagged" else None)
    example = make_example(sentiment_task, annotator)
    record_validation(example=example, validator=owner, label="correct", mode="owner")

    agreement = round_agreement(sentiment_task.current_round())

    expected = agreement_from_ratings([list(v) for v in verdicts], categories=("correct", "incorrect", "flagged"))
    assert agreement == expected
    assert agreement.n_items == 3
