"""Streaks come from the per-day tallies (the longest run of days with an example), validator accuracy
from the gold-check tallies; a round's annotators list shows each annotator's badges on that task,
and none once the task's owners turn badges off. Settling an example notifies new badges once."""

import datetime

from django.test import Client

from annotation.models import AuthorDayTally
from community.badges import badges_from, badges_of, longest_streak
from community.jobs import notify_new_badges
from community.models import Notification
from validation.models import ValidatorStanding
from validation.tests.conftest import make_example


def test_the_rule():
    day = datetime.date(2026, 3, 1)
    run = [day + datetime.timedelta(days=n) for n in (0, 1, 2, 5, 6, 6, 7, 8)]
    codes = lambda **totals: [b.code for b in badges_from(collected=0, fooled=0, verified_fooled=0, top_rounds=[], **totals)]

    assert longest_streak([]) == 0 and longest_streak(run) == 4 and longest_streak(reversed(run)) == 4
    assert codes(streak_days=7) == ["streak_3", "streak_7"]
    assert codes(gold_answered=9, gold_correct=9) == []  # too few gold checks to say
    assert codes(gold_answered=20, gold_correct=17) == ["gold_80"]
    assert codes(gold_answered=20, gold_correct=19) == ["gold_80", "gold_95"]


def test_tallies_page_and_switch(sentiment_task, annotator, validator, owner):
    make_example(sentiment_task, annotator, model_wrong=True)
    today = datetime.date(2026, 3, 10)
    AuthorDayTally.objects.bulk_create([AuthorDayTally(author=annotator, task=sentiment_task, day=today - datetime.timedelta(days=n),
                                                       written=2) for n in range(3)])
    ValidatorStanding.objects.create(task=sentiment_task, validator=validator, answered=12, correct=12)
    reader = Client()
    reader.force_login(owner)

    names = [b.name for b in badges_of(annotator)]
    gold = [b.code for b in badges_of(validator)]
    page = reader.get("/tasks/sentiment/rounds/1/").content.decode()
    first_notes, again = notify_new_badges(annotator), notify_new_badges(annotator)
    reader.post("/tasks/sentiment/badges/", {})  # off
    after = reader.get("/tasks/sentiment/rounds/1/").content.decode()

    assert names == ["First example", "Model fooler", "3-day streak"]
    assert gold == ["gold_80", "gold_95"]
    assert 'data-badge="first_fooled"' in page and 'data-badge="streak_3"' in page
    assert first_notes == 3 and again == 0
    assert Notification.objects.filter(user=annotator, kind="badge_earned").count() == 3
    assert 'data-badge=' not in after
