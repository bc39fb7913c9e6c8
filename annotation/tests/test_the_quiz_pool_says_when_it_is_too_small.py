"""The owner is told when a quiz pool is too small to be safe (fewer than three times the
questions of an attempt, counting questions not yet retired, or an attempt that guessing passes
more than 5% of the time), and which workers keep failing."""

import pytest
from django.contrib.auth.models import User

from annotation.models import Qualification, QuizItem
from annotation.qualification import guess_pass_probability, open_attempt, pool_report, repeated_failures, submit_attempt


def test_guessing_probability_is_the_binomial_tail():
    # 5 questions of 3 labels, 4 right needed: C(5,4)(1/3)^4(2/3) + (1/3)^5 = 11/243.
    assert guess_pass_probability(questions=5, pass_mark=0.8, choices=3) == pytest.approx(11 / 243)
    assert guess_pass_probability(questions=2, pass_mark=0.5, choices=2) == pytest.approx(0.75)
    assert guess_pass_probability(questions=5, pass_mark=0.8, choices=None) == 0.0


@pytest.fixture
def quiz(sentiment_task):
    return Qualification.objects.create(task=sentiment_task, instructions="Read.", pass_mark=0.8, questions_per_attempt=5,
                                        max_attempts=3, cooloff_minutes=0)


def add(quiz, n):
    for i in range(n):
        QuizItem.objects.create(qualification=quiz, position=i, input={"text": f"Sentence {i}."}, answer={"label": "positive"})


def test_a_pool_under_three_times_an_attempt_is_unsafe_and_says_how_many_to_add(quiz):
    add(quiz, 14)
    report = pool_report(quiz)
    assert not report.safe and "needs at least 15" in report.problems[0] and "Add 1 more" in report.problems[0]
    add(quiz, 1)
    assert pool_report(quiz).safe


def test_an_attempt_that_guessing_passes_too_often_is_unsafe(quiz):
    add(quiz, 30)
    Qualification.objects.filter(pk=quiz.pk).update(pass_mark=0.4, questions_per_attempt=2)
    quiz.refresh_from_db()
    report = pool_report(quiz)
    assert not report.safe and "Guessing passes" in report.problems[-1]


def test_passed_questions_retire_and_repeated_failures_are_listed(quiz):
    add(quiz, 15)
    expert, failing = User.objects.create_user("expert"), User.objects.create_user("failing")
    attempt = open_attempt(user=expert, qualification=quiz)
    submit_attempt(user=expert, qualification=quiz, key=attempt.key, read_instructions=True,
                   answers={i: {"label": "positive"} for i in attempt.items})
    assert pool_report(quiz).pool == 10 and not pool_report(quiz).safe  # five retired by the pass
    for _ in range(2):
        attempt = open_attempt(user=failing, qualification=quiz)
        assert not set(attempt.items) & set(QuizItem.objects.filter(passes__gt=0).values_list("id", flat=True))
        submit_attempt(user=failing, qualification=quiz, key=attempt.key, read_instructions=True,
                       answers={i: {"label": "negative"} for i in attempt.items})
    assert [(r["username"], r["failed"]) for r in repeated_failures(quiz)] == [("failing", 2)]
