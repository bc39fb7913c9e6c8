import pytest

from tasks.metrics.squad import best_over_ground_truths, normalize_answer, squad_exact_match, squad_f1


def test_normalize_answer_drops_articles_punctuation_and_case():
    assert normalize_answer("The  Eiffel Tower!") == "eiffel tower"


@pytest.mark.parametrize(
    ("prediction", "truth", "f1"),
    [
        ("in 1843", "1843", 2 / 3),
        ("Ada Lovelace", "ada lovelace", 1.0),
        ("Babbage", "Lovelace", 0.0),
        ("", "", 1.0),
    ],
)
def test_squad_f1_matches_the_official_script(prediction, truth, f1):
    assert squad_f1(prediction, truth) == pytest.approx(f1)


def test_exact_match_and_best_over_ground_truths():
    assert squad_exact_match("the Alps", "Alps") == 1.0
    assert best_over_ground_truths(squad_f1, "four days", ["4 days", "four days"]) == 1.0
