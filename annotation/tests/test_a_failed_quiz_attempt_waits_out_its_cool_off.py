"""After a failed attempt a worker waits ``cooloff_minutes`` before the next one (a 429 page
saying how long, with the instructions to read again); afterwards the next attempt draws its
questions anew."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.urls import reverse

from annotation.models import Qualification, QuizAttempt, QuizItem
from annotation.qualification import open_attempt, submit_attempt
from dynabench.errors import NotAllowed


@pytest.fixture
def worker(db):
    user = User.objects.create_user(username="worker")
    user.groups.add(Group.objects.get(name="annotator"))
    return user


@pytest.fixture
def quiz(sentiment_task):
    found = Qualification.objects.create(task=sentiment_task, instructions="Read **this**.", pass_mark=1.0, cooloff_minutes=30,
                                         questions_per_attempt=2)
    for n in range(6):
        QuizItem.objects.create(qualification=found, position=n, input={"text": f"Text {n}."}, answer={"label": "positive"})
    return found


def test_a_failed_attempt_starts_a_cool_off_and_the_page_says_how_long(client, worker, quiz):
    attempt = open_attempt(user=worker, qualification=quiz)
    submit_attempt(user=worker, qualification=quiz, key=attempt.key, read_instructions=True,
                   answers={i: {"label": "negative"} for i in attempt.items})
    with pytest.raises(NotAllowed) as refused:
        open_attempt(user=worker, qualification=quiz)
    assert refused.value.code == "cooling_off" and refused.value.status_code == 429

    client.force_login(worker)
    page = client.get(reverse("annotation:qualification", args=["sentiment"]))
    assert page.status_code == 429 and b"try the quiz again in 30 minutes" in page.content and b"quiz-form" not in page.content

    QuizAttempt.objects.filter(pk=attempt.pk).update(submitted_at=attempt.created_at - timedelta(minutes=31))
    again = client.get(reverse("annotation:qualification", args=["sentiment"]))
    assert again.status_code == 200 and b"quiz-form" in again.content
    assert QuizAttempt.objects.filter(user=worker).count() == 2
