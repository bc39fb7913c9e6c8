"""What a task owner sets up for paid crowd work: studies on Prolific and MTurk, and the
qualification quiz with its pool. Every surface (the console's crowd pages, the admin, tests)
calls these functions; each checks that the acting user owns the task.

- ``save_study``: create or edit a study; only on an open round.
- ``new_token``: give a study a fresh entry token (the old URL stops working).
- ``end_studies``: end a round's studies when it closes (``validation.round_close.close_round``);
  workers then get a page saying the study ended (``crowd.require_open``).
- ``platform_settings``: what to paste into the platform (the entry URL, the completion code or
  the MTurk ExternalQuestion).
- ``save_qualification``, ``add_quiz_item``, ``remove_quiz_item``: the quiz and its pool.
"""

import re
from xml.sax.saxutils import escape

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation import crowd
from annotation.models import CrowdStudy, Qualification, QuizItem, new_entry_token
from dynabench.errors import FieldErrors, NotAllowed, RuleError
from tasks.models import Round

_PLATFORM_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_REQUIRED = 1000
MAX_CAP = 100000


def _require_owner(task, acting_user, what: str) -> None:
    if not task.is_owner(acting_user):
        raise NotAllowed("not_owner", f"Only an owner of task '{task.code}' can {what}.")


def _int(errors: dict, name: str, value, *, low: int, high: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        errors.setdefault(name, []).append(f"A whole number from {low} to {high}.")
        return low
    if not low <= number <= high:
        errors.setdefault(name, []).append(f"A whole number from {low} to {high}.")
    return number


def save_study(
    *, round: Round, acting_user, platform: str, activity: str = CrowdStudy.Activity.WRITE, required: int = 5,
    completion_code: str = "", platform_study_id: str = "", participant_cap: int = 100, mturk_sandbox: bool = False,
    api_token: str | None = None, active: bool = True, study: CrowdStudy | None = None,
) -> CrowdStudy:
    """Create a study of ``platform`` on ``round`` (``study`` None) or edit ``study``; return it.

    ``api_token``: None keeps the stored token, ``""`` removes it, text replaces it (never shown
    back). A Prolific study needs its completion code. Raises ``NotAllowed`` unless
    ``acting_user`` owns the task; ``RuleError`` ``round_closed`` (409) unless ``round`` is
    open, ``study_exists`` (409) for a second study of one platform and kind of work (``activity``)
    on one round;
    ``FieldErrors`` naming each bad field.
    """
    task = round.task
    _require_owner(task, acting_user, "set up its crowd studies")
    if round.status != Round.Status.OPEN:
        raise RuleError(
            "round_closed",
            f"Round {round.number} of {task.name} is closed: a study can only run on an open round, or workers would get an "
            "account and a study they can never finish. Open the next round first.",
            field="round", status_code=409,
        )
    errors: dict[str, list[str]] = {}
    if platform not in CrowdStudy.Platform.values:
        errors["platform"] = ["Choose Prolific or Mechanical Turk."]
    if activity not in CrowdStudy.Activity.values:
        errors["activity"] = ["Choose writing or validating."]
    required = _int(errors, "required", required, low=1, high=MAX_REQUIRED)
    participant_cap = _int(errors, "participant_cap", participant_cap, low=1, high=MAX_CAP)
    platform_study_id = str(platform_study_id or "").strip()
    if platform_study_id and not _PLATFORM_ID.match(platform_study_id):
        errors["platform_study_id"] = ["1 to 64 letters, digits, '_' or '-', as the platform shows it."]
    completion_code = str(completion_code or "").strip()
    if completion_code and not _PLATFORM_ID.match(completion_code):
        errors["completion_code"] = ["1 to 64 letters, digits, '_' or '-', as Prolific shows it."]
    if platform == CrowdStudy.Platform.PROLIFIC and not completion_code:
        errors["completion_code"] = ["Prolific's completion code, from the study's 'Study completion' section."]
    if api_token is not None and len(api_token.strip()) > 255:
        errors["api_token"] = ["At most 255 characters."]
    if platform == CrowdStudy.Platform.MTURK and api_token and ":" not in api_token:
        errors["api_token"] = ["For MTurk: ACCESS_KEY_ID:SECRET_ACCESS_KEY of an IAM user allowed mturk:GetAssignment."]
    if errors:
        raise FieldErrors("bad_study", errors)
    fields = {
        "activity": activity, "required": required, "completion_code": completion_code,
        "platform_study_id": platform_study_id, "participant_cap": participant_cap, "mturk_sandbox": bool(mturk_sandbox),
        "active": bool(active),
    }
    if api_token is not None:
        fields["api_token"] = api_token.strip()
    if study is None:
        try:
            with transaction.atomic():
                return CrowdStudy.objects.create(round=round, platform=platform, **fields)
        except IntegrityError:
            raise _study_exists(round, platform, activity) from None
    if study.round_id != round.pk or study.platform != platform:
        raise RuleError("bad_study", "A study stays on its round and platform; create another study instead.", field="platform")
    for name, value in fields.items():
        setattr(study, name, value)
    try:
        with transaction.atomic():
            study.save()
    except IntegrityError:
        raise _study_exists(round, platform, activity) from None
    return study


def _study_exists(round: Round, platform: str, activity: str) -> RuleError:
    """The refusal of a second study of one platform and kind of work on ``round`` (409)."""
    what = CrowdStudy.Activity(activity).label.lower()
    return RuleError("study_exists", f"Round {round.number} already has a {CrowdStudy.Platform(platform).label} study to "
                     f"{what}; edit that one. A round takes one study per platform for each kind of work "
                     "(writing examples, validating them).", field="activity", status_code=409)


def new_token(*, study: CrowdStudy, acting_user) -> CrowdStudy:
    """Give ``study`` a fresh entry token: links with the old one are refused from now on (paste the
    new URL into the platform). Raises ``NotAllowed`` unless ``acting_user`` owns the task."""
    _require_owner(study.round.task, acting_user, "change its study links")
    study.entry_token = new_entry_token()
    study.save(update_fields=["entry_token"])
    return study


def end_studies(round: Round) -> int:
    """End every study of ``round`` (its round closed): no new worker enters, and workers who come
    back are told the study ended (``crowd.require_open``). Returns how many were ended."""
    return CrowdStudy.objects.filter(round=round, ended_at__isnull=True).update(active=False, ended_at=timezone.now())


def platform_settings(study: CrowdStudy, *, base_url: str) -> dict:
    """What the owner pastes into the platform: ``url`` (the entry URL, ``crowd.entry_url``),
    ``steps`` (ordered instructions, text) and, for MTurk, ``external_question`` (the
    ExternalQuestion XML of the HIT)."""
    url = crowd.entry_url(study, base_url=base_url)
    if study.platform == CrowdStudy.Platform.MTURK:
        xml = (
            '<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd">\n'
            f"  <ExternalURL>{escape(url)}</ExternalURL>\n  <FrameHeight>0</FrameHeight>\n</ExternalQuestion>"
        )
        steps = [
            "Create the HIT with this ExternalQuestion as its Question (MTurk adds workerId, assignmentId and hitId to the URL).",
            "Copy the new HIT's id into 'Platform study id' here and save: entries with another hitId are refused.",
            f"Set the HIT's maximum assignments to at most the participant cap ({study.participant_cap}).",
        ]
        return {"url": url, "steps": steps, "external_question": xml}
    steps = [
        "In the Prolific study's 'Study link', paste this URL and choose 'I'll use URL parameters' (it already carries them).",
        "Copy the study's id (the STUDY_ID in the address of its Prolific page) into 'Platform study id' here and save.",
        f"Under 'Study completion', choose 'Redirect' with completion code {study.completion_code}.",
        f"Set the number of places to at most the participant cap ({study.participant_cap}).",
    ]
    return {"url": url, "steps": steps}


# --- the qualification quiz -------------------------------------------------------------------


def save_qualification(
    *, task, acting_user, instructions: str, pass_mark: float, questions_per_attempt: int, max_attempts: int,
    cooloff_minutes: int, attempts_per_hour: int, retire_after_passes: int, grants_validator: bool = True, active: bool = True,
) -> Qualification:
    """Create or edit ``task``'s qualification; return it. Raises ``NotAllowed`` unless
    ``acting_user`` owns the task; ``FieldErrors`` naming each bad field (pass mark from 0 to 1,
    whole numbers in range, instructions required)."""
    _require_owner(task, acting_user, "set its qualification quiz")
    errors: dict[str, list[str]] = {}
    instructions = str(instructions or "").strip()
    if not instructions:
        errors["instructions"] = ["Write the instructions workers read before the quiz."]
    try:
        pass_mark = float(pass_mark)
    except (TypeError, ValueError):
        pass_mark = -1.0
    if not 0 < pass_mark <= 1:
        errors["pass_mark"] = ["The share of questions right needed to pass, above 0 and at most 1 (0.8 is 80%)."]
    values = {
        "questions_per_attempt": _int(errors, "questions_per_attempt", questions_per_attempt, low=1, high=100),
        "max_attempts": _int(errors, "max_attempts", max_attempts, low=1, high=20),
        "cooloff_minutes": _int(errors, "cooloff_minutes", cooloff_minutes, low=0, high=7 * 24 * 60),
        "attempts_per_hour": _int(errors, "attempts_per_hour", attempts_per_hour, low=0, high=100000),
        "retire_after_passes": _int(errors, "retire_after_passes", retire_after_passes, low=0, high=1000),
    }
    if errors:
        raise FieldErrors("bad_qualification", errors)
    found, _ = Qualification.objects.update_or_create(task=task, defaults={
        "instructions": instructions, "pass_mark": pass_mark, "grants_validator": bool(grants_validator),
        "active": bool(active), **values,
    })
    return found


def add_quiz_item(*, qualification: Qualification, acting_user, input: dict, values: dict) -> QuizItem:
    """Add a question to the pool: ``input`` (the fields shown, e.g. ``{"text"}``), ``values`` (the
    kind's answer fields as a form gives them, ``task.spec.quiz_form_fields``), turned into the
    gold answer by ``task.spec.quiz_target`` and checked by the kind (``QuizItem.clean``).
    Raises ``NotAllowed`` unless ``acting_user`` owns the task; ``FieldErrors`` for an empty
    shown field or an answer the task does not take."""
    task = qualification.task
    _require_owner(task, acting_user, "write its quiz")
    names = [f["name"] for f in [*task.config.get("context_fields", []), *task.config["input_fields"]]]
    shown = {name: str(input.get(name) or "").strip() for name in names}
    errors = {f"input_{name}": ["Fill in what the worker reads."] for name, text in shown.items() if not text and name in
              {f["name"] for f in task.config["input_fields"]}}
    if errors:
        raise FieldErrors("bad_quiz_item", errors)
    shown = {k: v for k, v in shown.items() if v}
    try:
        answer = task.spec.quiz_target(task.config, shown, values)
    except RuleError as exc:
        raise FieldErrors("bad_quiz_item", {exc.field or "answer": [exc.message]}) from None
    position = (qualification.items.order_by("-position").values_list("position", flat=True).first() or 0) + 1
    item = QuizItem(qualification=qualification, position=position, input=shown, answer=answer)
    try:
        item.full_clean(exclude=["qualification"])
    except ValidationError as exc:
        raise FieldErrors("bad_quiz_item", {k: list(v) for k, v in exc.message_dict.items()}) from None
    item.save()
    return item


def remove_quiz_item(*, item: QuizItem, acting_user) -> None:
    """Take a question out of the pool (attempts already scored keep their score). Raises
    ``NotAllowed`` unless ``acting_user`` owns the task."""
    _require_owner(item.qualification.task, acting_user, "write its quiz")
    item.delete()
