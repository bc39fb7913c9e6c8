"""Attack: a script with as many identities as it likes takes the qualification quiz through the
pages, remembering every answer of every attempt that passed and re-using it. It learns only
pass or fail (the page carries no score and no per-question verdict), each attempt draws other
questions from the pool, and the quiz takes at most ``attempts_per_hour`` attempts from
everyone: over the whole hour it passes no more often than guessing would (a one-sided
binomial test at the 1% level, fixed seeds)."""

import random
import re

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from scipy.stats import binom

from annotation import qualification
from annotation.models import Qualification, QuizAttempt, QuizItem
from annotation.qualification import guess_pass_probability

QUIZ = "/tasks/sentiment/qualification/"
PER_HOUR = 40


@pytest.fixture
def quiz(sentiment_task, monkeypatch):
    monkeypatch.setattr(qualification, "_RANDOM", random.Random(20261125))  # the draws, reproducible
    found = Qualification.objects.create(
        task=sentiment_task, instructions="Label the sentiment.", pass_mark=0.8, max_attempts=3,
        questions_per_attempt=5, cooloff_minutes=0, attempts_per_hour=PER_HOUR,
    )
    gold = random.Random(7)
    for n in range(30):
        QuizItem.objects.create(qualification=found, position=n, input={"text": f"Sentence number {n}."},
                                answer={"label": gold.choice(sentiment_task.labels)})
    return found


def identity(n) -> Client:
    user = User.objects.create_user(username=f"sock{n}")
    user.groups.add(Group.objects.get(name="annotator"))
    client = Client()
    client.force_login(user)
    return client


def result_text(page) -> str:
    match = re.search(r'<div class="card" id="quiz-result" role="status">(.*?)</div>', page.content.decode(), re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", match.group(1))).strip()


def run_script(quiz, labels):
    """The script: up to 60 identities, each using every attempt it gets; returns
    ``(passes, submitted, refused, outcomes)``."""
    guess = random.Random(11)
    learned: dict[str, str] = {}
    passes = submitted = refused = 0
    outcomes = set()
    for n in range(60):  # far more identities than the hour allows attempts
        client = identity(n)
        for _ in range(quiz.max_attempts):
            page = client.get(QUIZ)
            if page.status_code == 429:
                refused += 1
                break
            body = page.content.decode()
            key = re.search(r'name="key" value="([0-9a-f]+)"', body).group(1)
            items = re.findall(r'data-quiz-item="(\d+)"', body)
            answers = {f"item-{i}-label": learned.get(i) or guess.choice(labels) for i in items}
            done = client.post(QUIZ, {"key": key, "read_instructions": "on", **answers})
            submitted += 1
            text = result_text(done)
            outcomes.add(re.sub(r"\d+ attempts? left.*|Continue", "", text).strip())
            assert not re.search(r"\d+ (of|/) \d+|right|wrong|correct", text), text  # no score, no per-question verdict
            if text.startswith("You passed"):
                passes += 1
                learned.update({i: answers[f"item-{i}-label"] for i in items})
                break
    return passes, submitted, refused, outcomes


def test_the_script_learns_only_pass_or_fail_and_passes_no_more_than_guessing(quiz, sentiment_task):
    labels = sentiment_task.labels
    passes, submitted, refused, outcomes = run_script(quiz, labels)
    print(f"scripted quiz-taker: {passes} passes in {submitted} attempts")

    assert outcomes <= {"You passed.", "Not passed."}
    assert submitted == PER_HOUR == QuizAttempt.objects.filter(submitted_at__isnull=False).count() and refused > 0
    chance = guess_pass_probability(questions=5, pass_mark=0.8, choices=len(labels))
    assert passes <= binom.ppf(0.99, submitted, chance), (passes, submitted, chance)


def test_without_retiring_questions_the_same_script_would_learn_the_answers(quiz, sentiment_task):
    """Why questions retire: with ``retire_after_passes=0`` the pass bit alone teaches the script."""
    Qualification.objects.filter(pk=quiz.pk).update(retire_after_passes=0)
    quiz.refresh_from_db()
    passes, submitted, _, _ = run_script(quiz, sentiment_task.labels)
    print(f"scripted quiz-taker, questions never retired: {passes} passes in {submitted} attempts")
    chance = guess_pass_probability(questions=5, pass_mark=0.8, choices=len(sentiment_task.labels))
    assert passes > binom.ppf(0.99, submitted, chance)


def test_someone_who_knows_the_answers_passes(quiz):
    client = identity("expert")
    page = client.get(QUIZ)
    body = page.content.decode()
    key = re.search(r'name="key" value="([0-9a-f]+)"', body).group(1)
    answers = {f"item-{i}-label": QuizItem.objects.get(pk=i).answer["label"] for i in re.findall(r'data-quiz-item="(\d+)"', body)}
    assert len(answers) == 5
    assert result_text(client.post(QUIZ, {"key": key, "read_instructions": "on", **answers})) == "You passed. Continue"
