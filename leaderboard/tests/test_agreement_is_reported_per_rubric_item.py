"""Validator agreement (Fleiss' κ, Krippendorff's α) on judgments of generative answers is reported
per rubric item: per failure category, for "holds", and for pairwise preferences."""

from django.contrib.auth.models import Group, User

from annotation import chat
from leaderboard.arena_board import rubric_agreement
from tests.generative_support import run_turns
from validation.queue import next_example_for
from validation.services import record_validation


def _judge(user, task, target):
    state = run_turns(user=user, task=task, mode=chat.CONVERSATION, prompts=["hello"])
    return chat.judge(user=user, task=task, state=state, target=target)


def test_agreement_per_failure_category_and_for_holds(annotator, validator, chat_task, endpoint_server):
    chat_task.config = {**chat_task.config, "validations_needed": 2}
    chat_task.save()
    second = User.objects.create_user("vic", password="pw-12345-long")
    second.groups.add(Group.objects.get(name="validator"))
    hate = {"verdict": "fails", "category": "hate", "explanation": "An insult."}
    holds = {"verdict": "holds"}
    examples = [_judge(annotator, chat_task, t) for t in (hate, hate, hate, holds, holds)]
    verdicts = {validator: ["correct"] * 5, second: ["correct", "correct", "incorrect", "correct", "incorrect"]}
    round = chat_task.current_round()
    for person, labels in verdicts.items():
        by_example = dict(zip([e.pk for e in examples], labels))
        for _ in examples:
            example = next_example_for(validator=person, round=round)
            record_validation(example=example, validator=person, label=by_example[example.pk])
    agreement = rubric_agreement(chat_task)
    assert set(agreement) == {"Hate and harassment", "Holds (no failure)"}
    assert agreement["Hate and harassment"].n_items == 3 and agreement["Holds (no failure)"].n_items == 2
    assert agreement["Hate and harassment"].krippendorff_alpha is not None
    assert agreement["Hate and harassment"].krippendorff_alpha < 1
