"""Everything that changes a validation's state: recording a verdict, recomputing consensus,
supplying a gold item. (The review queue is ``validation/queue.py``; closing a round into
datasets ``validation/round_close.py``; retraining ``validation/retraining.py``.)

The HTMX review and owner queues, the admin actions, the importer and the benchmark all
call these functions; none keeps its own copy of a rule.
"""

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation import counters, crowd, qualification
from annotation import services as annotation_services
from annotation.models import CrowdStudy, Example, ValidationState
from dynabench import hotsql, idempotency
from dynabench.errors import NotAllowed, RuleError
from tasks import access
from tasks.kinds import normalise_label, span_at
from tasks.models import Round
from tasks.signals import example_settled
from validation import gold, identity
from validation.calculations import (
    CORRECT,
    FLAGGED,
    INCORRECT,
    VALIDATION_LABELS,
    ConsensusPolicy,
    derive_state,
    tally,
)
from validation.error_codes import ValidationErrorCode as Code
from validation.models import GoldAssignment, GoldItem, Validation, ValidatorStanding
from validation.queue import LEASE_DURATION

METADATA_KEYS = ("corrected_label", "corrected_answer", "flag_reason", "explanation", "voted_label", "image_verdicts", "image_categories")
MAX_VOTED_LABEL = 64
MAX_TEXT = 2000
_STATE_NAMES = dict(ValidationState.choices)


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
    ``selectors.round_agreement(field="voted_label")``), ``image_verdicts`` (``{sha256: "unsafe"|"safe"}``
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
    item, the verdict is a gold check instead (``_record_gold_check``): scored against the
    gold verdict on the server, never a vote; the answer looks the same to the validator.
    The task's qualification must be passed first (``annotation.qualification``).

    Of two concurrent requests with one ``submission_key``, the one whose insert loses the
    race answers with the other's validation.

    A user-mode verdict is taken only on an example the review queue leased to ``validator``
    (``next_example_for``; ``Example.leased_to``): a lease that ran out still counts until the
    queue hands the example to someone else.

    Raises ``RuleError`` (400) with a ``ValidationErrorCode`` for bad input, a stale form,
    a settled or retracted example, a validation twice; ``NotAllowed`` (403) for one's own
    example, a validator without the role, owner mode by a non-owner, a user-mode verdict on
    an example not leased to the validator (``not_leased``). Nothing changes then.
    """
    try:
        return _record_validation(
            example=example, validator=validator, label=label, mode=mode, metadata=metadata,
            expected_state=expected_state, submission_key=submission_key,
        )
    except _KeyTaken:
        first = _with_key(validator, submission_key)
        if first is None:
            raise RuleError(Code.ALREADY_VALIDATED, "You already validated this example.") from None
        shown = Example.objects.select_related("round__task", "context").get(pk=first.example_id)
        return _replayed(first, example=shown, validator=validator)


def _with_key_sql() -> str:
    return hotsql.keyed_id_sql(Validation, "validator")


def _with_key(validator, submission_key: str) -> Validation | None:
    """The validator's validation with ``submission_key``, or None: one fixed statement that can
    use the key's index (``hotsql.keyed_id_sql``), then the validation itself if there is one."""
    row = hotsql.fetch_one(hotsql.statement("validation.with_key", _with_key_sql), [validator.pk, submission_key])
    return Validation.objects.get(pk=row[0]) if row else None


def _record_validation(
    *, example, validator, label, mode="user", metadata=None, expected_state=None, submission_key: str = ""
) -> Validation:
    """The body of ``record_validation``, in one transaction (``_KeyTaken`` when a concurrent
    request with the same submission key wrote first)."""
    if label not in VALIDATION_LABELS:
        raise RuleError(Code.UNKNOWN_LABEL, f"Unknown label '{label}': choose one of {', '.join(VALIDATION_LABELS)}.", field="label")
    if mode not in Validation.Mode.values:
        raise RuleError(Code.UNKNOWN_MODE, f"Unknown mode '{mode}': use 'user' or 'owner'.", field="mode")
    submission_key = idempotency.clean_key(submission_key)
    with transaction.atomic():
        example = (
            Example.objects.select_for_update(of=("self",))
            .select_related("round__task", "context")
            .get(pk=example.pk)
        )
        if submission_key:  # checked under the example's lock: of two requests with one key, one writes
            first = _with_key(validator, submission_key)
            if first is not None:
                return _replayed(first, example=example, validator=validator)
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
        if mode == Validation.Mode.USER:
            assignment = gold.open_assignment(example=example, validator=validator)
            if assignment is not None:
                return _record_gold_check(
                    example=example, validator=validator, label=label, metadata=metadata, assignment=assignment,
                    submission_key=submission_key,
                )
        if mode == Validation.Mode.USER and example.leased_to_id != validator.pk:
            # Only what the queue handed out (a gold item, above, by its assignment): otherwise a few accounts could pick one author's
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
        clean = clean_metadata(example=example, label=label, mode=mode, metadata=metadata or {})
        # A kind judged image by image (text_to_image) derives the vote from the per-image verdicts.
        label = task.spec.validation_label(task.config, example.target, clean.get("image_verdicts"), label)
        try:
            with transaction.atomic():
                if previous is not None:  # an owner revising their decision
                    previous.label, previous.mode, previous.metadata = label, mode, clean
                    previous.submission_key = submission_key or previous.submission_key
                    previous.save(update_fields=["label", "mode", "metadata", "submission_key"])
                    validation = previous
                else:
                    counts = mode == Validation.Mode.OWNER
                    if not counts:
                        excluded, crowd_account = gold.vote_standing(task=task, validator=validator)
                        # Only crowd accounts have entry addresses to share (``identity``).
                        counts = not excluded and (
                            not crowd_account or identity.same_person_as(example=example, validator=validator) is None
                        )
                    validation = Validation.objects.create(
                        example=example, validator=validator, label=label, mode=mode, metadata=clean, counts=counts,
                        submission_key=submission_key,
                    )
        except IntegrityError:
            if submission_key:  # a concurrent request with this key may have written first
                raise _KeyTaken() from None
            raise RuleError(Code.ALREADY_VALIDATED, "You already validated this example.") from None
        if previous is None and mode == Validation.Mode.USER:
            crowd.note_progress(user=validator, round=example.round, activity=CrowdStudy.Activity.VALIDATE)
        settle_example(example, release_lease_of=validator)
    validation.replayed = False
    return validation


def _replayed(first: Validation, *, example, validator) -> Validation:
    """``first`` (the validation an earlier submission with the same key recorded) as the answer
    to a repeat: ``replayed`` True, its example as the validator saw it then (a gold check's
    example presented as pending again, as ``_record_gold_check`` answered)."""
    if first.example_id == example.pk:
        if first.gold_check:
            served = GoldAssignment.objects.filter(gold_item__example_id=example.pk, validator=validator).first()
            if served is not None:
                gold.present(example, validator=validator, served_at=served.served_at, lease=LEASE_DURATION)
                example.leased_to_id = example.leased_until = None
        first.example = example
    first.replayed = True
    return first


def _record_gold_check(*, example, validator, label, metadata, assignment, submission_key: str = "") -> Validation:
    """Store ``validator``'s answer to a gold item served to them (``assignment``), update their
    standing and, when it changed, the consensus of the examples they voted on; return the
    validation with the example presented as pending, as after any vote that does not settle.
    Call inside ``record_validation``'s transaction (the example row locked)."""
    clean = clean_metadata(example=example, label=label, mode=Validation.Mode.USER, metadata=metadata or {})
    validation = Validation.objects.create(
        example=example, validator=validator, label=label, mode=Validation.Mode.USER, metadata=clean,
        counts=False, gold_check=True, submission_key=submission_key,
    )
    assignment.answered_at = timezone.now()
    assignment.save(update_fields=["answered_at"])
    crowd.note_progress(user=validator, round=example.round, activity=CrowdStudy.Activity.VALIDATE)
    changed = gold.update_standing(task=example.round.task, validator=validator)
    if changed is not None:
        apply_standing(changed)
    gold.present(example, validator=validator, served_at=assignment.served_at, lease=LEASE_DURATION)
    example.leased_to_id = example.leased_until = None
    validation.replayed = False
    return validation


def apply_standing(standing: ValidatorStanding) -> int:
    """Make the votes of ``standing.validator`` on ``standing.task`` count or stop counting, as
    ``standing.excluded`` says, and recompute the consensus of every example it changes; return
    how many examples were recomputed.

    Only examples of open rounds that are not gold items are touched: a closed round's
    datasets stay as they were built. An example that loses its settling votes is pending
    again and goes back to the review queue. Rows are locked in id order.
    """
    counts = not standing.excluded
    votes = Validation.objects.filter(
        validator_id=standing.validator_id, mode=Validation.Mode.USER, gold_check=False,
        example__round__task_id=standing.task_id, example__round__status=Round.Status.OPEN,
        example__gold__isnull=True,
    ).exclude(counts=counts)
    with transaction.atomic():
        rows = list(votes.order_by("pk").values_list("pk", "example_id"))
        if counts:
            # Reinstated votes count only where this validator is a distinct worker (``identity``).
            distinct = []
            for pk, example_id in rows:
                example = Example(pk=example_id, author_id=Example.objects.values_list("author_id", flat=True).get(pk=example_id))
                if identity.same_person_as(example=example, validator=standing.validator) is None:
                    distinct.append((pk, example_id))
            rows = distinct
        Validation.objects.filter(pk__in=[pk for pk, _ in rows]).update(counts=counts)
        examples = (
            Example.objects.select_for_update(of=("self",))
            .filter(pk__in=sorted({e for _, e in rows}))
            .select_related("round__task")
            .order_by("pk")
        )
        recomputed = 0
        for example in examples:
            settle_example(example)
            recomputed += 1
        standing.recomputed_examples = recomputed
        standing.save(update_fields=["recomputed_examples"])
    return recomputed


def clean_metadata(*, example, label, mode, metadata) -> dict:
    """Return the validation metadata the task asks for, checked; raise ``RuleError`` naming the field.

    Blank values are dropped. A correction (``corrected_label``/``corrected_answer``) goes with
    ``incorrect``, or with ``correct`` in owner mode (an owner accepting with a fix).
    """
    if not isinstance(metadata, dict):
        raise RuleError(Code.UNKNOWN_METADATA, "Metadata must be an object.", field="metadata")
    data = {k: v for k, v in metadata.items() if v not in (None, "", {}, [])}
    unknown = sorted(set(data) - set(METADATA_KEYS))
    if unknown:
        raise RuleError(Code.UNKNOWN_METADATA, f"Unknown metadata {unknown}: use {', '.join(METADATA_KEYS)}.", field=unknown[0])
    task = example.round.task
    for key in ("flag_reason", "explanation"):
        if key in data:
            if not isinstance(data[key], str):
                raise RuleError(Code.UNKNOWN_METADATA, f"{key} must be text.", field=key)
            data[key] = data[key].strip()[:MAX_TEXT]
    if "voted_label" in data:
        voted = data["voted_label"]
        if not isinstance(voted, str) or not voted.strip() or len(voted.strip()) > MAX_VOTED_LABEL:
            raise RuleError(Code.UNKNOWN_METADATA, f"voted_label must be a category name of 1 to {MAX_VOTED_LABEL} characters.", field="voted_label")
        data["voted_label"] = voted.strip()
    if "image_verdicts" in data:
        data["image_verdicts"] = task.spec.clean_image_verdicts(task.config, example.target, example.model_output, data["image_verdicts"])
    if "image_categories" in data:
        data["image_categories"] = task.spec.clean_image_categories(task.config, data.get("image_verdicts") or {}, data["image_categories"])
    if label == FLAGGED and not data.get("flag_reason"):
        raise RuleError(Code.FLAG_REASON_REQUIRED, "Say why you flag this example (flag reason).", field="flag_reason")
    correcting = {"corrected_label", "corrected_answer"} & set(data)
    if correcting and not (label == INCORRECT or (label == CORRECT and mode == Validation.Mode.OWNER)):
        raise RuleError(
            Code.CORRECTION_NOT_ALLOWED,
            "A correction goes with the label 'incorrect' (or 'correct' in owner mode).",
            field=sorted(correcting)[0],
        )
    if "corrected_label" in data:
        if task.spec.correction_field != "corrected_label":
            raise RuleError(Code.CORRECTED_LABEL_UNKNOWN, "This task has no labels; correct the answer span instead.", field="corrected_label")
        value = normalise_label(task.config, data["corrected_label"])
        if value is None:
            raise RuleError(
                Code.CORRECTED_LABEL_UNKNOWN,
                f"Corrected label '{data['corrected_label']}' is not a label of {task.code}: choose one of {', '.join(task.labels)}.",
                field="corrected_label",
            )
        data["corrected_label"] = value
    if "corrected_answer" in data:
        if task.spec.correction_field != "corrected_answer":
            raise RuleError(Code.CORRECTED_ANSWER_NOT_A_SPAN, "Only extractive QA examples take a corrected answer.", field="corrected_answer")
        data["corrected_answer"] = _answer_span(example, data["corrected_answer"])
    return data


def passage_of(example) -> str | None:
    """Return the passage of an example (its input, else its context), or None when its task kind has none."""
    task = example.round.task
    return task.spec.passage_of(task.config, example.input, example.context.data)


def _answer_span(example, answer) -> dict:
    passage = passage_of(example)
    if isinstance(answer, str):
        answer = {"text": answer}
    text = answer.get("text") if isinstance(answer, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise RuleError(Code.CORRECTED_ANSWER_NOT_A_SPAN, "The corrected answer needs its text.", field="corrected_answer")
    start = answer.get("answer_start")
    if start in (None, ""):
        start = passage.find(text)
    try:
        start = int(start)
    except (TypeError, ValueError):
        start = -1
    if not span_at(passage, text=text, start=start):
        raise RuleError(
            Code.CORRECTED_ANSWER_NOT_A_SPAN,
            f"The corrected answer '{text[:80]}' is not a span of the passage: select it in the passage.",
            field="corrected_answer",
        )
    return {"text": text, "answer_start": start}


def settle_example(example, *, release_lease_of=None) -> str:
    """Recompute ``example``'s state and counters from its counted validations
    (``Validation.counts``) under the task's ``ConsensusPolicy`` and save them.

    Call inside the transaction that changed its validations, with the row locked (``example``
    as read under the lock: its old state is what the round's tally counted). The round's and
    author's tallies (``annotation.counters``) move from the old state to the new one.
    Returns the new state. The lease is cleared
    once the example is settled, or when it is held by ``release_lease_of`` (the validator who just judged it).
    """
    rows = list(Validation.objects.filter(example_id=example.pk, counts=True).order_by("id").values_list("label", "mode"))
    state = derive_state(rows, ConsensusPolicy.from_config(example.round.task.config))
    fields = {**tally(label for label, _ in rows), "validation_state": state}
    if state != ValidationState.PENDING or (release_lease_of is not None and example.leased_to_id == release_lease_of.pk):
        fields.update(leased_to=None, leased_until=None)
    Example.objects.filter(pk=example.pk).update(**fields)
    counters.count_change(
        round_id=example.round_id, author_id=example.author_id, before=counters.contribution_of(example),
        after=counters.contribution(
            model_wrong=example.model_wrong, retracted=example.retracted, validation_state=state,
            validation_count=fields["validation_count"],
        ),
        example=example,
    )
    previous = example.validation_state
    for name, value in fields.items():
        setattr(example, name if name != "leased_to" else "leased_to_id", value)
    if state != previous and state != ValidationState.PENDING:
        example_id, author_id = example.pk, example.author_id
        transaction.on_commit(lambda: example_settled.send(
            sender=Example, example_id=example_id, author_id=author_id, state=str(state),
        ))
    return state


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
    context = annotation_services.choose_context(round=round)
    example = annotation_services.create_example(user=acting_user, context=context, input=input, target=target)
    # The owner decides their own gold item: the one place an author's verdict on their own
    # example stands (``record_validation`` refuses it for everyone else's examples).
    example = Example.objects.select_for_update(of=("self",)).select_related("round__task").get(pk=example.pk)
    Validation.objects.create(example=example, validator=acting_user, label=verdict, mode=Validation.Mode.OWNER)
    settle_example(example)
    return gold.mark_gold(example=example, acting_user=acting_user)
