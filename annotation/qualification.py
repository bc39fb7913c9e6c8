"""A task's onboarding and qualification: instructions, a quiz of gold examples, attempts.

``require_qualified`` is the gate that ``annotation.services.create_example`` and
``validation.services.record_validation`` call; ``submit_attempt`` scores a quiz on the server
(the gold answers never leave it) and grants the task's roles on a pass
(``tasks.access.grant_by_qualification``). The pages (``annotation/htmx_views.py``) and the admin call
these functions.
"""

from dataclasses import dataclass

from django.db import IntegrityError, transaction

from annotation.models import Qualification, QuizAttempt, QuizItem
from dynabench import hotsql
from dynabench.errors import NotAllowed, RuleError
from tasks import access
from tasks.models import TaskRole

MAX_KEY = 64


def active_qualification(task) -> Qualification | None:
    """The task's qualification while it is active and has quiz items, else None."""
    return Qualification.objects.filter(task=task, active=True, items__isnull=False).distinct().first()


def has_passed(*, user, qualification: Qualification) -> bool:
    """True when ``user`` has a passed attempt at ``qualification``."""
    return QuizAttempt.objects.filter(qualification=qualification, user=user, passed=True).exists()


def _passed_sql() -> str:
    """Per active qualification of a task that has quiz items (the first by id): has the user passed it."""
    q, a, i = Qualification, QuizAttempt, QuizItem
    return (
        f"SELECT EXISTS(SELECT 1 FROM {hotsql.table(a)} WHERE {hotsql.qualified(a, 'qualification')} = "
        f"{hotsql.qualified(q, 'id')} AND {hotsql.qualified(a, 'user')} = %s "
        f"AND {hotsql.qualified(a, 'passed')}) "
        f"FROM {hotsql.table(q)} WHERE {hotsql.qualified(q, 'task')} = %s AND {hotsql.qualified(q, 'active')} "
        f"AND EXISTS(SELECT 1 FROM {hotsql.table(i)} WHERE {hotsql.qualified(i, 'qualification')} = "
        f"{hotsql.qualified(q, 'id')}) ORDER BY {hotsql.qualified(q, 'id')}"
    )


def is_qualified(*, user, task) -> bool:
    """True when ``user`` may write and validate on ``task`` as far as onboarding goes: the task
    has no active qualification, or ``user`` passed it, or owns the task. One statement
    (``_passed_sql``, built once: it runs on every example and verdict) unless the user has not
    passed an active qualification (then ``Task.is_owner`` decides)."""
    row = hotsql.fetch_one(hotsql.statement("annotation.qualification.passed", _passed_sql), [user.pk, task.pk])
    return row is None or bool(row[0]) or task.is_owner(user)


def require_qualified(*, user, task) -> None:
    """Raise ``NotAllowed`` (``not_qualified``, 403) unless ``is_qualified``; the message says where to go."""
    if not is_qualified(user=user, task=task):
        raise NotAllowed(
            "not_qualified",
            f"Read the instructions of {task.name} and pass its qualification quiz first (/tasks/{task.code}/qualification/).",
        )


@dataclass(frozen=True)
class QualificationStatus:
    """Where ``user`` stands: ``attempts`` used, ``left`` (attempts remaining), ``passed``,
    ``last`` (the latest attempt or None)."""

    qualification: Qualification
    attempts: int
    left: int
    passed: bool
    last: QuizAttempt | None


def status(*, user, qualification: Qualification) -> QualificationStatus:
    """Return ``user``'s ``QualificationStatus`` for ``qualification`` (one query)."""
    attempts = list(QuizAttempt.objects.filter(qualification=qualification, user=user).order_by("id"))
    return QualificationStatus(
        qualification=qualification,
        attempts=len(attempts),
        left=max(0, qualification.max_attempts - len(attempts)),
        passed=any(a.passed for a in attempts),
        last=attempts[-1] if attempts else None,
    )


def quiz_items(qualification: Qualification) -> list[QuizItem]:
    """The quiz items in order (their ``answer`` is for the server only: templates show ``input``)."""
    return list(qualification.items.order_by("position", "id"))


def clean_quiz_answer(task, item: QuizItem, raw) -> dict:
    """Return a worker's answer to ``item`` in the task's target shape (``task.spec.clean_target``
    against the item's input), or raise ``RuleError`` naming ``item-<id>``."""
    try:
        return task.spec.clean_target(task.config, item.input, raw)
    except RuleError as exc:
        raise RuleError(exc.code, f"Question {item.position or item.pk}: {exc.message}", field=f"item-{item.pk}") from None


def submit_attempt(*, user, qualification: Qualification, answers: dict, key: str, read_instructions: bool) -> QuizAttempt:
    """Score ``user``'s ``answers`` (``{item id: raw target}``, e.g. ``{"label": "negative"}`` or
    ``{"answers": [{"text", "answer_start"}]}``) and record the attempt; on a pass, grant the
    task's annotator role (and validator, with ``grants_validator``).

    A worker passes when ``right / total >= pass_mark``; right per item is the task kind's
    ``answer_matches`` against the gold answer. ``key``: the one-time key of the form; the same
    key again returns the attempt already recorded (a double submit counts once).

    Raises ``RuleError``: instructions not confirmed (``instructions_unread``), an item left
    unanswered or with an answer the task does not take, a bad key; ``NotAllowed``: no attempts
    left (``no_attempts_left``) or already passed (``already_passed``). Nothing is stored then.
    """
    task = qualification.task
    key = str(key or "").strip()
    if not key or len(key) > MAX_KEY:
        raise RuleError("bad_form_key", "The quiz form is missing its key; reload the page.", field="key")
    with transaction.atomic():
        # One attempt at a time per worker: lock their earlier attempts' qualification row.
        Qualification.objects.select_for_update().filter(pk=qualification.pk).first()
        earlier = QuizAttempt.objects.filter(qualification=qualification, user=user, key=key).first()
        if earlier is not None:
            return earlier
        current = status(user=user, qualification=qualification)
        if current.passed:
            raise NotAllowed("already_passed", f"You already passed the qualification of {task.name}.")
        if current.left <= 0:
            raise NotAllowed(
                "no_attempts_left",
                f"You used all {qualification.max_attempts} attempts at the qualification of {task.name}.",
            )
        if not read_instructions:
            raise RuleError("instructions_unread", "Confirm that you read the instructions.", field="read_instructions")
        items = quiz_items(qualification)
        if not isinstance(answers, dict):
            raise RuleError("bad_answers", "Answers must map each question to an answer.", field="answers")
        cleaned, right = {}, 0
        for item in items:
            raw = answers.get(item.pk, answers.get(str(item.pk)))
            answer = clean_quiz_answer(task, item, raw)
            cleaned[str(item.pk)] = answer
            right += bool(task.spec.answer_matches(task.config, item.answer, answer))
        passed = right / len(items) >= qualification.pass_mark
        try:
            with transaction.atomic():
                attempt = QuizAttempt.objects.create(
                    qualification=qualification, user=user, key=key, answers=cleaned,
                    right=right, total=len(items), passed=passed,
                )
        except IntegrityError:
            return QuizAttempt.objects.get(qualification=qualification, user=user, key=key)
        if passed:
            access.grant_by_qualification(task=task, user=user, role=TaskRole.Role.ANNOTATOR)
            if qualification.grants_validator:
                access.grant_by_qualification(task=task, user=user, role=TaskRole.Role.VALIDATOR)
    return attempt
