"""Paid-crowd entry and exit: study URLs, pseudonymous worker accounts, progress, completion codes.

A worker arrives at a study URL with their platform's parameters (``parse_entry``), gets or
resumes a passwordless account (``enter``), does the study's work (``note_progress`` is called
in the transaction that stores each example or validation, so a refused double submit never
counts) and finishes once (``complete``): the completion code is issued one time only.

The platform worker id is kept on the server; the account's username is
``crowd-<sha256(SECRET_KEY : platform : id)[:16]>``.
"""

import hashlib
import re
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import CrowdSession, CrowdStudy, CrowdWorker
from dynabench.errors import RuleError
from dynabench.roles import SIGNUP_ROLES

#: The query parameters each platform sends: (worker id, session, study).
PARAMETERS = {
    CrowdStudy.Platform.PROLIFIC: ("PROLIFIC_PID", "SESSION_ID", "STUDY_ID"),
    CrowdStudy.Platform.MTURK: ("workerId", "assignmentId", "hitId"),
}
#: Mechanical Turk's assignment id while a worker only previews the HIT.
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
MTURK_SUBMIT_URL = "https://www.mturk.com/mturk/externalSubmit"
MTURK_SANDBOX_SUBMIT_URL = "https://workersandbox.mturk.com/mturk/externalSubmit"
PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete"
_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class Entry:
    """The platform parameters of a study visit, checked: ``worker_id``, ``session``, ``study``;
    ``preview`` when an MTurk worker only previews the HIT (no account is made)."""

    worker_id: str
    session: str
    study: str
    preview: bool = False


def parse_entry(platform: str, params) -> Entry:
    """Check the study URL's query ``params`` for ``platform``; return the ``Entry``.

    Raises ``RuleError`` (``missing_parameters`` or ``bad_parameter``, 400) naming every
    missing parameter, or the malformed one (ids are 1-64 letters, digits, ``_`` or ``-``).
    """
    names = PARAMETERS[platform]
    missing = [n for n in names if not str(params.get(n) or "").strip()]
    if missing:
        raise RuleError(
            "missing_parameters",
            f"This study link is missing {', '.join(missing)}. Open the study from "
            f"{CrowdStudy.Platform(platform).label} again, or ask the researcher for the right link.",
            field=missing[0],
        )
    values = [str(params.get(n)).strip() for n in names]
    for name, value in zip(names, values):
        if not _ID.match(value):
            raise RuleError("bad_parameter", f"{name} must be 1 to 64 letters, digits, '_' or '-'.", field=name)
    worker_id, session, study = values
    return Entry(worker_id=worker_id, session=session, study=study,
                 preview=platform == CrowdStudy.Platform.MTURK and session == MTURK_PREVIEW)


def worker_username(platform: str, worker_id: str) -> str:
    """The pseudonymous username of a platform worker: ``crowd-`` + 16 hex characters of a salted sha256."""
    digest = hashlib.sha256(f"{settings.SECRET_KEY}:{platform}:{worker_id}".encode()).hexdigest()
    return f"crowd-{digest[:16]}"


def worker_account(platform: str, worker_id: str):
    """Return the ``CrowdWorker`` of ``(platform, worker_id)``, creating it and its passwordless
    account (in the sign-up roles) on first arrival."""
    existing = CrowdWorker.objects.select_related("user").filter(platform=platform, platform_worker_id=worker_id).first()
    if existing is not None:
        return existing
    User = get_user_model()
    try:
        with transaction.atomic():
            user = User(username=worker_username(platform, worker_id))
            user.set_unusable_password()
            user.save()
            user.groups.add(*Group.objects.filter(name__in=SIGNUP_ROLES))
            return CrowdWorker.objects.create(user=user, platform=platform, platform_worker_id=worker_id)
    except IntegrityError:  # the same worker's other request created it meanwhile
        return CrowdWorker.objects.select_related("user").get(platform=platform, platform_worker_id=worker_id)


def study_for(round, platform: str) -> CrowdStudy:
    """The active study of ``round`` on ``platform``; ``RuleError`` (``no_study``, 404) otherwise."""
    study = CrowdStudy.objects.select_related("round__task").filter(round=round, platform=platform, active=True).first()
    if study is None:
        raise RuleError("no_study", f"There is no open {platform} study for {round}.", status_code=404)
    return study


def enter(*, study: CrowdStudy, entry: Entry) -> CrowdSession:
    """Create or resume the session of ``entry``'s worker in ``study`` (one per worker and study).

    A worker who already finished gets their finished session back (``completed_at`` set): the
    caller shows that, never a second code. The platform's session and study ids of the first
    visit are kept.
    """
    worker = worker_account(study.platform, entry.worker_id)
    session, _ = CrowdSession.objects.get_or_create(
        study=study, worker=worker, defaults={"platform_session": entry.session, "platform_study": entry.study}
    )
    return session


def active_session(*, user, round, activity: str | None = None) -> CrowdSession | None:
    """The unfinished crowd session of ``user`` in ``round`` (of that ``activity``), or None."""
    if not user.is_authenticated:
        return None
    sessions = CrowdSession.objects.select_related("study").filter(
        worker__user=user, study__round=round, completed_at__isnull=True
    )
    if activity:
        sessions = sessions.filter(study__activity=activity)
    return sessions.first()


def note_progress(*, user, round, activity: str) -> int:
    """Count one unit of ``activity`` (``write`` or ``validate``) toward ``user``'s unfinished
    study sessions in ``round``; return how many sessions it counted for. Call in the
    transaction that stores the example or validation."""
    return CrowdSession.objects.filter(
        worker__user_id=user.pk, study__round_id=round.pk, study__activity=activity, completed_at__isnull=True
    ).update(progress=F("progress") + 1)


def complete(*, session: CrowdSession) -> CrowdSession:
    """Finish ``session`` and record its completion code, once.

    Raises ``RuleError``: ``not_done`` (409) while ``progress < study.required``;
    ``already_completed`` (409) when the session was finished before (no second code).
    """
    with transaction.atomic():
        session = CrowdSession.objects.select_for_update().select_related("study").get(pk=session.pk)
        if session.completed_at is not None:
            raise RuleError("already_completed", f"You already finished this study on {session.completed_at:%Y-%m-%d %H:%M} UTC; "
                            "your completion was recorded.", status_code=409)
        if session.progress < session.study.required:
            raise RuleError("not_done", f"Finish your work first: {session.progress} of {session.study.required} done.", status_code=409)
        session.completed_at = timezone.now()
        session.completion_code = session.study.completion_code
        session.save(update_fields=["completed_at", "completion_code"])
    return session


def exit_link(session: CrowdSession) -> dict:
    """Where a finished worker goes back to: Prolific's completion URL with the code, or MTurk's
    submit form (``action`` and the ``assignmentId`` field)."""
    study = session.study
    if study.platform == CrowdStudy.Platform.MTURK:
        return {"form_action": MTURK_SANDBOX_SUBMIT_URL if study.mturk_sandbox else MTURK_SUBMIT_URL,
                "assignment_id": session.platform_session}
    return {"url": f"{PROLIFIC_COMPLETE_URL}?cc={session.completion_code}", "code": session.completion_code}
