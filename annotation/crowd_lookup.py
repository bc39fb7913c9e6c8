"""The platforms' own record of a study entry, asked when the owner gave the study an API token.

Prolific (its API reference, "Retrieve a submission"): ``GET {PROLIFIC_API_URL}/api/v1/submissions/{SESSION_ID}/``
with the header ``Authorization: Token <token>`` answers the submission, whose ``participant``
(the participant id) and ``study_id`` must be the entry's ``PROLIFIC_PID`` and ``STUDY_ID``.

Mechanical Turk (its API reference, ``GetAssignment``): the assignment's ``WorkerId`` and
``HITId`` must be the entry's ``workerId`` and ``hitId``. The study's API token is then
``<AWS access key id>:<secret access key>``; the request is signed by boto3 and sent to
``MTURK_API_URL`` (the sandbox's with ``mturk_sandbox``).

Both base URLs are settings, so tests run against a local stand-in server that answers like
the documented endpoints.
"""

import requests
from django.conf import settings

from dynabench.errors import NotAllowed, RuleError

TIMEOUT_S = 10


def _unavailable(platform: str) -> RuleError:
    return RuleError(
        "lookup_failed", f"{platform} could not confirm your entry just now; try the study link again in a minute.",
        status_code=503,
    )


def prolific_submission(*, token: str, session_id: str) -> dict:
    """Return ``{"participant", "study_id"}`` of Prolific submission ``session_id``.

    Raises ``NotAllowed`` (``lookup_mismatch``) when Prolific has no such submission (404);
    ``RuleError`` (``lookup_failed``, 503) when it cannot be reached or answers otherwise.
    """
    url = f"{settings.PROLIFIC_API_URL.rstrip('/')}/api/v1/submissions/{session_id}/"
    try:
        response = requests.get(url, headers={"Authorization": f"Token {token}"}, timeout=TIMEOUT_S)
    except requests.RequestException:
        raise _unavailable("Prolific") from None
    if response.status_code == 404:
        raise NotAllowed("lookup_mismatch", "Prolific has no record of this session: open the study from Prolific.")
    if response.status_code != 200:
        raise _unavailable("Prolific")
    try:
        body = response.json()
    except ValueError:
        raise _unavailable("Prolific") from None
    if not isinstance(body, dict):
        raise _unavailable("Prolific")
    participant = body.get("participant", body.get("participant_id"))
    return {"participant": str(participant or ""), "study_id": str(body.get("study_id") or "")}


def mturk_assignment(*, token: str, assignment_id: str, sandbox: bool) -> dict:
    """Return ``{"participant", "study_id"}`` (the ``WorkerId`` and ``HITId``) of MTurk assignment
    ``assignment_id``, asked with ``GetAssignment``. ``token``: ``<access key id>:<secret>``.

    Raises ``NotAllowed`` (``lookup_mismatch``) when MTurk does not know the assignment;
    ``RuleError`` (``lookup_failed``, 503) when it cannot be reached.
    """
    import boto3
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError

    key_id, _, secret = token.partition(":")
    url = settings.MTURK_SANDBOX_API_URL if sandbox else settings.MTURK_API_URL
    client = boto3.client(
        "mturk", region_name="us-east-1", endpoint_url=url, aws_access_key_id=key_id, aws_secret_access_key=secret,
        config=Config(retries={"max_attempts": 1}, connect_timeout=TIMEOUT_S, read_timeout=TIMEOUT_S),
    )
    try:
        answer = client.get_assignment(AssignmentId=assignment_id)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("RequestError", "ResourceNotFoundException"):
            raise NotAllowed("lookup_mismatch", "MTurk has no record of this assignment: accept the HIT on MTurk.") from None
        raise _unavailable("MTurk") from None
    except BotoCoreError:
        raise _unavailable("MTurk") from None
    assignment = answer.get("Assignment") or {}
    return {"participant": str(assignment.get("WorkerId") or ""), "study_id": str(assignment.get("HITId") or "")}


def confirm(*, study, entry) -> None:
    """Ask ``study``'s platform about ``entry`` with the study's API token; return when the platform's
    record names the entry's worker and study. Raises ``NotAllowed`` (``lookup_mismatch``, 403)
    otherwise, ``RuleError`` (``lookup_failed``, 503) when the platform cannot be asked."""
    if study.platform == "mturk":
        record = mturk_assignment(token=study.api_token, assignment_id=entry.session, sandbox=study.mturk_sandbox)
        platform = "MTurk"
    else:
        record = prolific_submission(token=study.api_token, session_id=entry.session)
        platform = "Prolific"
    if record["participant"] != entry.worker_id or record["study_id"] != study.platform_study_id:
        raise NotAllowed(
            "lookup_mismatch",
            f"{platform}'s record of this session names another worker or study: open the study from {platform} yourself.",
        )
