"""Building crowd studies and their entry URLs for tests, as the platforms would send them."""

import hashlib
import random
from urllib.parse import urlencode

import pytest

from annotation.models import CrowdStudy

PROLIFIC_STUDY_ID = "65a0b1c2d3e4f5a6b7c8d9e0"
HIT_ID = "3HITAAAAAAAAAAAAAAAAAAAAAAAAAA"


def pid(n) -> str:
    """A Prolific-shaped id (24 hex characters) made from ``n``."""
    return hashlib.sha256(f"pid{n}".encode()).hexdigest()[:24]


def mturk_id(n, prefix="A") -> str:
    """An MTurk-shaped id (upper-case letters and digits) made from ``n``."""
    return (prefix + hashlib.sha256(f"mt{n}".encode()).hexdigest().upper())[:14]


def prolific_study(round, **fields) -> CrowdStudy:
    values = {"required": 1, "completion_code": "PCODE", "platform_study_id": PROLIFIC_STUDY_ID, **fields}
    return CrowdStudy.objects.create(round=round, platform="prolific", **values)


def mturk_study(round, **fields) -> CrowdStudy:
    values = {"required": 1, "platform_study_id": HIT_ID, **fields}
    return CrowdStudy.objects.create(round=round, platform="mturk", **values)


def entry_path(study: CrowdStudy) -> str:
    return f"/crowd/{study.round.task.code}/r{study.round.number}/{study.platform}/"


def prolific_url(study, worker, session=None, *, study_id=None, token=None) -> str:
    """The entry URL Prolific would open for participant ``worker`` in session ``session``."""
    params = {"PROLIFIC_PID": worker, "STUDY_ID": study_id or study.platform_study_id,
              "SESSION_ID": session or hashlib.sha256(f"s{worker}".encode()).hexdigest()[:24],
              "token": study.entry_token if token is None else token}
    return f"{entry_path(study)}?{urlencode({k: v for k, v in params.items() if v != ''})}"


def mturk_url(study, worker, assignment=None, *, hit=None, token=None) -> str:
    params = {"workerId": worker, "assignmentId": assignment or mturk_id(worker, "3A"),
              "hitId": hit or study.platform_study_id, "token": study.entry_token if token is None else token}
    return f"{entry_path(study)}?{urlencode({k: v for k, v in params.items() if v != ''})}"


def enter(study: CrowdStudy, worker_id: str, session: str, *, address: str = "192.0.2.1"):
    """Enter ``study`` as ``worker_id`` in platform session ``session`` from ``address`` through
    ``crowd.enter`` (the throttles off: for tests that set up workers, not those that attack
    the entry); returns the ``CrowdSession``."""
    from django.test import override_settings

    from annotation import crowd

    entry = crowd.Entry(worker_id=worker_id, session=session, study=study.platform_study_id, token=study.entry_token)
    with override_settings(CROWD_ENTRIES_PER_ADDRESS_PER_HOUR=0, CROWD_ENTRIES_PER_STUDY_PER_MINUTE=0):
        return crowd.enter(study=study, entry=entry, address=address).session


@pytest.fixture
def entry_throttles_off(settings):
    """Entry throttles off, for tests whose subject is not the throttle: the counters live in a
    cache that other tests (and parallel test workers) share, keyed by client address."""
    settings.CROWD_ENTRIES_PER_ADDRESS_PER_HOUR = 0
    settings.CROWD_ENTRIES_PER_STUDY_PER_MINUTE = 0


def fresh_address() -> str:
    """A client address no other test uses (the throttle counters are shared through the cache)."""
    return "10.{}.{}.{}".format(*(random.SystemRandom().randrange(1, 255) for _ in range(3)))
