"""A task's onboarding and qualification: instructions, a quiz of gold examples, attempts.

``require_qualified`` is the gate that ``annotation.services.create_example`` and
``validation.services.record_validation`` call; ``open_attempt`` draws an attempt's questions
from the owner's pool; ``submit_attempt`` scores it on the server (the gold answers never leave
it) and grants the task's roles on a pass (``tasks.access.grant_by_qualification``).

The quiz measures, it does not teach: the worker learns pass or fail only (never a score or
which answers were wrong), each attempt draws new questions, attempts are limited per worker
(``max_attempts``, a cool-off after a failure) and for everyone together per hour
(``attempts_per_hour``), and every attempt is recorded for the owner (``repeated_failures``).
``pool_report`` says when the pool is too small to be safe. The pages (``annotation/htmx_views.py``) and the admin call
these functions.
"""

import math
import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import Count, F, Max, Q
from django.utils import timezone

from annotation.models import Qualification, QuizAttempt, QuizItem
from dynabench import hotsql
from dynabench.errors import NotAllowed, RuleError
from dynabench.ratelimits import count_hit
from dynabench.roles import has_role
from tasks import access
from tasks.models import TaskRole

MAX_KEY = 64
_RANDOM = secrets.SystemRandom()


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


@dataclass(frozen=True)
class WritingStanding:
    """What ``user`` may do on ``task`` when they cannot write examples: ``refusal`` says why (empty:
    they may write, or may earn the annotator role by passing the task's quiz), ``may_validate`` (the
    validator role) and ``may_submit`` (the researcher role: models on the leaderboard)."""

    refusal: str = ""
    may_validate: bool = False
    may_submit: bool = False


def writing_standing(*, user, task) -> WritingStanding:
    """Whether ``user`` (signed in) may write examples of ``task``, asked before any typing: with the
    annotator role (``tasks.access.has_task_role``), or on the way to it through the task's active
    quiz (a pass grants it), they may; a banned user, or one without the role and without a quiz to
    take, gets the reason and what their roles allow instead. Two or three statements."""
    banned = access.is_banned(user, task)
    if not banned and (access.has_task_role(user, task, TaskRole.Role.ANNOTATOR) or not is_qualified(user=user, task=task)):
        return WritingStanding()
    if banned:
        refusal = f"You are banned from {task.name}; ask one of its owners if you think this is a mistake."
    else:
        refusal = (f"Writing examples of {task.name} needs the annotator role, which your account does not have; "
                   f"ask an owner of {task.name} for it.")
    return WritingStanding(refusal=refusal, may_validate=access.has_task_role(user, task, TaskRole.Role.VALIDATOR),
                           may_submit=has_role(user, "researcher"))


def require_qualified(*, user, task) -> None:
    """Raise ``NotAllowed`` (``not_qualified``, 403) unless ``is_qualified``; the message says where to go."""
    if not is_qualified(user=user, task=task):
        raise NotAllowed(
            "not_qualified",
            f"Read the instructions of {task.name} and pass its qualification quiz first (/tasks/{task.code}/qualification/).",
        )


#: Why questions retire (``Qualification.retire_after_passes``, default 1): a pass tells a
#: script that its answers to that attempt were mostly right; a script with many identities
#: that re-uses them on later attempts passed 9 of 40 attempts (guessing: 1.8) on a pool of
#: 30 before questions retired, and no more than guessing after
#: (``annotation/tests/test_a_scripted_quiz_taker_cannot_beat_guessing.py``).
#: A pool is "safe" when it holds at least this many times the questions of one attempt:
#: two attempts then share about ``per_attempt / POOL_FACTOR`` questions on average
#: (k draws from N overlap in k²/N items), so a worker who fails cannot simply retry the
#: questions they just saw, and sharing one attempt's questions reveals a third of the pool
#: at most.
POOL_FACTOR = 3
#: The highest chance of passing by guessing that the quiz may allow (binomial tail, below).
MAX_GUESS_PASS = 0.05


def guess_pass_probability(*, questions: int, pass_mark: float, choices: int | None) -> float:
    """Return the chance that answering each of ``questions`` questions uniformly at random among
    ``choices`` options passes at ``pass_mark``: the binomial tail
    ``sum_{r >= ceil(pass_mark·questions)} C(q, r) p^r (1-p)^(q-r)`` with ``p = 1/choices``.
    ``choices`` None (free-text answers such as a QA span): 0.0."""
    if not choices or questions <= 0:
        return 0.0
    p = 1.0 / choices
    needed = math.ceil(pass_mark * questions - 1e-9)
    return sum(math.comb(questions, r) * p**r * (1 - p) ** (questions - r) for r in range(max(0, needed), questions + 1))


@dataclass(frozen=True)
class PoolReport:
    """Whether a quiz pool is safe: ``pool`` questions not retired, ``per_attempt`` drawn per attempt,
    ``needed`` (``POOL_FACTOR × per_attempt``), ``guess_pass`` (chance to pass by guessing,
    ``guess_pass_probability``), ``problems`` (what to fix; empty when safe)."""

    pool: int
    per_attempt: int
    needed: int
    guess_pass: float
    problems: tuple[str, ...]

    @property
    def safe(self) -> bool:
        """True when there is nothing to fix."""
        return not self.problems


def pool_report(qualification: Qualification) -> PoolReport:
    """Return the ``PoolReport`` of ``qualification``: unsafe when its pool (the questions not
    retired) holds fewer than ``POOL_FACTOR`` times the questions of an attempt, or when guessing passes more often than
    ``MAX_GUESS_PASS`` (too few questions per attempt or too low a pass mark)."""
    pool = _fresh(qualification).count()
    per_attempt = qualification.questions_per_attempt
    labels = qualification.task.labels
    drawn = min(pool, per_attempt)
    guess = guess_pass_probability(questions=drawn, pass_mark=qualification.pass_mark, choices=len(labels) or None)
    needed = POOL_FACTOR * per_attempt
    problems = []
    if pool < needed:
        problems.append(f"The pool holds {pool} question{'s' if pool != 1 else ''} not yet retired; with {per_attempt} per attempt "
                        f"it needs at least {needed} ({POOL_FACTOR}×), or retries see mostly the same questions"
                        f"{' and retired ones come back' if pool < per_attempt else ''}. Add {needed - pool} more.")
    if guess > MAX_GUESS_PASS:
        problems.append(f"Guessing passes {guess:.0%} of attempts ({drawn} question{'s' if drawn != 1 else ''}, pass mark {qualification.pass_mark:.0%}): "
                        f"ask more questions per attempt or raise the pass mark until it is at most {MAX_GUESS_PASS:.0%}.")
    return PoolReport(pool=pool, per_attempt=per_attempt, needed=needed, guess_pass=guess, problems=tuple(problems))


def repeated_failures(qualification: Qualification, *, at_least: int = 2) -> list[dict]:
    """Workers with at least ``at_least`` failed attempts at ``qualification``, most failures first:
    ``[{"user_id", "username", "failed", "passed", "last"}]`` (for the owner)."""
    rows = (
        QuizAttempt.objects.filter(qualification=qualification, submitted_at__isnull=False)
        .values("user_id", "user__username")
        .annotate(failed=Count("id", filter=Q(passed=False)), passed=Count("id", filter=Q(passed=True)), last=Max("submitted_at"))
        .filter(failed__gte=at_least)
        .order_by("-failed", "user__username")
    )
    return [{"user_id": r["user_id"], "username": r["user__username"], "failed": r["failed"], "passed": r["passed"], "last": r["last"]}
            for r in rows]


@dataclass(frozen=True)
class QualificationStatus:
    """Where ``user`` stands: ``attempts`` submitted, ``left`` (attempts remaining), ``passed``,
    ``last`` (the latest submitted attempt or None), ``wait_until`` (the end of the cool-off
    after a failed attempt, or None)."""

    qualification: Qualification
    attempts: int
    left: int
    passed: bool
    last: QuizAttempt | None
    wait_until: object = None


def status(*, user, qualification: Qualification, now=None) -> QualificationStatus:
    """Return ``user``'s ``QualificationStatus`` for ``qualification`` (one query)."""
    attempts = list(QuizAttempt.objects.filter(qualification=qualification, user=user, submitted_at__isnull=False).order_by("id"))
    last = attempts[-1] if attempts else None
    wait_until = None
    if last is not None and not last.passed and qualification.cooloff_minutes:
        until = last.submitted_at + timedelta(minutes=qualification.cooloff_minutes)
        wait_until = until if until > (now or timezone.now()) else None
    return QualificationStatus(
        qualification=qualification,
        attempts=len(attempts),
        left=max(0, qualification.max_attempts - len(attempts)),
        passed=any(a.passed for a in attempts),
        last=last,
        wait_until=wait_until,
    )


def quiz_items(qualification: Qualification) -> list[QuizItem]:
    """The whole pool in order (their ``answer`` is for the server only: templates show ``input``)."""
    return list(qualification.items.order_by("position", "id"))


def attempt_items(attempt: QuizAttempt) -> list[QuizItem]:
    """The quiz items drawn for ``attempt``, in the order drawn (items deleted since are left out)."""
    by_id = QuizItem.objects.in_bulk(attempt.items)
    return [by_id[i] for i in attempt.items if i in by_id]


def open_attempt(*, user, qualification: Qualification) -> QuizAttempt:
    """Return ``user``'s open attempt at ``qualification`` (shown again on reload, the same
    questions), or open one: ``questions_per_attempt`` items drawn at random from the pool
    (``secrets.SystemRandom``), with a fresh one-time key.

    Raises ``NotAllowed``: ``already_passed``; ``no_attempts_left`` (``max_attempts`` used);
    ``cooling_off`` (429) within ``cooloff_minutes`` of a failed attempt; ``quiz_busy`` (429)
    past ``attempts_per_hour`` attempts by everyone in this clock hour.
    """
    current = QuizAttempt.objects.filter(qualification=qualification, user=user, submitted_at__isnull=True).first()
    if current is not None:  # a reload: no lock needed
        return current
    with transaction.atomic():
        # One attempt opened at a time per quiz: the limits below are checked under this lock.
        Qualification.objects.select_for_update().filter(pk=qualification.pk).first()
        current = QuizAttempt.objects.filter(qualification=qualification, user=user, submitted_at__isnull=True).first()
        if current is not None:
            return current
        _check_may_attempt(user=user, qualification=qualification)
        return QuizAttempt.objects.create(qualification=qualification, user=user, key=uuid.uuid4().hex, items=draw(qualification))


def _fresh(qualification: Qualification):
    items = qualification.items.all()
    if qualification.retire_after_passes:
        items = items.filter(passes__lt=qualification.retire_after_passes)
    return items


def draw(qualification: Qualification) -> list[int]:
    """Draw one attempt's question ids: ``questions_per_attempt`` at random from the questions not
    yet retired (``retire_after_passes``); when too few are left, retired ones fill the attempt
    (``pool_report`` then tells the owner the pool is exhausted)."""
    k = qualification.questions_per_attempt
    fresh = list(_fresh(qualification).values_list("id", flat=True))
    drawn = _RANDOM.sample(fresh, min(len(fresh), k))
    if len(drawn) < k:
        retired = list(qualification.items.exclude(id__in=fresh).values_list("id", flat=True))
        drawn += _RANDOM.sample(retired, min(len(retired), k - len(drawn)))
    return drawn


def _check_may_attempt(*, user, qualification: Qualification) -> None:
    task = qualification.task
    current = status(user=user, qualification=qualification)
    if current.passed:
        raise NotAllowed("already_passed", f"You already passed the qualification of {task.name}.")
    if current.left <= 0:
        raise NotAllowed("no_attempts_left", f"You used all {qualification.max_attempts} attempts at the qualification of {task.name}.")
    if current.wait_until is not None:
        minutes = max(1, math.ceil((current.wait_until - timezone.now()).total_seconds() / 60))
        raise NotAllowed("cooling_off", f"Read the instructions again; you can try the quiz again in {minutes} minute"
                         f"{'s' if minutes != 1 else ''} ({current.left} attempt{'s' if current.left != 1 else ''} left).",
                         status_code=429)
    if qualification.attempts_per_hour:
        count, wait = count_hit(f"quiz-attempts:{qualification.pk}", window_s=3600)
        if count > qualification.attempts_per_hour:
            raise NotAllowed("quiz_busy", f"The quiz of {task.name} takes no more attempts this hour; try again in "
                             f"{max(1, math.ceil(wait / 60))} minutes.", status_code=429)


def clean_quiz_answer(task, item: QuizItem, raw) -> dict:
    """Return a worker's answer to ``item`` in the task's target shape (``task.spec.clean_target``
    against the item's input), or raise ``RuleError`` naming ``item-<id>``."""
    try:
        return task.spec.clean_target(task.config, item.input, raw)
    except RuleError as exc:
        raise RuleError(exc.code, f"Question: {exc.message}", field=f"item-{item.pk}") from None


def submit_attempt(*, user, qualification: Qualification, answers: dict, key: str, read_instructions: bool) -> QuizAttempt:
    """Score ``user``'s ``answers`` to the open attempt with one-time ``key`` (``open_attempt``;
    ``{item id: raw target}``, e.g. ``{"label": "negative"}`` or ``{"answers": [{"text",
    "answer_start"}]}``) and record it; on a pass, grant the task's annotator role (and
    validator, with ``grants_validator``).

    A worker passes when ``right / total >= pass_mark`` over the items drawn for the attempt;
    right per item is the task kind's ``answer_matches`` against the gold answer. The attempt
    keeps ``right`` for the owner; the worker is told pass or fail only. The same ``key`` again
    returns the attempt already scored (a double submit counts once).

    Raises ``RuleError``: instructions not confirmed (``instructions_unread``), a drawn item left
    unanswered or with an answer the task does not take, a key of no open attempt
    (``bad_form_key``); ``NotAllowed``: already passed. Nothing is stored then.
    """
    task = qualification.task
    key = str(key or "").strip()
    if not key or len(key) > MAX_KEY:
        raise RuleError("bad_form_key", "The quiz form is missing its key; reload the page.", field="key")
    with transaction.atomic():
        Qualification.objects.select_for_update().filter(pk=qualification.pk).first()
        attempt = QuizAttempt.objects.select_for_update().filter(qualification=qualification, user=user, key=key).first()
        if attempt is None:
            raise RuleError("bad_form_key", "This quiz form is out of date; reload the page for your questions.", field="key")
        if attempt.submitted_at is not None:
            return attempt
        if status(user=user, qualification=qualification).passed:
            raise NotAllowed("already_passed", f"You already passed the qualification of {task.name}.")
        if not read_instructions:
            raise RuleError("instructions_unread", "Confirm that you read the instructions.", field="read_instructions")
        if not isinstance(answers, dict):
            raise RuleError("bad_answers", "Answers must map each question to an answer.", field="answers")
        items = attempt_items(attempt)
        cleaned, right = {}, 0
        for item in items:
            raw = answers.get(item.pk, answers.get(str(item.pk)))
            answer = clean_quiz_answer(task, item, raw)
            cleaned[str(item.pk)] = answer
            right += bool(task.spec.answer_matches(task.config, item.answer, answer))
        passed = bool(items) and right / len(items) >= qualification.pass_mark
        attempt.answers, attempt.right, attempt.total, attempt.passed = cleaned, right, len(items), passed
        attempt.submitted_at = timezone.now()
        attempt.save(update_fields=["answers", "right", "total", "passed", "submitted_at"])
        if passed:
            QuizItem.objects.filter(pk__in=[item.pk for item in items]).update(passes=F("passes") + 1)
            access.grant_by_qualification(task=task, user=user, role=TaskRole.Role.ANNOTATOR)
            if qualification.grants_validator:
                access.grant_by_qualification(task=task, user=user, role=TaskRole.Role.VALIDATOR)
    return attempt
