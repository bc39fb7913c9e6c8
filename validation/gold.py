"""Gold items in the review queue: serving them, scoring validators on them, and who stops counting.

An owner marks settled examples as gold (``mark_gold``) or supplies new ones
(``validation.services.supply_gold_item``). The review queue (``validation.queue.next_example_for``)
serves a gold item instead of the next example with probability ``gold_rate`` (task config),
presented exactly as a pending example would be: same page, same URL shape, same fields, the
verdict kept on the server. The validator's answer is a gold check (a ``Validation`` with
``gold_check=True, counts=False``), never a vote. After each check ``update_standing``
recomputes the validator's accuracy on the task's gold items; below
``gold_accuracy_threshold`` over at least ``gold_min_answers`` checks their votes stop counting
(``validation.standing.apply_standing`` recomputes the consensus of the examples they voted on).

New crowd workers start on probation: a paid worker's votes count only once they have answered
``gold_min_answers`` gold checks at ``gold_accuracy_threshold`` or better, and the queue serves
them gold items first until then. Before that, a few fresh accounts could settle an example
between themselves.
"""

import random
from dataclasses import dataclass

from django.db import connection
from django.db.models import BooleanField, Count, Exists, ExpressionWrapper, F, OuterRef, Q, Subquery
from django.utils import timezone

from annotation.models import CrowdWorker, Example, ValidationState
from dynabench.errors import NotAllowed, RuleError
from validation.calculations import ConsensusPolicy, collusion_flags
from validation.models import GoldAssignment, GoldItem, Validation, ValidatorStanding

DEFAULT_THRESHOLD = 0.7
DEFAULT_MIN_ANSWERS = 5
_VERDICT_OF_STATE = {
    ValidationState.VERIFIED_CORRECT: GoldItem.Verdict.CORRECT,
    ValidationState.VERIFIED_INCORRECT: GoldItem.Verdict.INCORRECT,
}


@dataclass(frozen=True)
class GoldSettings:
    """A task's gold settings: ``rate`` (0..1, share of served items that are gold),
    ``threshold`` (0..1, the lowest gold accuracy whose votes count), ``min_answers`` (checks
    answered before a validator is judged)."""

    rate: float
    threshold: float
    min_answers: int

    @classmethod
    def of(cls, task) -> "GoldSettings":
        config = task.config
        return cls(
            rate=float(config.get("gold_rate", 0.0)),
            threshold=float(config.get("gold_accuracy_threshold", DEFAULT_THRESHOLD)),
            min_answers=int(config.get("gold_min_answers", DEFAULT_MIN_ANSWERS)),
        )


# --- serving ---------------------------------------------------------------------------------


def present(example: Example, *, validator, served_at, lease) -> Example:
    """Make a gold ``example`` look like any example handed out by the queue (in memory only):
    pending, with fewer validations than needed, leased to ``validator`` until ``served_at +
    lease``. Nothing is saved."""
    policy = ConsensusPolicy.from_config(example.round.task.config)
    example.validation_state = ValidationState.PENDING
    example.validation_count = example.pk % policy.needed
    example.correct_count = example.incorrect_count = example.flagged_count = 0
    example.leased_to_id = validator.pk
    example.leased_until = served_at + lease
    return example


def serve(*, validator, round, lease, exclude_ids=(), draw=None) -> Example | None:
    """With probability ``gold_rate`` (always, while ``validator`` is a crowd worker on probation), hand ``validator`` a gold item of ``round`` they have not
    seen (not their own example, not one they validated, not skipped), recorded as a
    ``GoldAssignment``; return its example presented as pending (``present``), or None.

    ``draw``: a number in [0, 1) standing in for the random draw (tests). Most calls cost one
    random number. A gold draw picks and records the item in one ``INSERT … SELECT … ON
    CONFLICT DO NOTHING RETURNING`` statement (the same validator's other tab taking the same
    item meanwhile inserts nothing), then reads the example: two round trips.
    """
    rate = float(round.task.config.get("gold_rate", 0.0))
    if on_probation(task=round.task, validator=validator):
        rate = 1.0
    if rate <= 0 or (random.random() if draw is None else draw) >= rate:
        return None
    judged = Validation.objects.filter(example_id=OuterRef("example_id"), validator=validator)
    seen = GoldAssignment.objects.filter(gold_item=OuterRef("pk"), validator=validator)
    items = (
        GoldItem.objects.filter(round=round, active=True)
        .exclude(example__author=validator)
        .filter(~Exists(judged), ~Exists(seen))
    )
    if exclude_ids:
        items = items.exclude(example_id__in=list(exclude_ids))
    chosen, params = items.order_by("id").values("id")[:1].query.sql_with_params()
    quote = connection.ops.quote_name
    now = timezone.now()
    insert = (
        f"INSERT INTO {quote(GoldAssignment._meta.db_table)} (gold_item_id, validator_id, served_at) "
        f"SELECT chosen.id, %s, %s FROM ({chosen}) AS chosen WHERE true "
        f"ON CONFLICT DO NOTHING RETURNING gold_item_id"
    )
    with connection.cursor() as cursor:
        cursor.execute(insert, [validator.pk, now, *params])
        row = cursor.fetchone()
    if row is None:
        return None
    example = Example.objects.select_related("context").get(gold__pk=row[0])
    example.round = round
    return present(example, validator=validator, served_at=now, lease=lease)


def open_gold_for(*, validator, round, lease, exclude_ids=()) -> Example | None:
    """Return the gold item ``validator`` was served in ``round`` and has not answered (served
    within ``lease``), presented as pending; else None. The review page shows it again on reload,
    as it shows a leased example again."""
    since = timezone.now() - lease
    assignment = (
        GoldAssignment.objects.filter(
            validator=validator, answered_at__isnull=True, served_at__gt=since,
            gold_item__round=round, gold_item__active=True,
        )
        .exclude(gold_item__example_id__in=list(exclude_ids))
        .select_related("gold_item__example__context", "gold_item__example__round__task")
        .order_by("-served_at")
        .first()
    )
    if assignment is None:
        return None
    return present(assignment.gold_item.example, validator=validator, served_at=assignment.served_at, lease=lease)


def open_assignment(*, example, validator) -> GoldAssignment | None:
    """The unanswered ``GoldAssignment`` of ``validator`` on ``example``, locked; None when
    ``example`` was not served to them as gold (their verdict is then an ordinary vote)."""
    return (
        GoldAssignment.objects.select_for_update()
        .filter(gold_item__example_id=example.pk, gold_item__active=True, validator=validator, answered_at__isnull=True)
        .select_related("gold_item")
        .first()
    )


def give_back(*, example, validator) -> bool:
    """Forget an unanswered gold assignment of ``validator`` on ``example`` (they skipped it); True if one was open."""
    deleted, _ = GoldAssignment.objects.filter(
        gold_item__example_id=example.pk, validator=validator, answered_at__isnull=True
    ).delete()
    return bool(deleted)


# --- standing ----------------------------------------------------------------------------------


def is_crowd_worker(validator) -> bool:
    """True when ``validator`` is a paid-crowd account (``annotation.models.CrowdWorker``)."""
    return CrowdWorker.objects.filter(user_id=validator.pk).exists()


def vote_standing(*, task, validator) -> tuple[bool, bool]:
    """Return ``(excluded, crowd)`` in one query: whether ``validator``'s votes on ``task`` do not
    count (gold accuracy below the threshold, or a crowd worker still on probation: no standing
    yet counts as probation for them), and whether they are a crowd account."""
    from django.contrib.auth import get_user_model

    row = (
        get_user_model().objects.filter(pk=validator.pk)
        .annotate(
            standing=Subquery(ValidatorStanding.objects.filter(task=task, validator=OuterRef("pk")).values("excluded")[:1]),
            crowd=Exists(CrowdWorker.objects.filter(user=OuterRef("pk"))),
        )
        .values_list("standing", "crowd").first()
    )
    standing, crowd = row if row else (None, False)
    return (crowd if standing is None else bool(standing)), bool(crowd)


def is_excluded(*, task, validator) -> bool:
    """True when ``validator``'s votes on ``task`` do not count (``vote_standing``)."""
    return vote_standing(task=task, validator=validator)[0]


def on_probation(*, task, validator) -> bool:
    """True when ``validator`` is a crowd worker who has not yet answered the task's
    ``gold_min_answers`` gold checks at its ``gold_accuracy_threshold``."""
    if not is_crowd_worker(validator):
        return False
    standing = ValidatorStanding.objects.filter(task=task, validator=validator).first()
    settings = GoldSettings.of(task)
    return standing is None or standing.answered < settings.min_answers or (standing.accuracy or 0) < settings.threshold


def excluded_for(*, answered: int, correct: int, settings: GoldSettings, crowd: bool) -> bool:
    """Whether votes stop counting: at least ``min_answers`` checks and accuracy below
    ``threshold``; for a crowd worker also fewer than ``min_answers`` checks (probation)."""
    if answered < settings.min_answers:
        return crowd
    return correct / answered < settings.threshold


def gold_score(*, task, validator) -> tuple[int, int]:
    """Return ``(answered, correct)``: ``validator``'s gold checks on ``task`` and how many matched the gold verdict."""
    row = Validation.objects.filter(validator=validator, gold_check=True, example__round__task=task).aggregate(
        answered=Count("id"), correct=Count("id", filter=Q(label=F("example__gold__verdict")))
    )
    return row["answered"], row["correct"]


def update_standing(*, task, validator) -> ValidatorStanding | None:
    """Recompute ``validator``'s gold accuracy on ``task`` and whether their votes count.

    Excluded when ``answered >= min_answers`` and ``correct / answered < threshold``
    (``GoldSettings``), and a crowd worker while ``answered < min_answers`` (``excluded_for``);
    reinstated when the accuracy is back at or above the threshold.
    Call inside a transaction. Returns the standing when ``excluded`` changed (the caller
    recomputes consensus: ``validation.standing.apply_standing``), else None.
    """
    settings = GoldSettings.of(task)
    crowd = is_crowd_worker(validator)
    answered, correct = gold_score(task=task, validator=validator)
    ValidatorStanding.objects.get_or_create(task=task, validator=validator, defaults={"excluded": crowd})
    standing = ValidatorStanding.objects.select_for_update().get(task=task, validator=validator)
    excluded = excluded_for(answered=answered, correct=correct, settings=settings, crowd=crowd)
    changed = excluded != standing.excluded
    standing.answered, standing.correct, standing.excluded = answered, correct, excluded
    if excluded and answered < settings.min_answers:
        standing.reason = (f"New crowd worker on probation: {correct} of {answered} gold checks right; votes count after "
                           f"{settings.min_answers} at {settings.threshold:.0%} or better.")
    if changed:
        now = timezone.now()
        standing.changed_at = now
        verb = "Votes stopped counting" if excluded else "Votes count"
        standing.reason = (
            f"{verb} on {now:%Y-%m-%d %H:%M} UTC: {correct} of {answered} gold checks right "
            f"({correct / answered:.0%}), {'below' if excluded else 'at or above'} the task's threshold of {settings.threshold:.0%}."
        ) if answered else standing.reason
    standing.save()
    return standing if changed else None


# --- owners' gold items ------------------------------------------------------------------------


def mark_gold(*, example, acting_user, active: bool = True) -> GoldItem:
    """Make a settled ``example`` (verified correct or incorrect, not retracted) a gold item of its
    round, its verdict taken from its state; or switch an existing gold item on or off.

    Raises ``NotAllowed`` unless ``acting_user`` owns the task; ``RuleError`` (``not_settled``)
    for a pending, flagged or retracted example.
    """
    task = example.round.task
    if not task.is_owner(acting_user):
        raise NotAllowed("not_owner", f"Only an owner of task '{task.code}' can choose its gold items.")
    verdict = _VERDICT_OF_STATE.get(example.validation_state)
    if verdict is None or example.retracted:
        raise RuleError(
            "not_settled",
            f"Example {example.pk} is {example.validation_state}{' and retracted' if example.retracted else ''}: "
            "only an example validated correct or incorrect can be gold (decide it first).",
        )
    item, created = GoldItem.objects.get_or_create(
        example=example, defaults={"round_id": example.round_id, "verdict": verdict, "created_by": acting_user, "active": active}
    )
    if not created and item.active != active:
        item.active = active
        item.save(update_fields=["active"])
    return item


def gold_report(task) -> dict:
    """What the owner sees about gold on ``task``: ``settings`` (``GoldSettings``), ``items``
    (each gold item with ``answered`` and ``right`` counts, newest first, at most 200),
    ``standings`` (each validator's ``ValidatorStanding`` with ``user``, lowest accuracy first)
    and ``excluded`` (how many validators' votes do not count)."""
    items = (
        GoldItem.objects.filter(round__task=task)
        .select_related("example", "round")
        .annotate(
            answered=Count("example__validations", filter=Q(example__validations__gold_check=True)),
            right=Count("example__validations", filter=Q(example__validations__gold_check=True,
                                                        example__validations__label=F("verdict"))),
        )
        .order_by("-id")[:200]
    )
    standings = sorted(
        ValidatorStanding.objects.filter(task=task).select_related("validator"),
        key=lambda s: (s.accuracy if s.accuracy is not None else 2.0, s.validator.username),
    )
    return {
        "settings": GoldSettings.of(task),
        "items": list(items),
        "standings": standings,
        "excluded": sum(1 for s in standings if s.excluded),
        "collusion": collusion_report(task),
    }


#: At most this many recent votes of a task are read for the collusion check (a page's budget).
COLLUSION_VOTES = 20000


def collusion_report(task) -> list[dict]:
    """Pairs of validators of ``task`` who agree with each other far more often than with gold or
    with others (``calculations.collusion_flags`` over the latest ``COLLUSION_VOTES`` user votes
    and every gold check): ``[{"a", "b" (usernames), "shared", "pair_agreement", "baseline"}]``.
    For the owner: a flag is a reason to look, not a verdict."""
    from django.contrib.auth import get_user_model

    votes = list(
        Validation.objects.filter(example__round__task=task, mode=Validation.Mode.USER, gold_check=False)
        .order_by("-id").values_list("example_id", "validator_id", "label")[:COLLUSION_VOTES]
    )
    checks = Validation.objects.filter(example__round__task=task, gold_check=True).annotate(
        right=ExpressionWrapper(Q(label=F("example__gold__verdict")), output_field=BooleanField())
    ).values_list("validator_id", "right")
    flags = collusion_flags(votes, list(checks))
    names = dict(get_user_model().objects.filter(pk__in={f.a for f in flags} | {f.b for f in flags}).values_list("pk", "username"))
    return [{"a": names.get(f.a, f.a), "b": names.get(f.b, f.b), "shared": f.shared,
             "pair_agreement": f.pair_agreement, "baseline": f.baseline} for f in flags]
