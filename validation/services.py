"""Recording a validation, and an owner's gold item: the two use cases that write a verdict.

``record_validation`` is the orchestrator of one verdict; it reads as its steps, each rule in its
own module: the submission key's replay (``validation.replay``), who may judge and whether the
example is still open (``validation.eligibility``), a gold item's answer (``validation.gold_checks``),
the metadata (``validation.metadata``), whether the vote counts (``validation.standing``), the crowd
study's progress (``validation.crowd_progress``) and the consensus with its tallies
(``validation.consensus``, ``validation.tallies``). ``supply_gold_item`` writes an owner's gold item.
(The review queue is ``validation/queue.py``; closing a round into datasets
``validation/round_close.py``; retraining ``validation/retraining.py``.)

The HTMX review and owner queues, the admin actions, the importer and the benchmark all
call these functions; none keeps its own copy of a rule.
"""

from django.db import IntegrityError, transaction

from annotation import contexts as annotation_contexts
from annotation import services as annotation_services
from annotation.models import Example
from dynabench import idempotency
from dynabench.errors import NotAllowed, RuleError
from validation import consensus, crowd_progress, eligibility, gold, gold_checks, replay, standing
from validation.calculations import VALIDATION_LABELS
from validation.error_codes import ValidationErrorCode as Code
from validation.metadata import clean_metadata
from validation.models import GoldItem, Validation


# --- recording a validation -------------------------------------------------------------

class _KeyTaken(Exception):
    """Our insert lost a race: another request's row holds the submission key (or the verdict)."""


def record_validation(
    *, example, validator, label, mode="user", metadata=None, expected_state=None, submission_key: str = ""
) -> Validation:
    """Record ``validator``'s verdict on ``example`` and update its consensus, atomically.

    ``label``: ``correct|incorrect|flagged``. ``mode``: ``user`` or ``owner`` (an owner's
    decision overrides the crowd at once; an owner may revise their own decision).
    ``metadata``: ``corrected_label`` (classification) or ``corrected_answer``
    (``{"text", "answer_start"}`` or the answer text; QA), ``flag_reason`` (required with
    ``flagged``), ``explanation``, ``voted_label`` (the category the validator voted, when the
    crowd votes categories rather than verdicts, as DynaSent's validators did; read by
    ``validation.round_statistics.round_agreement(field="voted_label")``), ``image_verdicts`` (``{sha256: "unsafe"|"safe"}``
    per generated image of a text-to-image example; the vote then counts as ``correct`` when they agree
    with the annotator on every image, else ``incorrect``: ``spec.validation_label``), ``image_categories``
    (``{sha256: [harm category names]}`` for images judged unsafe: the validator's correction of the
    annotator's categories, ``spec.clean_image_categories``). ``expected_state``: the state the form showed; a
    different current state means the form is stale. ``submission_key``
    (``dynabench/idempotency.py``): the one-time key of the form or API call; if ``validator``
    already recorded a validation with it, that validation is returned (``replayed`` True) and
    nothing is checked or written again, so a double click never counts twice or fails as
    "already validated". Otherwise ``replayed`` is False.

    The example row is locked (``SELECT … FOR UPDATE``) for the whole transaction; its
    ``validation_state`` and ``*_count`` columns are recomputed from its counted validations
    with ``calculations.derive_state`` before commit, and the validator's lease is released.
    A user-mode verdict by a validator whose gold accuracy is below the task's threshold, by a
    crowd worker still on gold probation, or by a worker who entered from the same address as
    the author or as a validator already counted on this example (``validation/identity.py``:
    one person, one vote) is stored with ``counts=False``. When the queue served ``example`` to ``validator`` as a gold
    item, the verdict is a gold check instead (``validation.gold_checks``): scored against the
    gold verdict on the server, never a vote; the answer looks the same to the validator.
    The task's qualification must be passed first (``annotation.qualification``).

    Of two concurrent requests with one ``submission_key``, the one whose insert loses the
    race answers with the other's validation.

    A user-mode verdict is taken only on an example the review queue leased to ``validator``
    (``validation.queue.next_example_for``; ``Example.leased_to``): a lease that ran out still counts until the
    queue hands the example to someone else.

    Raises ``RuleError`` (400) with a ``ValidationErrorCode`` for bad input, a stale form,
    a settled or retracted example, a validation twice; ``NotAllowed`` (403) for one's own
    example, a validator without the role, owner mode by a non-owner, a user-mode verdict on
    an example not leased to the validator (``not_leased``). Nothing changes then, except that a
    verdict refused because the example holds all its answers already (``answers_full``) gives the
    example back to the queue: the next validator gets it at once, and this one takes it again from
    the queue (where it asks for no answer) to give a verdict without one.
    """
    try:
        return _record_validation(
            example=example, validator=validator, label=label, mode=mode, metadata=metadata,
            expected_state=expected_state, submission_key=submission_key,
        )
    except RuleError as refused:
        if refused.code == Code.ANSWERS_FULL:  # the example takes no more answers: it goes back to the queue
            Example.objects.filter(pk=example.pk, leased_to=validator).update(leased_to=None, leased_until=None)
        raise
    except _KeyTaken:
        first = replay.with_key(validator, submission_key)
        if first is None:
            raise RuleError(Code.ALREADY_VALIDATED, "You already validated this example.") from None
        shown = Example.objects.select_related("round__task", "context").get(pk=first.example_id)
        return replay.replayed(first, example=shown, validator=validator)


def _record_validation(
    *, example, validator, label, mode="user", metadata=None, expected_state=None, submission_key: str = ""
) -> Validation:
    """The body of ``record_validation``, in one transaction (``_KeyTaken`` when a concurrent
    request with the same submission key wrote first). Its steps:

    1. A known label and mode; the submission key cleaned.
    2. The example row locked; a key already used answers with its validation (``replay``).
    3. The validator may judge the example (``eligibility.check_validator``); an owner may revise.
    4. A gold item served to the validator: a gold check, never a vote (``gold_checks``).
    5. The example is still open to this verdict (``eligibility.check_example``).
    6. The metadata checked (``metadata``); a kind judged image by image derives the vote from it.
    7. The validation stored: an owner's revision, or a new one that counts or not (``standing``).
    8. A new user-mode verdict is a step of the validator's crowd study (``crowd_progress``).
    9. The example's consensus, tallies and lease recomputed (``consensus.settle_example``).
    """
    # 1. A known label and mode.
    if label not in VALIDATION_LABELS:
        raise RuleError(Code.UNKNOWN_LABEL, f"Unknown label '{label}': choose one of {', '.join(VALIDATION_LABELS)}.", field="label")
    if mode not in Validation.Mode.values:
        raise RuleError(Code.UNKNOWN_MODE, f"Unknown mode '{mode}': use 'user' or 'owner'.", field="mode")
    submission_key = idempotency.clean_key(submission_key)
    with transaction.atomic():
        # 2. Lock the example; a repeat of a recorded submission gets its first answer.
        example = (
            Example.objects.select_for_update(of=("self",))
            .select_related("round__task", "context")
            .get(pk=example.pk)
        )
        if submission_key:  # checked under the example's lock: of two requests with one key, one writes
            first = replay.with_key(validator, submission_key)
            if first is not None:
                return replay.replayed(first, example=example, validator=validator)
        task = example.round.task
        # 3. Who may judge it (``previous``: an owner's decision they now revise).
        previous = eligibility.check_validator(example=example, validator=validator, mode=mode)
        # 4. A gold item served to this validator: scored, never a vote.
        if mode == Validation.Mode.USER:
            assignment = gold.open_assignment(example=example, validator=validator)
            if assignment is not None:
                return gold_checks.record_gold_check(
                    example=example, validator=validator, label=label, metadata=metadata, assignment=assignment,
                    submission_key=submission_key,
                )
        # 5. Still open to this verdict: leased to the validator, not stale, not settled, round open.
        eligibility.check_example(example=example, validator=validator, mode=mode, expected_state=expected_state)
        # 6. The metadata the task asks for.
        clean = clean_metadata(example=example, label=label, mode=mode, metadata=metadata or {})
        # A kind judged image by image (text_to_image) derives the vote from the per-image verdicts.
        label = task.spec.validation_label(task.config, example.target, clean.get("image_verdicts"), label)
        # 7. Store it.
        try:
            with transaction.atomic():
                if previous is not None:  # an owner revising their decision
                    previous.label, previous.mode, previous.metadata = label, mode, clean
                    previous.submission_key = submission_key or previous.submission_key
                    previous.save(update_fields=["label", "mode", "metadata", "submission_key"])
                    validation = previous
                else:
                    counts = standing.vote_counts(example=example, validator=validator, mode=mode)
                    validation = Validation.objects.create(
                        example=example, validator=validator, label=label, mode=mode, metadata=clean, counts=counts,
                        submission_key=submission_key,
                    )
        except IntegrityError:
            if submission_key:  # a concurrent request with this key may have written first
                raise _KeyTaken() from None
            raise RuleError(Code.ALREADY_VALIDATED, "You already validated this example.") from None
        # 8. The crowd study's progress.
        if previous is None and mode == Validation.Mode.USER:
            crowd_progress.note_validation(validator=validator, round=example.round)
        # 9. Consensus, tallies, lease.
        consensus.settle_example(example, release_lease_of=validator)
    validation.replayed = False
    return validation


# --- gold items an owner writes ------------------------------------------------------------


@transaction.atomic
def supply_gold_item(*, round, acting_user, input: dict, target: dict, verdict: str):
    """Write a new gold item for ``round``: ``acting_user`` (an owner) writes the example against
    the model in the loop like any annotator (``annotation.services.create_example``, on a
    context the task's strategy picks; ``input`` holds the annotator's fields, ``target`` the
    answer), decides it at once in owner mode with ``verdict`` (``correct`` or ``incorrect``), and
    it becomes a gold item (``gold.mark_gold``). Returns the ``GoldItem``.

    Raises ``NotAllowed`` unless ``acting_user`` owns the task; ``RuleError`` for an unknown
    verdict or input the task refuses (nothing is stored then).
    """
    task = round.task
    if not task.is_owner(acting_user):
        raise NotAllowed(Code.NOT_OWNER, f"Only an owner of task '{task.code}' can write its gold items.")
    if verdict not in GoldItem.Verdict.values:
        raise RuleError("bad_verdict", f"The verdict must be one of {', '.join(GoldItem.Verdict.values)}.", field="verdict")
    context = annotation_contexts.choose_context(round=round)
    example = annotation_services.create_example(user=acting_user, context=context, input=input, target=target)
    # The owner decides their own gold item: the one place an author's verdict on their own
    # example stands (``record_validation`` refuses it for everyone else's examples).
    example = Example.objects.select_for_update(of=("self",)).select_related("round__task").get(pk=example.pk)
    Validation.objects.create(example=example, validator=acting_user, label=verdict, mode=Validation.Mode.OWNER)
    consensus.settle_example(example)
    return gold.mark_gold(example=example, acting_user=acting_user)
