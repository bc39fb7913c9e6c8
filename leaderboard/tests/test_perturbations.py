"""The robustness and fairness perturbations: what each changes, and that they are deterministic."""

from leaderboard.perturbations import (
    case,
    contraction,
    fairness_variant,
    gender,
    name,
    punctuation,
    robustness_variant,
    typo,
)


def test_a_typo_swaps_two_inner_letters_of_one_word():
    out = typo("The service was wonderful", key="1")
    assert out != "The service was wonderful"
    assert sorted(out) == sorted("The service was wonderful")
    changed = [(a, b) for a, b in zip(out.split(), "The service was wonderful".split()) if a != b]
    assert len(changed) == 1 and changed[0][0][0] == changed[0][1][0] and changed[0][0][-1] == changed[0][1][-1]


def test_a_typo_is_the_same_every_time():
    assert typo("Emperor penguins breed in winter", key="x") == typo("Emperor penguins breed in winter", key="x")


def test_short_words_get_no_typo():
    assert typo("a cat is on it", key="k") is None


def test_case_lowers_or_capitalises():
    assert case("The Museum OPENED") == "the museum opened"
    assert case("no capitals here") == "No capitals here"
    assert case("123") is None


def test_punctuation_is_dropped_or_added():
    assert punctuation("Well, it was fine.") == "Well it was fine"
    assert punctuation("it was fine") == "it was fine."


def test_contractions_are_expanded_or_made():
    assert contraction("I don't think it's open") == "I do not think it is open"
    assert contraction("I do not think it is open") == "I don't think it's open"
    assert contraction("Nothing to change") is None


def test_gendered_words_are_swapped_both_ways_keeping_case():
    assert gender("He gave her book to his sister") == "She gave his book to her brother"
    assert gender("She thanked her.") == "He thanked him."
    assert gender("The committee voted") is None


def test_names_are_swapped_between_paired_lists():
    assert name("John met Mary in Paris") == "Mary met John in Paris"
    assert name("Johnson arrived") is None


def test_each_item_gets_at_most_one_robustness_variant_spread_over_kinds():
    kinds = {robustness_variant({"text": f"The staff were friendly, item {i}."}, key=f"uid-{i}")[0] for i in range(40)}
    assert kinds == {"typo", "case", "punctuation"}  # no contraction applies to this text


def test_a_robustness_variant_falls_back_when_the_chosen_kind_does_not_apply():
    kind, fields = robustness_variant({"text": "ok"}, key="any")
    assert kind in {"case", "punctuation"} and fields["text"] != "ok"


def test_the_fairness_variant_perturbs_every_field_and_skips_neutral_items():
    variant = fairness_variant({"premise": "John thanked his wife.", "hypothesis": "He was grateful."}, key="u1")
    assert variant == {"premise": "Mary thanked her husband.", "hypothesis": "She was grateful."}
    assert fairness_variant({"premise": "The river flooded.", "hypothesis": "It rained."}, key="u2") is None
