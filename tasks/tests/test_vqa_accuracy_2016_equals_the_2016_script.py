"""``"vqa_version": "2016"`` computes VQA accuracy as the official script of 8 October 2016 did
(GT-Vision-Lab/VQA, ``PythonEvaluationTools/vqaEvaluation/vqaEval.py``, commit 458a8b2), step for
step, on 600 seeded cases of ten human answers, including the cases where it differs from today's.

``official_2016`` below follows that commit's ``evaluate`` loop line by line:

1. the model's answer: newlines and tabs to spaces, strip, ``processPunctuation``,
   ``processDigitArticle``;
2. the human answers as given; only if they are not all the same text, ``processPunctuation`` on
   each (no white space, no lowercasing, no number words or articles);
3. for each human answer, the *other* answers equal to the model's, ``min(1, count / 3)``;
4. the mean of the ten.
"""

import random

import pytest

from tasks.metrics.vqa import process_digit_article, process_punctuation, vqa_accuracy

POOL = ["yes", "Yes", "yes.", " yes", "YES!", "no", "No", "2", "two", "Two", "the two", "the dog", "dog", "a dog", "dogs",
        "red", "Red", "red\t", "t-shirt", "T shirt", "10,000", "10000", "dont know", "don't know", "3.5", "N.Y.", "ny"]


def official_2016(answer, humans):
    answer = answer.replace("\n", " ").replace("\t", " ").strip()                       # step 1
    answer = process_digit_article(process_punctuation(answer))
    if len(set(humans)) > 1:                                                            # step 2
        humans = [process_punctuation(h) for h in humans]
    per_human = []
    for k in range(len(humans)):                                                        # step 3
        others = humans[:k] + humans[k + 1:]
        per_human.append(min(1, sum(1 for o in others if o == answer) / 3))
    return sum(per_human) / len(per_human)                                              # step 4


def _cases(n, seed=48):
    rng = random.Random(seed)
    cases = []
    for _ in range(n):
        if rng.random() < 0.3:  # the ten humans agree, written one way
            humans = [rng.choice(POOL)] * 10
        else:
            common = rng.sample(POOL, rng.randint(1, 4))
            humans = [rng.choice(common) for _ in range(10)]
        cases.append((rng.choice(POOL), humans))
    return cases


def test_six_hundred_cases_equal_the_2016_script():
    cases = _cases(600)

    assert [vqa_accuracy(a, h, version="2016") for a, h in cases] == pytest.approx([official_2016(a, h) for a, h in cases])


def test_where_it_differs_from_today():
    assert vqa_accuracy("the two", ["the two"] * 10, version="2016") == 0.0   # the humans' answers are not normalised
    assert vqa_accuracy("the two", ["the two"] * 10) == 1.0
    assert vqa_accuracy("Yes", ["yes"] * 10, version="2016") == 1.0           # the model's answer always is
    assert vqa_accuracy("Yes", ["yes"] * 10) == 0.0
    disagreeing = ["Red"] * 5 + ["red"] * 5                                     # punctuation only: no lowercasing
    assert vqa_accuracy("red", disagreeing, version="2016") == pytest.approx(official_2016("red", disagreeing)) == 1.0
    assert vqa_accuracy("Red", disagreeing, version="2016") == 1.0            # "Red" becomes "red" and five humans wrote that


def test_an_unknown_version_is_refused():
    with pytest.raises(ValueError, match="vqa_version is one of"):
        vqa_accuracy("yes", ["yes"], version="2019")
