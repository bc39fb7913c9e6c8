"""Attack: one address opens a study link 50 times with made-up Prolific ids. At most
``CROWD_ENTRIES_PER_ADDRESS_PER_HOUR`` accounts are made; the rest get a 429 page saying when
to come back; another address still gets in; a study takes at most its participant cap."""

from django.conf import settings
from django.test import Client

from annotation.models import CrowdSession, CrowdWorker
from annotation.tests.crowd_helpers import fresh_address, pid, prolific_study, prolific_url


def test_fifty_made_up_ids_from_one_address_get_at_most_the_throttle_in(sentiment_task):
    study = prolific_study(sentiment_task.current_round(), participant_cap=1000)
    limit = settings.CROWD_ENTRIES_PER_ADDRESS_PER_HOUR
    attacker = fresh_address()
    answers = [Client().get(prolific_url(study, pid(f"made-up-{n}")), REMOTE_ADDR=attacker) for n in range(50)]

    admitted = [a for a in answers if a.status_code == 302]
    refused = [a for a in answers if a.status_code == 429]
    assert 0 < limit < 50
    assert len(admitted) == limit and len(refused) == 50 - limit
    assert CrowdWorker.objects.count() == limit == CrowdSession.objects.count()
    assert b"Too many study entries" in refused[0].content and int(refused[0]["Retry-After"]) > 0

    # The limit is per address: a worker elsewhere is not locked out by the attack.
    assert Client().get(prolific_url(study, pid("honest")), REMOTE_ADDR=fresh_address()).status_code == 302


def test_rotating_x_forwarded_for_does_not_move_the_address(sentiment_task):
    study = prolific_study(sentiment_task.current_round(), participant_cap=1000)
    limit = settings.CROWD_ENTRIES_PER_ADDRESS_PER_HOUR
    address = fresh_address()
    codes = [
        Client().get(prolific_url(study, pid(f"xff-{n}")), REMOTE_ADDR=address, HTTP_X_FORWARDED_FOR=f"192.0.2.{n}").status_code
        for n in range(limit + 5)
    ]
    assert codes.count(302) == limit and codes.count(429) == 5


def test_a_study_takes_no_more_workers_than_its_cap(sentiment_task):
    study = prolific_study(sentiment_task.current_round(), participant_cap=3)
    codes = [Client().get(prolific_url(study, pid(f"cap-{n}")), REMOTE_ADDR=fresh_address()) for n in range(5)]

    assert [c.status_code for c in codes] == [302, 302, 302, 409, 409]
    assert b"This study is full" in codes[-1].content and CrowdSession.objects.count() == 3


def test_a_study_takes_a_limited_number_of_entries_a_minute_from_all_addresses(sentiment_task, settings):
    settings.CROWD_ENTRIES_PER_STUDY_PER_MINUTE = 3
    study = prolific_study(sentiment_task.current_round(), participant_cap=1000)
    codes = [Client().get(prolific_url(study, pid(f"rush-{n}")), REMOTE_ADDR=fresh_address()).status_code for n in range(5)]
    assert codes == [302, 302, 302, 429, 429] and CrowdSession.objects.count() == 3
