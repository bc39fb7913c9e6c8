"""Fixtures for the validation tests: examples in a state, more validators."""

import itertools

import pytest
from django.contrib.auth.models import Group, User

from annotation.models import Example

_seq = itertools.count(1)


def make_user(username, *roles):
    user = User.objects.create_user(username=username, password="pw-" + username)
    user.groups.add(*Group.objects.filter(name__in=roles))
    return user


def make_example(task, author, *, model_wrong=True, label=None, text=None, answer=None, round=None, **extra):
    """An example of ``task``'s current round written by ``author`` (classification or QA)."""
    round = round or task.current_round()
    context = round.contexts.first()
    n = next(_seq)
    if task.kind == "extractive_qa":
        passage = context.data["passage"]
        answer = answer or passage.split()[3]
        data = {"question": text or f"Question {n}?", "passage": passage}
        target = {"answers": [{"text": answer, "answer_start": passage.find(answer)}]}
        output = {"answer": "something else", "start": 0, "end": 9, "score": 0.4}
    else:
        labels = task.labels
        label = label or labels[0]
        other = labels[1] if model_wrong else label
        field = task.config["input_fields"][0]["name"]
        data = {**context.data, field: text or f"Example text number {n}"}
        target = {"label": label}
        output = {"label": other, "probs": {l: (0.8 if l == other else 0.2 / (len(labels) - 1)) for l in labels}}
    return Example.objects.create(
        round=round, context=context, author=author, input=data, target=target,
        model_output=output, model_wrong=model_wrong, **extra,
    )


def leased(example, validator):
    """``example``, leased to ``validator`` as the review queue would hand it out
    (``validation.queue.next_example_for``): a user-mode verdict needs that lease."""
    from django.utils import timezone

    from validation.queue import LEASE_DURATION

    until = timezone.now() + LEASE_DURATION
    Example.objects.filter(pk=example.pk).update(leased_to=validator, leased_until=until)
    example.leased_to_id, example.leased_until = validator.pk, until
    return example


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    """Users here need passwords only to log in; hash them cheaply."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def role_groups(db):
    """The role groups (main's post_migrate hook does not fire for the models-less dynabench app)."""
    from dynabench.roles import ensure_role_groups

    ensure_role_groups()


@pytest.fixture
def validators(db):
    """Three more people with the validator role."""
    return [make_user(f"val{i}", "validator") for i in (1, 2, 3)]


@pytest.fixture
def fooling_example(sentiment_task, annotator):
    return make_example(sentiment_task, annotator, model_wrong=True, label="positive")


@pytest.fixture
def qa_example(qa_task, annotator):
    return make_example(qa_task, annotator, model_wrong=True)
