"""Eligibility: who may judge an example, and whether it is still open to their verdict.

The checks a verdict passes before anything is written (``validation.services.record_validation``),
in two parts around the gold check: ``check_validator`` (the task collects; not one's own example;
the validator role or ownership, owner mode for owners only; the task's qualification passed; not
retracted; not judged twice in user mode), then, for a verdict that is not a gold check,
``check_example`` (the review queue leased it to the validator; the form is not stale; not settled;
the round not closed). Each refusal raises ``RuleError`` or ``NotAllowed`` with a
``ValidationErrorCode``.
"""

from annotation import qualification
from annotation.models import ValidationState
from dynabench.errors import NotAllowed, RuleError
from tasks import access
from tasks.models import Round
from validation.error_codes import ValidationErrorCode as Code
from validation.models import Validation

_STATE_NAMES = dict(ValidationState.choices)


def check_validator(*, example, validator, mode) -> Validation | None:
    """Refuse ``validator`` a verdict on ``example`` in ``mode`` unless the task collects, the example
    is not their own nor retracted, they hold the validator role (owners need none, and only owners
    decide in owner mode), have passed the task's qualification (``annotation.qualification``) and
    have not judged it already in user mode. Return their earlier validation of ``example`` (an
    owner revising their decision), else None."""
    task = example.round.task
    if not task.collecting:
        raise RuleError(Code.NOT_COLLECTING, f"{task.name} is an evaluation-only benchmark: it has nothing to validate.", status_code=409)
    is_owner = task.is_owner(validator)
    if example.author_id == validator.pk:
        raise NotAllowed(Code.OWN_EXAMPLE, "You cannot validate your own example.")
    if mode == Validation.Mode.OWNER and not is_owner:
        raise NotAllowed(Code.NOT_OWNER, f"Only an owner of task '{task.code}' can decide in owner mode.", field="mode")
    if not is_owner and not access.has_task_role(validator, task, "validator"):
        raise NotAllowed(Code.NOT_VALIDATOR, "You need the validator role on this task to validate examples; ask a task owner.")
    if not is_owner:
        qualification.require_qualified(user=validator, task=task)
    if example.retracted:
        raise RuleError(Code.RETRACTED, "Its author retracted this example; it cannot be validated. Load the next one.")
    previous = Validation.objects.filter(example=example, validator=validator).first()
    if previous is not None and mode == Validation.Mode.USER:
        raise RuleError(Code.ALREADY_VALIDATED, f"You already validated this example ({previous.label}).")
    return previous


def check_example(*, example, validator, mode, expected_state) -> None:
    """Refuse a verdict on ``example`` that the review queue did not lease to ``validator`` (user
    mode), given on a stale form (``expected_state`` differs from its state), or, in user mode, on
    a settled example or in a closed round."""
    if mode == Validation.Mode.USER and example.leased_to_id != validator.pk:
        # Only what the queue handed out (a gold item is answered before this check, by its assignment): otherwise a few accounts could pick one author's
        # examples by id and settle them between themselves.
        raise NotAllowed(
            Code.NOT_LEASED,
            "The review queue did not hand you this example (or handed it to someone else after your hold ran "
            "out). Validate the example the queue gives you: the validate page, or GET /api/v1/validations/next.",
        )
    if expected_state is not None and expected_state != example.validation_state:
        raise RuleError(
            Code.STALE_FORM,
            f"This example changed since you loaded it: it is now {_STATE_NAMES[example.validation_state].lower()} "
            f"after {example.validation_count} validation(s). Nothing was saved; load the next one.",
        )
    if mode == Validation.Mode.USER:
        if example.validation_state != ValidationState.PENDING:
            raise RuleError(
                Code.ALREADY_SETTLED,
                f"Other validators already settled this example ({_STATE_NAMES[example.validation_state].lower()}). "
                "Nothing was saved; load the next one.",
            )
        if example.round.status == Round.Status.CLOSED:
            raise RuleError(Code.ROUND_CLOSED, f"{example.round} is closed; only its owners can still decide on examples.")
