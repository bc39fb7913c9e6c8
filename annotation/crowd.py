"""Paid-crowd entry and exit: study URLs that prove themselves, pseudonymous worker accounts,
progress, completion codes.

A worker arrives at a study URL with their platform's parameters and the study's secret token
(``parse_entry``), and gets or resumes a passwordless account (``enter``) only when the entry
proves itself (``check_entry``, in this order):

1. the study is active on an open round (else ``study_ended``, 410);
2. the URL's ``token`` equals the study's ``entry_token`` (``bad_token``, 403);
3. the platform's study id (Prolific ``STUDY_ID``, MTurk ``hitId``) equals the study's
   ``platform_study_id`` (``wrong_study``, 403; ``study_not_ready``, 409, before the owner set it);
4. the worker id has this platform's shape and no account on the other platform
   (``foreign_worker``, 403): a worker id is bound to one platform;
5. entries are throttled per client address and per study (``throttled``, 429;
   ``CROWD_ENTRIES_PER_ADDRESS_PER_HOUR``, ``CROWD_ENTRIES_PER_STUDY_PER_MINUTE``);
6. with the owner's API token on the study, the platform's record of the session is looked up
   (``annotation/crowd_lookup.py``) and must name this worker and study (``lookup_mismatch``);
7. a ``SESSION_ID``/``assignmentId`` belongs to one worker of the study (``session_taken``), the
   study holds at most ``participant_cap`` workers (``study_full``, 409);
8. knowing a worker's id does not make anyone that worker: an existing account is entered only
   with the platform session it started this study with (resuming), or from the browser that
   holds its proof (a secret cookie issued when the account was made, ``proof_hash``), or after
   the platform's API confirmed the entry (``not_this_browser``, 403).

It then does the study's work (``note_progress`` is called in the transaction that stores each
example or validation, so a refused double submit never counts) and finishes once
(``complete``): the completion code is issued one time only, and only for work that still
stands (a retracted example does not count).

The platform worker id is kept on the server; the account's username is
``crowd-<sha256(SECRET_KEY : platform : id)[:16]>``.
"""

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotation import crowd_lookup
from annotation.models import CrowdSession, CrowdStudy, CrowdWorker, Example
from dynabench.errors import NotAllowed, RuleError
from dynabench.ratelimits import count_hit
from dynabench.roles import SIGNUP_ROLES
from tasks.models import Round
from tasks.signals import crowd_study_completed

#: The query parameters each platform sends: (worker id, session, study).
PARAMETERS = {
    CrowdStudy.Platform.PROLIFIC: ("PROLIFIC_PID", "SESSION_ID", "STUDY_ID"),
    CrowdStudy.Platform.MTURK: ("workerId", "assignmentId", "hitId"),
}
#: The study's secret, a parameter of the URL the owner pastes into the platform.
TOKEN_PARAMETER = "token"
#: Mechanical Turk's assignment id while a worker only previews the HIT.
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
MTURK_SUBMIT_URL = "https://www.mturk.com/mturk/externalSubmit"
MTURK_SANDBOX_SUBMIT_URL = "https://workersandbox.mturk.com/mturk/externalSubmit"
PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete"
#: The shapes of the platforms' ids. Prolific's participant, study and session ids are 24
#: hexadecimal characters (MongoDB object ids); MTurk's worker, assignment and HIT ids are
#: upper-case letters and digits. An id of the other platform's shape is refused, so one
#: person cannot enter a Prolific study with an MTurk id or the reverse.
_SHAPES = {
    CrowdStudy.Platform.PROLIFIC: re.compile(r"^[0-9a-f]{24}$"),
    CrowdStudy.Platform.MTURK: re.compile(r"^[0-9A-Z]{8,64}$"),
}
_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: The cookie that holds a browser's proof of the crowd account it created (signed, HttpOnly).
PROOF_COOKIE = "dynabench_crowd_proof"
PROOF_SALT = "annotation.crowd.proof"
PROOF_MAX_AGE_S = 180 * 86400


@dataclass(frozen=True)
class Entry:
    """The platform parameters of a study visit, checked: ``worker_id``, ``session``, ``study``,
    ``token`` (the study's secret from the URL); ``preview`` when an MTurk worker only previews
    the HIT (no account is made, ``worker_id`` may be empty)."""

    worker_id: str
    session: str
    study: str
    preview: bool = False
    token: str = ""


def parse_entry(platform: str, params) -> Entry:
    """Check the study URL's query ``params`` for ``platform``; return the ``Entry``.

    Raises ``RuleError``: ``missing_parameters`` (400) naming every missing parameter (the
    ``token`` too); ``bad_parameter`` (400) for a malformed one; ``foreign_worker`` (403) for a
    worker id of another platform's shape (``_SHAPES``). An MTurk preview
    (``assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE``) needs only ``hitId``.
    """
    names = PARAMETERS[platform]
    worker_name, session_name, study_name = names
    token = str(params.get(TOKEN_PARAMETER) or "").strip()
    if platform == CrowdStudy.Platform.MTURK and str(params.get(session_name) or "").strip() == MTURK_PREVIEW:
        study = str(params.get(study_name) or "").strip()
        if not _ID.match(study):
            raise RuleError("bad_parameter", f"{study_name} must be 1 to 64 letters, digits, '_' or '-'.", field=study_name)
        return Entry(worker_id="", session=MTURK_PREVIEW, study=study, preview=True, token=token)
    missing = [n for n in (*names, TOKEN_PARAMETER) if not str(params.get(n) or "").strip()]
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
    if not _SHAPES[platform].match(worker_id):
        other = [p for p, shape in _SHAPES.items() if p != platform and shape.match(worker_id)]
        if other:
            raise NotAllowed(
                "foreign_worker",
                f"{worker_name} is a {CrowdStudy.Platform(other[0]).label} worker id; this is a "
                f"{CrowdStudy.Platform(platform).label} study. Open it from {CrowdStudy.Platform(platform).label}.",
                field=worker_name,
            )
        raise RuleError("bad_parameter", f"{worker_name} is not a {CrowdStudy.Platform(platform).label} worker id.", field=worker_name)
    return Entry(worker_id=worker_id, session=session, study=study, token=token)


def worker_username(platform: str, worker_id: str) -> str:
    """The pseudonymous username of a platform worker: ``crowd-`` + 16 hex characters of a salted sha256."""
    digest = hashlib.sha256(f"{settings.SECRET_KEY}:{platform}:{worker_id}".encode()).hexdigest()
    return f"crowd-{digest[:16]}"


def address_hash(address: str) -> str:
    """A salted hash of a client address (32 hex characters): what is kept of it."""
    return hashlib.sha256(f"{settings.SECRET_KEY}:address:{address}".encode()).hexdigest()[:32]


def proof_hash(proof: str | None) -> str:
    """sha256 of a browser proof (hex), or ``""`` for none."""
    return hashlib.sha256(proof.encode()).hexdigest() if proof else ""


def _new_worker(platform: str, worker_id: str) -> tuple[CrowdWorker, str]:
    """Create the ``CrowdWorker`` of ``(platform, worker_id)`` and its passwordless account (in the
    sign-up roles) with a fresh browser proof; return it and the proof (the caller sets the
    cookie). Raises ``IntegrityError`` when the same worker's other request created it meanwhile."""
    proof = secrets.token_urlsafe(32)
    user = get_user_model()(username=worker_username(platform, worker_id))
    user.set_unusable_password()
    user.save()
    user.groups.add(*Group.objects.filter(name__in=SIGNUP_ROLES))
    worker = CrowdWorker.objects.create(user=user, platform=platform, platform_worker_id=worker_id, proof_hash=proof_hash(proof))
    return worker, proof


def study_for(round, platform: str, activity: str | None = None, *, token: str = "", user=None) -> CrowdStudy:
    """The study of ``round`` on ``platform`` for ``activity`` (``write`` or ``validate``), active or
    ended; ``RuleError`` (``no_study``, 404) when there is none.

    Without ``activity`` (a link made when a round had one study per platform): the round's only
    study on that platform; with several, the one whose entry token is ``token`` (the entry URL's),
    else the one ``user`` has a session in; else ``no_study`` asking for the study's own link."""
    studies = CrowdStudy.objects.select_related("round__task").filter(round=round, platform=platform)
    if activity is not None:
        study = studies.filter(activity=activity).first()
        if study is None:
            raise RuleError("no_study", f"There is no {platform} study for {round} in which to "
                            f"{CrowdStudy.Activity(activity).label.lower() if activity in CrowdStudy.Activity.values else activity}.",
                            status_code=404)
        return study
    candidates = list(studies)
    if len(candidates) == 1:
        return candidates[0]
    for study in candidates:
        if token and hmac.compare_digest(token.encode(), study.entry_token.encode()):
            return study
    if user is not None and user.is_authenticated:
        mine = [s for s in candidates if s.sessions.filter(worker__user=user).exists()]
        if len(mine) == 1:
            return mine[0]
    if not candidates:
        raise RuleError("no_study", f"There is no {platform} study for {round}.", status_code=404)
    raise RuleError("no_study", f"{round} has several {CrowdStudy.Platform(platform).label} studies: open yours from the "
                    "link your study platform gives you.", status_code=404)


def is_open(study: CrowdStudy) -> bool:
    """True while ``study`` takes workers: active, not ended, on an open round."""
    return study.active and study.ended_at is None and study.round.status == Round.Status.OPEN


def require_open(study: CrowdStudy) -> None:
    """Raise ``RuleError`` (``study_ended``, 410) unless ``study`` takes workers (``is_open``)."""
    if not is_open(study):
        raise RuleError(
            "study_ended",
            f"This study has ended: {study.round} is closed and takes no more work. Thank you. "
            "If you started it, return it on your study platform; nothing more is needed here.",
            status_code=410,
        )


def check_entry(*, study: CrowdStudy, entry: Entry) -> None:
    """Steps 1-4 of the module's list: the study is open, the token and the platform's study id are
    the study's, the worker id is not bound to another platform. Raises ``RuleError``; stores nothing."""
    require_open(study)
    if not entry.token or not hmac.compare_digest(entry.token.encode(), study.entry_token.encode()):
        raise NotAllowed(
            "bad_token",
            "This study link is missing its token or has a wrong one. Open the study from "
            f"{study.get_platform_display()} again; if that fails, message the researcher.",
            field=TOKEN_PARAMETER,
        )
    study_name = PARAMETERS[study.platform][2]
    if not study.platform_study_id:
        raise RuleError("study_not_ready", f"The researcher has not finished setting up this study ({study_name} unset); "
                        "try again later.", status_code=409)
    if not hmac.compare_digest(entry.study.encode(), study.platform_study_id.encode()):
        raise NotAllowed("wrong_study", f"This link belongs to another study ({study_name} does not match). "
                         f"Open the study from {study.get_platform_display()} again.", field=study_name)
    if entry.preview:
        return
    if CrowdWorker.objects.filter(platform_worker_id=entry.worker_id).exclude(platform=study.platform).exists():
        raise NotAllowed("foreign_worker", f"This worker id belongs to an account of another platform; open the study from "
                         f"{study.get_platform_display()} with your own {study.get_platform_display()} id.")


def throttle_entry(*, study: CrowdStudy, address: str) -> None:
    """Count one entry from ``address`` and one for ``study``; raise ``RuleError`` (``throttled``,
    429, with ``retry_after`` seconds) past ``CROWD_ENTRIES_PER_ADDRESS_PER_HOUR`` (0: no limit)
    or ``CROWD_ENTRIES_PER_STUDY_PER_MINUTE`` (0: no limit). Counted in the cache
    (``dynabench.ratelimits``), so the limit holds across web processes."""
    per_address = settings.CROWD_ENTRIES_PER_ADDRESS_PER_HOUR
    if per_address > 0:
        count, wait = count_hit(f"crowd-entry:address:{address_hash(address)}", window_s=3600)
        if count > per_address:
            raise _throttled(f"Too many study entries from your network: {per_address} an hour at most. "
                             f"Try again in {max(1, -(-wait // 60))} minutes.", wait)
    per_study = settings.CROWD_ENTRIES_PER_STUDY_PER_MINUTE
    if per_study > 0:
        # Keyed by the study's token too: a new link starts a new count, and two databases that
        # share one cache (test workers) never count into each other's study of the same id.
        count, wait = count_hit(f"crowd-entry:study:{study.pk}:{hashlib.sha256(study.entry_token.encode()).hexdigest()[:12]}", window_s=60)
        if count > per_study:
            raise _throttled(f"Many workers are arriving at once; try again in {wait} seconds.", wait)


def _throttled(message: str, wait: int) -> RuleError:
    error = RuleError("throttled", message, status_code=429)
    error.retry_after = wait
    return error


@dataclass
class Entered:
    """What ``enter`` did: the worker's ``session``; ``proof``: a new browser proof to set as the
    ``PROOF_COOKIE`` (None when the browser keeps its own); ``created``: a new session."""

    session: CrowdSession
    proof: str | None = None
    created: bool = False


def enter(*, study: CrowdStudy, entry: Entry, address: str = "", proof: str | None = None, lookup: bool = True) -> Entered:
    """Create or resume the session of ``entry``'s worker in ``study`` (one per worker and study),
    after the checks of the module's list; return ``Entered``.

    ``address``: the client's address (``dynabench.proxies.client_ip``), throttled and kept as a
    salted hash; ``proof``: the browser's proof cookie, if any; ``lookup``: ask the platform's API
    when the study has an API token. A worker who already finished gets their finished session
    back (``completed_at`` set): the caller shows that, never a second code.

    Raises ``RuleError``/``NotAllowed`` with the codes of the module's list; nothing is stored then.
    """
    check_entry(study=study, entry=entry)
    if entry.preview:
        raise RuleError("preview", "Accept the HIT before starting the work.", status_code=400)
    throttle_entry(study=study, address=address)
    verified = False
    if lookup and study.api_token:
        crowd_lookup.confirm(study=study, entry=entry)
        verified = True
    with transaction.atomic():
        # One entry at a time per study: the cap and the session ids are checked under this lock.
        CrowdStudy.objects.select_for_update().filter(pk=study.pk).first()
        worker = CrowdWorker.objects.select_related("user").filter(platform=study.platform, platform_worker_id=entry.worker_id).first()
        session = None if worker is None else CrowdSession.objects.filter(study=study, worker=worker).select_related("worker__user", "study").first()
        if session is not None:
            same_session = hmac.compare_digest(session.platform_session.encode(), entry.session.encode())
            same_browser = bool(proof) and hmac.compare_digest(proof_hash(proof), worker.proof_hash)
            if not (same_session or same_browser or verified):
                raise NotAllowed(
                    "not_this_browser",
                    "This worker id already started this study in another session. Continue in the browser and "
                    f"{study.get_platform_display()} session you started with; if that is you and it fails, message the researcher.",
                )
            return Entered(session=session)
        taken = CrowdSession.objects.filter(study=study, platform_session=entry.session).exists()
        if taken:
            raise NotAllowed("session_taken", f"This {PARAMETERS[study.platform][1]} already belongs to another worker of this study.")
        if worker is not None and not verified and not (proof and hmac.compare_digest(proof_hash(proof), worker.proof_hash)):
            raise NotAllowed(
                "not_this_browser",
                "An account for this worker id exists and was made in another browser. Open the study in the browser "
                "you used before; if you cannot, message the researcher.",
            )
        if CrowdSession.objects.filter(study=study).count() >= study.participant_cap:
            raise RuleError("study_full", f"This study is full: {study.participant_cap} workers have started it. "
                            "Return it on your study platform; thank you.", status_code=409)
        new_proof = None
        if worker is None:
            try:
                with transaction.atomic():
                    worker, new_proof = _new_worker(study.platform, entry.worker_id)
            except IntegrityError:  # the same worker's other request created it meanwhile: not this browser's
                raise NotAllowed("not_this_browser", "Another browser entered with this worker id at the same moment; "
                                 "open the study in one browser only.") from None
        elif verified:
            new_proof = secrets.token_urlsafe(32)
            CrowdWorker.objects.filter(pk=worker.pk).update(proof_hash=proof_hash(new_proof))
        try:
            with transaction.atomic():
                session = CrowdSession.objects.create(
                    study=study, worker=worker, platform_session=entry.session, platform_study=entry.study,
                    address_hash=address_hash(address), verified=verified,
                )
        except IntegrityError:
            raise NotAllowed("session_taken", "This session already belongs to a worker of this study.") from None
    session.worker = worker
    return Entered(session=session, proof=new_proof, created=True)


def entry_url(study: CrowdStudy, *, base_url: str) -> str:
    """The study URL the owner pastes into the platform (``base_url``: the site's scheme and host).

    Prolific: its placeholders ``{{%PROLIFIC_PID%}}``, ``{{%STUDY_ID%}}`` and ``{{%SESSION_ID%}}``,
    which Prolific fills in per participant, and the study's token. MTurk (an ExternalQuestion
    URL): the token only; MTurk appends ``assignmentId``, ``hitId`` and ``workerId`` itself.
    """
    from urllib.parse import quote

    path = f"{base_url.rstrip('/')}/crowd/{study.round.task.code}/r{study.round.number}/{study.platform}/{study.activity}/"
    token = f"{TOKEN_PARAMETER}={quote(study.entry_token, safe='')}"
    if study.platform == CrowdStudy.Platform.PROLIFIC:
        return f"{path}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}&SESSION_ID={{{{%SESSION_ID%}}}}&{token}"
    return f"{path}?{token}"


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


def standing_progress(session: CrowdSession) -> int:
    """The work of ``session`` that still stands: for a writing study, the worker's examples in the
    round since the session started that are not retracted (at most ``progress``); for a
    validating study, ``progress`` (a validation cannot be taken back)."""
    if session.study.activity != CrowdStudy.Activity.WRITE:
        return session.progress
    written = Example.objects.filter(
        author_id=session.worker.user_id, round_id=session.study.round_id, retracted=False, created_at__gte=session.started_at,
    ).count()
    return min(session.progress, written)


def complete(*, session: CrowdSession) -> CrowdSession:
    """Finish ``session`` and record its completion code, once.

    Raises ``RuleError``: ``not_done`` (409) while the work that still stands
    (``standing_progress``: retracted examples do not count) is below ``study.required``;
    ``already_completed`` (409) when the session was finished before (no second code).
    """
    with transaction.atomic():
        session = CrowdSession.objects.select_for_update().select_related("study", "worker").get(pk=session.pk)
        if session.completed_at is not None:
            raise RuleError("already_completed", f"You already finished this study on {session.completed_at:%Y-%m-%d %H:%M} UTC; "
                            "your completion was recorded.", status_code=409)
        done = standing_progress(session)
        if done < session.study.required:
            raise RuleError("not_done", f"Finish your work first: {done} of {session.study.required} done"
                            f"{' (retracted examples do not count)' if done < session.progress else ''}.", status_code=409)
        session.completed_at = timezone.now()
        session.completion_code = session.study.completion_code
        session.save(update_fields=["completed_at", "completion_code"])
        transaction.on_commit(lambda: crowd_study_completed.send(sender=CrowdSession, session_id=session.pk,
                                                                 user_id=session.worker.user_id))
    return session


def exit_link(session: CrowdSession) -> dict:
    """Where a finished worker goes back to: Prolific's completion URL with the code, or MTurk's
    submit form (``action`` and the ``assignmentId`` field)."""
    study = session.study
    if study.platform == CrowdStudy.Platform.MTURK:
        return {"form_action": MTURK_SANDBOX_SUBMIT_URL if study.mturk_sandbox else MTURK_SUBMIT_URL,
                "assignment_id": session.platform_session}
    return {"url": f"{PROLIFIC_COMPLETE_URL}?cc={session.completion_code}", "code": session.completion_code}
