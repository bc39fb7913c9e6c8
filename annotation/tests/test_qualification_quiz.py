"""A task's qualification gates writing and validating: scored on the server, attempts limited
and recorded, a double-submitted quiz counted once, a pass granting the task's roles, the gold
answers never sent to the browser."""

import pytest
from django.contrib.auth.models import Group, User
from django.urls import reverse

from annotation.models import Qualification, QuizAttempt, QuizItem
from annotation.qualification import is_qualified, open_attempt, submit_attempt
from annotation.services import create_example
from dynabench.errors import NotAllowed, RuleError
from tasks.access import has_task_role


@pytest.fixture
def worker(db):
    user = User.objects.create_user(username="worker", password="pw-worker")
    user.groups.add(Group.objects.get(name="annotator"))
    return user


@pytest.fixture
def quiz(sentiment_task):
    qualification = Qualification.objects.create(
        task=sentiment_task, instructions="Read **me**.", pass_mark=0.5, max_attempts=2, cooloff_minutes=0,
    )
    first = QuizItem.objects.create(qualification=qualification, position=1, input={"text": "Gorgeous views."}, answer={"label": "positive"})
    second = QuizItem.objects.create(qualification=qualification, position=2, input={"text": "Dirty sheets."}, answer={"label": "negative"})
    return qualification, first, second


def attempt(worker, qualification, answers, read_instructions=True):
    """Open an attempt (all of the two-item pool is drawn) and submit ``answers`` to it."""
    opened = open_attempt(user=worker, qualification=qualification)
    return submit_attempt(user=worker, qualification=qualification, key=opened.key, read_instructions=read_instructions,
                          answers=answers)


def test_writing_waits_for_a_pass_which_grants_the_task_roles(worker, quiz, sentiment_context):
    qualification, first, second = quiz
    with pytest.raises(NotAllowed) as refused:
        create_example(user=worker, context=sentiment_context, input={"text": "Meh."}, target={"label": "neutral"})
    assert refused.value.code == "not_qualified" and "/tasks/sentiment/qualification/" in refused.value.message

    failed = attempt(worker, qualification, {first.pk: {"label": "negative"}, second.pk: {"label": "positive"}})
    assert (failed.right, failed.total, failed.passed) == (0, 2, False)
    assert not is_qualified(user=worker, task=qualification.task)

    passed = attempt(worker, qualification, {first.pk: {"label": "positive"}, second.pk: {"label": "positive"}})
    assert (passed.right, passed.passed) == (1, True)  # 1 of 2 meets the 50% pass mark
    assert has_task_role(worker, qualification.task, "validator")
    assert create_example(user=worker, context=sentiment_context, input={"text": "Meh."}, target={"label": "neutral"}).pk


def test_attempts_are_limited_and_a_double_submit_counts_once(worker, quiz):
    qualification, first, second = quiz
    wrong = {first.pk: {"label": "negative"}, second.pk: {"label": "positive"}}
    one = attempt(worker, qualification, wrong)
    again = submit_attempt(user=worker, qualification=qualification, key=one.key, read_instructions=True, answers=wrong)
    assert again.pk == one.pk and QuizAttempt.objects.count() == 1

    attempt(worker, qualification, wrong)
    with pytest.raises(NotAllowed) as refused:
        open_attempt(user=worker, qualification=qualification)
    assert refused.value.code == "no_attempts_left" and QuizAttempt.objects.count() == 2


def test_bad_attempts_are_refused_naming_what_to_fix_and_store_nothing(worker, quiz):
    qualification, first, second = quiz
    key = open_attempt(user=worker, qualification=qualification).key
    with pytest.raises(RuleError) as unread:
        submit_attempt(user=worker, qualification=qualification, key=key, read_instructions=False,
                       answers={first.pk: {"label": "positive"}, second.pk: {"label": "negative"}})
    assert unread.value.field == "read_instructions"
    with pytest.raises(RuleError) as missing:
        submit_attempt(user=worker, qualification=qualification, key=key, read_instructions=True, answers={first.pk: {"label": "positive"}})
    assert missing.value.field == f"item-{second.pk}"
    with pytest.raises(RuleError) as unknown:
        submit_attempt(user=worker, qualification=qualification, key=key, read_instructions=True,
                       answers={first.pk: {"label": "thrilled"}, second.pk: {"label": "negative"}})
    assert unknown.value.field == f"item-{first.pk}"
    with pytest.raises(RuleError) as made_up:
        submit_attempt(user=worker, qualification=qualification, key="made-up", read_instructions=True,
                       answers={first.pk: {"label": "positive"}, second.pk: {"label": "negative"}})
    assert made_up.value.code == "bad_form_key"
    assert not QuizAttempt.objects.filter(submitted_at__isnull=False).exists()


def test_the_quiz_page_never_sends_the_gold_answers_and_scores_on_the_server(client, worker, quiz):
    qualification, first, second = quiz
    client.force_login(worker)
    page = client.get(reverse("annotation:qualification", args=["sentiment"]))
    assert page.status_code == 200
    body = page.content.decode()
    assert "Gorgeous views." in body and "Read <strong>me</strong>." in body
    assert "checked" not in body  # no answer preselected
    key = page.context["form"]["key"].value()

    data = {"key": key, "read_instructions": "on", f"item-{first.pk}-label": "positive", f"item-{second.pk}-label": "negative"}
    done = client.post(reverse("annotation:qualification", args=["sentiment"]), data)
    assert done.status_code == 200 and b"You passed" in done.content
    assert client.post(reverse("annotation:qualification", args=["sentiment"]), data).status_code == 200
    assert QuizAttempt.objects.filter(user=worker).count() == 1  # the same form twice counts once

    after = client.get(reverse("annotation:qualification", args=["sentiment"]))
    assert after.status_code == 200 and b"You passed this task" in after.content and b"quiz-form" not in after.content


def test_the_create_page_sends_an_unqualified_worker_to_the_quiz(client, worker, quiz, sentiment_model):
    client.force_login(worker)
    response = client.get(reverse("annotation:create", args=["sentiment"]))
    assert response.status_code == 302 and response.url.startswith("/tasks/sentiment/qualification/?next=")


def test_a_qa_quiz_takes_a_typed_span(qa_task, worker):
    qualification = Qualification.objects.create(task=qa_task, instructions="Find the span.", pass_mark=1.0)
    passage = qa_task.current_round().contexts.first().data["passage"]
    span = " ".join(passage.split()[2:4])
    item = QuizItem(qualification=qualification, input={"passage": passage, "question": "What?"},
                    answer={"answers": [{"text": span, "answer_start": passage.find(span)}]})
    item.full_clean()
    item.save()
    answer = qa_task.spec.quiz_target(qa_task.config, item.input, {"answer_text": span})
    assert attempt(worker, qualification, {item.pk: answer}).passed
