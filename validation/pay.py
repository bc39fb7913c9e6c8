"""Pay from outcomes: what each crowd worker of a round earned, and the platforms' bonus files.

Accepted examples come from the one validated-example selector
(``selectors.validated_queryset``, the same the round's datasets are built from); accepted
validations are the worker's votes that count toward consensus (``Validation.counts``: not
gold checks, not votes of a validator below the gold threshold or on probation, not a second
vote of one person, ``validation/identity.py``) on an example that settled the way they voted
(a vote on a pending or retracted example, or against the outcome, is not paid). Amounts:
``calculations.worker_pay`` with the round's ``RoundPay``. A round may add a transfer bonus: an
accepted example that fooled at least ``RoundPay.transfer_min_models`` of the task's other models
(its stored transfer rate, ``validation/transfer.py``) earns ``RoundPay.transfer_bonus``
(``transfer_selectors.transfer_earners``, ``calculations.transfer_pay``); the rules above are
unchanged by it. Under a round's near-duplicate rule (``annotation/diversity/rules.py``, not ``off``), a
validated fooling example within the round's threshold of an earlier one already paid earns no bonus
(``annotation.diversity.paid_copies.near_copies_of_earlier``); its base pay is unchanged, and the
summary names the example it near-copies.

Files (the task owner's only; they carry the platform worker ids the platforms need to pay):

- Prolific bulk bonus: one ``worker_id,amount`` line per worker, no header.
- Mechanical Turk ``SendBonus``: ``WorkerId,AssignmentId,BonusAmount,Reason`` with a header.
- Summary: per worker (pseudonymous username) the counts, base, bonus and total, and a
  ``TOTAL`` line; with a transfer rule, also the examples that earned the transfer bonus and its amount.
- Transfer bonus: one line per example that earned it (worker, example id, models fooled and
  tried, amount).

Every file is written with the ``csv`` module and every cell neutralised against spreadsheet
formulas (``safe_cell``). Pay follows only outcomes that survive the crowd rules: examples
validated correct by counted votes, and votes that count (gold probation, one vote per person:
``validation/identity.py``).
"""

import csv
import io
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.db.models import Count, Q

from annotation.diversity.paid_copies import near_copies_of_earlier
from annotation.models import CrowdSession, CrowdStudy, ValidationState
from dynabench.errors import NotAllowed, RuleError
from validation.calculations import CORRECT, FLAGGED, INCORRECT, transfer_pay, worker_pay
from validation.models import RoundPay, Validation
from validation.selectors import validated_queryset
from validation.transfer_selectors import EarnedTransfer, transfer_earners

MAX_AMOUNT = Decimal("1000")
#: An accepted validation: a counted vote on a settled example that agrees with how it settled.
_AGREES_WITH_OUTCOME = (
    Q(label=CORRECT, example__validation_state=ValidationState.VERIFIED_CORRECT)
    | Q(label=INCORRECT, example__validation_state=ValidationState.VERIFIED_INCORRECT)
    | Q(label=FLAGGED, example__validation_state=ValidationState.FLAGGED)
)
#: Characters that make a spreadsheet read a cell as a formula (OWASP "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value) -> str:
    """``value`` as text for a CSV cell a spreadsheet will open: a cell starting with ``= + - @``,
    a tab or a carriage return gets a leading single quote, so it is read as text, never as a
    formula (OWASP, "CSV Injection"). Amounts here are never negative, so no number changes."""
    text = str(value)
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


def _writer(out):
    return csv.writer(out, lineterminator="\n")


def _row(writer, cells) -> None:
    writer.writerow([safe_cell(c) for c in cells])


@dataclass(frozen=True)
class PayRow:
    """One worker's pay in a round: ``worker_id`` (the platform's), ``assignment_id`` (MTurk's
    assignment, Prolific's session), ``username`` (pseudonymous), accepted ``examples``,
    accepted ``validations``, validated ``fooling`` examples, ``base``, ``bonus``; ``transfer``: the
    examples that earned the transfer bonus (``EarnedTransfer``) and ``transfer_bonus`` their pay;
    ``near_copies``: ``(example id, id of the earlier paid example it near-copies)`` for the fooling
    examples that earned no bonus for it; ``total`` is all three amounts."""

    worker_id: str
    assignment_id: str
    username: str
    examples: int
    validations: int
    fooling: int
    base: Decimal
    bonus: Decimal
    transfer: tuple[EarnedTransfer, ...] = ()
    transfer_bonus: Decimal = Decimal("0.00")
    near_copies: tuple[tuple[int, int], ...] = ()

    @property
    def total(self) -> Decimal:
        return self.base + self.bonus + self.transfer_bonus


def round_pay(round) -> RoundPay:
    """The round's pay settings (unsaved zeros when the owner has set none)."""
    return RoundPay.objects.filter(round=round).first() or RoundPay(round=round)


@transaction.atomic
def set_round_pay(*, round, acting_user, currency: str, per_example, per_validation, bonus_per_fooling, reason: str = "",
                  transfer_min_models=None, transfer_bonus="0") -> RoundPay:
    """Save what ``round`` pays. Raises ``NotAllowed`` unless ``acting_user`` owns the task;
    ``RuleError`` naming the field for an amount that is not a number from 0 to 1000 with at
    most two decimals, or a currency that is not three letters.

    ``transfer_min_models`` (``k``, blank or None: no transfer bonus) and ``transfer_bonus`` set the
    transfer rule: an accepted example that fools at least ``k`` other models earns the amount. ``k``
    must be a whole number from 1 to 100, and a task whose kind does not measure transfer (its
    ``model_wrong`` is a person's judgment) takes no rule (``RuleError`` naming the field)."""
    if not round.task.is_owner(acting_user):
        raise NotAllowed("not_owner", f"Only an owner of task '{round.task.code}' can set what its rounds pay.")
    currency = str(currency or "").strip().upper()
    if len(currency) != 3 or not currency.isalpha():
        raise RuleError("bad_currency", "The currency is a three-letter code such as GBP or USD.", field="currency")
    given = {"per_example": per_example, "per_validation": per_validation, "bonus_per_fooling": bonus_per_fooling,
             "transfer_bonus": transfer_bonus}
    amounts = {name: _amount(name, value) for name, value in given.items()}
    k = _min_models(round, transfer_min_models)
    pay, _ = RoundPay.objects.update_or_create(
        round=round, defaults={"currency": currency, "reason": (reason or "").strip()[:255] or RoundPay().reason,
                               "transfer_min_models": k, **amounts}
    )
    return pay


def _amount(name: str, value) -> Decimal:
    """``value`` as an amount from 0 to ``MAX_AMOUNT`` with at most two decimals, or ``RuleError`` naming ``name``
    (blank counts as 0 for ``transfer_bonus`` only, so the other amounts are refused blank as before)."""
    text = str(value if value is not None else "").strip() or ("0" if name == "transfer_bonus" else "")
    try:
        amount = Decimal(text)
    except ArithmeticError:
        raise RuleError("bad_amount", f"{name} must be a number such as 0.15.", field=name) from None
    if not amount.is_finite() or amount < 0 or amount > MAX_AMOUNT or amount.as_tuple().exponent < -2:
        raise RuleError("bad_amount", f"{name} must be between 0 and {MAX_AMOUNT} with at most two decimals.", field=name)
    return amount


def _min_models(round, value) -> int | None:
    """The transfer rule's ``k`` (None when blank), or ``RuleError`` naming ``transfer_min_models``."""
    text = str(value if value is not None else "").strip()
    if not text:
        return None
    if not text.isdigit() or not 1 <= int(text) <= 100:
        raise RuleError("bad_transfer_rule", "transfer_min_models must be a whole number of other models from 1 to 100, "
                        "or blank for no transfer bonus.", field="transfer_min_models")
    if not round.task.spec.measures_transfer:
        raise RuleError("bad_transfer_rule", "This task's examples are judged by people, so no transfer rate is measured "
                        "and no transfer bonus can be set; leave transfer_min_models blank.", field="transfer_min_models")
    return int(text)


def transfer_earned(round) -> dict[int, tuple[EarnedTransfer, ...]]:
    """``{author id: the examples that earned the round's transfer bonus}`` (``transfer_earners`` with
    ``RoundPay.transfer_min_models``); empty when the round has no transfer rule."""
    k = round_pay(round).transfer_min_models
    earned: dict[int, list[EarnedTransfer]] = {}
    for e in transfer_earners(round, min_models=k) if k else []:
        earned.setdefault(e.author_id, []).append(e)
    return {author: tuple(rows) for author, rows in earned.items()}


def pay_rows(round, *, platform: str) -> list[PayRow]:
    """Return one ``PayRow`` per crowd worker of ``platform`` with a session in ``round``'s study,
    ordered by username, in five queries (six with a transfer rule, two more with a near-duplicate rule)."""
    pay = round_pay(round)
    sessions = list(
        CrowdSession.objects.filter(study__round=round, study__platform=platform)
        .select_related("worker__user")
        .order_by("worker__user__username")
    )
    users = [s.worker.user_id for s in sessions]
    examples = {
        row["author_id"]: row
        for row in validated_queryset(round=round)
        .filter(author_id__in=users)
        .order_by()
        .values("author_id")
        .annotate(n=Count("id"), fooling=Count("id", filter=Q(model_wrong=True)))
    }
    earned = transfer_earned(round)
    copies = near_copies_by_author(round)
    validations = dict(
        Validation.objects.filter(
            _AGREES_WITH_OUTCOME, example__round=round, example__retracted=False, validator_id__in=users,
            mode=Validation.Mode.USER, counts=True, gold_check=False,
        )
        .order_by()
        .values_list("validator_id")
        .annotate(n=Count("id"))
        .values_list("validator_id", "n")
    )
    rows = []
    for session in sessions:
        user_id = session.worker.user_id
        written = examples.get(user_id, {"n": 0, "fooling": 0})
        unpaid = copies.get(user_id, ())
        base, bonus = worker_pay(
            examples=written["n"], validations=validations.get(user_id, 0), fooling=written["fooling"] - len(unpaid),
            per_example=pay.per_example, per_validation=pay.per_validation, bonus_per_fooling=pay.bonus_per_fooling,
        )
        rows.append(PayRow(
            worker_id=session.worker.platform_worker_id, assignment_id=session.platform_session,
            username=session.worker.user.username, examples=written["n"], validations=validations.get(user_id, 0),
            fooling=written["fooling"], base=base, bonus=bonus, transfer=earned.get(user_id, ()),
            transfer_bonus=transfer_pay(earning=len(earned.get(user_id, ())), amount=pay.transfer_bonus),
            near_copies=unpaid,
        ))
    return rows


def near_copies_by_author(round) -> dict[int, tuple[tuple[int, int], ...]]:
    """``{author id: ((example id, earlier example id), ...)}``: the round's validated fooling examples
    that near-copy an earlier one already paid (``near_copies_of_earlier``), by author; empty when the
    round's near-duplicate rule is off."""
    fooling = dict(validated_queryset(round=round).filter(model_wrong=True).order_by().values_list("pk", "author_id"))
    found: dict[int, list[tuple[int, int]]] = {}
    for example_id, earlier in sorted(near_copies_of_earlier(round=round, example_ids=fooling).items()):
        found.setdefault(fooling[example_id], []).append((example_id, earlier))
    return {author: tuple(rows) for author, rows in found.items()}


def totals(rows: list[PayRow]) -> dict:
    """``{"workers", "examples", "validations", "fooling", "base", "bonus", "transfer", "transfer_bonus",
    "total"}`` over ``rows`` (``transfer``: examples that earned the transfer bonus)."""
    return {
        "workers": len(rows),
        "examples": sum(r.examples for r in rows),
        "validations": sum(r.validations for r in rows),
        "fooling": sum(r.fooling for r in rows),
        "base": sum((r.base for r in rows), Decimal("0.00")),
        "bonus": sum((r.bonus for r in rows), Decimal("0.00")),
        "transfer": sum(len(r.transfer) for r in rows),
        "transfer_bonus": sum((r.transfer_bonus for r in rows), Decimal("0.00")),
        "total": sum((r.total for r in rows), Decimal("0.00")),
    }


def prolific_bonus_csv(rows: list[PayRow]) -> str:
    """Prolific's bulk bonus upload: ``worker_id,amount`` per worker who earned something, no
    header; cells neutralised against formulas (``safe_cell``)."""
    out = io.StringIO()
    writer = _writer(out)
    for r in rows:
        if r.total > 0:
            _row(writer, [r.worker_id, f"{r.total:.2f}"])
    return out.getvalue()


def mturk_bonus_csv(rows: list[PayRow], *, reason: str) -> str:
    """MTurk ``SendBonus`` rows: ``WorkerId,AssignmentId,BonusAmount,Reason`` with a header, one
    line per worker who earned something; cells neutralised against formulas (``safe_cell``)."""
    out = io.StringIO()
    writer = _writer(out)
    _row(writer, ["WorkerId", "AssignmentId", "BonusAmount", "Reason"])
    for r in rows:
        if r.total > 0:
            _row(writer, [r.worker_id, r.assignment_id, f"{r.total:.2f}", reason])
    return out.getvalue()


def summary_csv(rows: list[PayRow], *, currency: str, transfer: bool = False) -> str:
    """Per worker (pseudonymous username): accepted examples, validations, fooling examples, base,
    bonus and total, then a ``TOTAL`` line; cells neutralised against formulas (``safe_cell``).
    ``transfer`` (the round has a transfer rule): two more columns before the total, how many examples
    earned the transfer bonus and its amount: counts in every row, the TOTAL line's their sum (the ids
    of those examples are in ``transfer_bonus_csv``, one line each). When a row has near-copies that
    earned no bonus, a last column ``near_copies_without_bonus`` names them, e.g. ``12 (near-copy of 7)``."""
    out = io.StringIO()
    writer = _writer(out)
    copies = any(r.near_copies for r in rows)
    extra = ["transfer_bonus_examples", f"transfer_bonus_{currency}"] if transfer else []
    marks = ["near_copies_without_bonus"] if copies else []
    _row(writer, ["worker", "examples_accepted", "validations_accepted", "fooling_validated",
                     f"base_{currency}", f"bonus_{currency}", *extra, f"total_{currency}", *marks])
    for r in rows:
        cells = [len(r.transfer), f"{r.transfer_bonus:.2f}"] if transfer else []
        marked = ["; ".join(f"{e} (near-copy of {of})" for e, of in r.near_copies)] if copies else []
        _row(writer, [r.username, r.examples, r.validations, r.fooling, f"{r.base:.2f}", f"{r.bonus:.2f}", *cells, f"{r.total:.2f}",
                      *marked])
    t = totals(rows)
    cells = [t["transfer"], f"{t['transfer_bonus']:.2f}"] if transfer else []
    _row(writer, ["TOTAL", t["examples"], t["validations"], t["fooling"], f"{t['base']:.2f}", f"{t['bonus']:.2f}", *cells,
                  f"{t['total']:.2f}", *([sum(len(r.near_copies) for r in rows)] if copies else [])])
    return out.getvalue()


def transfer_bonus_csv(rows: list[PayRow], *, currency: str, amount: Decimal) -> str:
    """One line per example that earned the transfer bonus: ``worker`` (pseudonymous username),
    ``example`` (id), ``models_fooled``, ``models_tried``, ``amount_<currency>``, with a header;
    cells neutralised against formulas (``safe_cell``)."""
    out = io.StringIO()
    writer = _writer(out)
    _row(writer, ["worker", "example", "models_fooled", "models_tried", f"amount_{currency}"])
    for r in rows:
        for e in r.transfer:
            _row(writer, [r.username, e.example_id, e.fooled, e.tried, f"{Decimal(amount):.2f}"])
    return out.getvalue()


def bonus_file(round, *, platform: str) -> tuple[str, str]:
    """Return ``(filename, text)`` of ``round``'s bonus file for ``platform`` (Prolific or MTurk format)."""
    rows = pay_rows(round, platform=platform)
    name = f"{round.task.code}-r{round.number}-{platform}-bonus.csv"
    if platform == CrowdStudy.Platform.MTURK:
        return name, mturk_bonus_csv(rows, reason=round_pay(round).reason)
    return name, prolific_bonus_csv(rows)
