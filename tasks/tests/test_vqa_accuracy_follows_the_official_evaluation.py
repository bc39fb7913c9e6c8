"""VQA accuracy is the paper's min(#humans / 3, 1) averaged over the leave-one-out subsets, after
the official script's normalisation (Antol et al., ICCV 2015, Section 4; GT-Vision-Lab/VQA
vqaEval.py). Every expected number here is computed by hand in the comment beside it."""

import pytest

from tasks.kinds import get_spec
from tasks.metrics.vqa import normalise_answer, process_punctuation, vqa_accuracy


@pytest.mark.parametrize("raw, expected", [
    ("Two", "2"),                      # number words become digits, lowercased
    ("none", "0"),
    ("The cat.", "cat"),               # article dropped, final period deleted
    ("a dog!", "dog"),                 # "!" not beside a space: replaced by a space, then split away
    ("an apple", "apple"),
    ("dont know", "don't know"),       # contraction restored
    ("10,000", "10000"),               # digit-comma-digit: punctuation deleted, not spaced
    ("yes/no", "yes no"),              # "/" not beside a space: becomes a space
    ("yes / no", "yes no"),            # "/" beside a space: deleted, the double space split away
    ("3.5", "3.5"),                    # a period before a digit stays
    ("N.Y.", "ny"),                    # periods not before a digit go
    ("  red\tand\nblue ", "red and blue"),
    ("T-shirt", "t shirt"),
])
def test_answers_are_normalised_as_the_official_script_does(raw, expected):
    assert normalise_answer(raw) == expected


def test_a_comma_group_anywhere_deletes_every_punctuation_mark():
    # The script tests the digit-comma-digit pattern on the whole text, then deletes each mark.
    assert process_punctuation("1,000 (approx)") == "1000 approx"
    # Without one: "(" beside a space is deleted, ")" with no space beside it becomes a space.
    assert process_punctuation("big (approx)") == "big approx "


@pytest.mark.parametrize("matches, expected", [
    (0, 0.0),
    (1, 0.3),   # 9 subsets hold the match: 9 · 1/3 / 10
    (2, 0.6),   # 2 subsets hold one match, 8 hold two: (2 · 1/3 + 8 · 2/3) / 10
    (3, 0.9),   # (3 · 2/3 + 7 · 1) / 10
    (4, 1.0),   # every subset holds three or more
    (10, 0.0),  # all ten agree: today's script normalises nothing, and "two" is not "2"
])
def test_ten_answers_average_the_ten_leave_one_out_subsets(matches, expected):
    humans = ["2"] * matches + ["3"] * (10 - matches)
    assert vqa_accuracy("two", humans) == pytest.approx(expected)


def test_fewer_answers_and_a_lone_annotator():
    assert vqa_accuracy("Red.", ["red"]) == pytest.approx(1 / 3)   # one answer: the formula directly
    assert vqa_accuracy("blue", ["red"]) == 0.0
    assert vqa_accuracy("red", ["red", "red", "blue"]) == pytest.approx((1 / 3 + 1 / 3 + 2 / 3) / 3)  # leaving out a red: 1 match; the blue: 2
    assert vqa_accuracy("red", []) == 0.0


def test_the_kind_is_fooled_below_the_threshold_and_scores_the_mean():
    spec = get_spec("visual_question_answering")
    config = {"model_wrong": {"rule": "vqa_accuracy_below", "threshold": 0.3}}
    assert spec.model_wrong(config, {"answers": ["Two"]}, {"answer": "2"}) is False   # 1/3 >= 0.3
    assert spec.model_wrong(config, {"answers": ["two"]}, {"answer": "3"}) is True
    items = [{"uid": "a", "target": {"answers": ["2"] * 3 + ["3"] * 7}}, {"uid": "b", "target": {"answers": ["red"]}}]
    scores = spec.score(config, items, [{"answer": "two"}, {"answer": "blue"}])
    assert scores.per_item == pytest.approx([0.9, 0.0])
    assert scores.metrics()["vqa_accuracy"] == pytest.approx(0.45)
    assert spec.import_target(config, '[{"answer": "yes"}, {"answer": "no"}]', {}, source="answers") == {"answers": ["yes", "no"]}
