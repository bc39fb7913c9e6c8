"""The one consensus rule, as a pure function."""

import pytest

from validation.calculations import derive_state


def test_it_stays_pending_below_the_threshold():
    assert derive_state([("correct", "user"), ("correct", "user")], 3) == "pending"


def test_the_first_label_to_reach_the_threshold_settles_it():
    votes = [("incorrect", "user"), ("correct", "user"), ("incorrect", "user"), ("correct", "user"), ("correct", "user")]
    assert derive_state(votes, 3) == "verified_correct"
    assert derive_state(votes + [("incorrect", "user")], 3) == "verified_correct"


def test_flagged_and_incorrect_count_separately():
    votes = [("flagged", "user"), ("incorrect", "user"), ("flagged", "user"), ("incorrect", "user")]
    assert derive_state(votes, 3) == "pending"
    assert derive_state(votes + [("flagged", "user")], 3) == "flagged"


def test_the_latest_owner_decision_wins():
    votes = [("correct", "user")] * 3 + [("incorrect", "owner"), ("flagged", "owner")]
    assert derive_state(votes, 3) == "flagged"


def test_it_rejects_unknown_labels_and_thresholds():
    with pytest.raises(ValueError):
        derive_state([("maybe", "user")], 3)
    with pytest.raises(ValueError):
        derive_state([], 0)
