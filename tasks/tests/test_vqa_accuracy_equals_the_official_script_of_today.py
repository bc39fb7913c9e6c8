"""VQA accuracy equals the official evaluation script as it stands today (GT-Vision-Lab/VQA,
``PythonEvaluationTools/vqaEvaluation/vqaEval.py``, commit a013f00 of 11 March 2021), quirks
included, on 600 seeded cases of ten human answers (the 2016 version has its own test:
``test_vqa_accuracy_2016_equals_the_2016_script.py``); the version is in the metric's signature.

No PyPI package of the official evaluation exists, so the expected values come from
``official_2021`` below, written step by step from the script's ``evaluate`` loop:

1. every human answer and the model's answer: newlines and tabs to spaces, then strip;
2. only if the human answers (after step 1) are not all the same text: ``processPunctuation``
   then ``processDigitArticle`` on each human answer and on the model's answer (the two text
   functions are checked by hand, case by case, in
   ``test_vqa_accuracy_follows_the_official_evaluation.py``);
3. for each human answer, the *other* answers equal to the model's, ``min(1, count / 3)``;
4. the mean of the ten.
"""

import random

import pytest

from tasks.kinds import get_spec
from tasks.metrics.vqa import process_digit_article, process_punctuation, vqa_accuracy

# Spellings that normalisation makes equal, and some that it does not.
POOL = ["yes", "Yes", "yes.", " yes", "YES!", "no", "No", "2", "two", "Two", "the dog", "dog", "a dog", "dogs",
        "red", "Red", "red\t", "t-shirt", "T shirt", "10,000", "10000", "dont know", "don't know", "3.5", "N.Y.", "ny"]


def official_2021(answer, humans):
    humans = [h.replace("\n", " ").replace("\t", " ").strip() for h in humans]      # step 1
    answer = answer.replace("\n", " ").replace("\t", " ").strip()
    if len(set(humans)) > 1:                                                           # step 2
        humans = [process_digit_article(process_punctuation(h)) for h in humans]
        answer = process_digit_article(process_punctuation(answer))
    per_human = []
    for k in range(len(humans)):                                                       # step 3
        others = humans[:k] + humans[k + 1:]
        per_human.append(min(1, sum(1 for o in others if o == answer) / 3))
    return sum(per_human) / len(per_human)                                             # step 4


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


def test_six_hundred_cases_equal_the_official_script_of_today():
    cases = _cases(600)
    assert [vqa_accuracy(a, h) for a, h in cases] == pytest.approx([official_2021(a, h) for a, h in cases])


def test_the_version_is_in_the_metric_signature_and_set_by_the_task():
    spec = get_spec("visual_question_answering")
    items = [{"uid": "a", "target": {"answers": ["yes"] * 10}}]
    today = spec.score({}, items, [{"answer": "Yes"}])
    old = spec.score({"vqa_version": "2016"}, items, [{"answer": "Yes"}])
    assert (today.per_item, old.per_item) == ([0.0], [1.0])
    assert today.signatures["vqa_accuracy"].startswith("vqa_accuracy|official:2021|") and "a013f00" in today.signatures["vqa_accuracy"]
    assert old.signatures["vqa_accuracy"].startswith("vqa_accuracy|official:2016|")
