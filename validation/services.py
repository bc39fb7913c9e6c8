"""Everything that changes validation state: recording a verdict, the review queue's
lease, recomputing consensus, closing a round into datasets, and retraining the target
model from the validated examples (the round lifecycle lives here).

The HTMX review and owner queues, the admin actions, the importer and the benchmark all
call these functions; none keeps its own copy of a rule.
"""

import uuid
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from annotation import counters, crowd, crowd_setup, qualification
from annotation import contexts as annotation_contexts
from annotation import services as annotation_services
from annotation.models import CrowdStudy, Example, ValidationState
from dynabench import hotsql, idempotency
from dynabench.errors import NotAllowed, RuleError
from dynabench.ratelimits import count_hit
from tasks import access
from tasks.loop import training
from tasks.kinds import normalise_label, span_at
from tasks.models import Dataset, DatasetItem, MLModel, Round, Task, TaskBan, default_label_visibility
from tasks.selectors import evaluable_models
from tasks.services import DEFAULT_MIN_SCORING_ITEMS, open_round, record_dataset_content
from tasks.signals import example_settled, round_status_changed
from validation import gold, identity, selectors
from validation.calculations import (
    CORRECT,
    FLAGGED,
    INCORRECT,
    SPLITS,
    VALIDATION_LABELS,
    ConsensusPolicy,
    assign_splits,
    derive_state,
    merged_sizes,
    small_split_plan,
    split_sizes,
    tally,
)
from validation.error_codes import ValidationErrorCode as Code
from validation.jobs import enqueue_retraining, retraining_name
from validation.models import GoldAssignment, GoldItem, Validation, ValidatorStanding

LEASE_DURATION = timedelta(minutes=10)
METADATA_KEYS = ("corrected_label", "corrected_answer", "flag_reason", "explanation", "voted_label", "image_verdicts", "image_categories")
MAX_VOTED_LABEL = 64
MAX_TEXT = 2000
DEFAULT_SPLIT_RATIOS = {"train": 0.8, "dev": 0.1, "test": 0.1}
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


# --- the review queue -------------------------------------------------------------------

def review_queue(*, validator, round, model_wrong: bool, now=None, exclude_ids=()):
    """Return the queryset of examples ``validator`` may be handed in ``round``, queue order.

    Pending, not retracted, not their own, not already judged by them, not leased to
    someone else, not written by someone banned from the task (``tasks.models.TaskBan``),
    below the task's vote budget (``ConsensusPolicy.max_votes``: an example that used it up
    unsettled waits for an owner); ``model_wrong`` selects fooling or non-fooling examples;
    fewest validations first, then oldest. Fits the index ``example_review_queue``.
    """
    now = now or timezone.now()
    max_votes = ConsensusPolicy.from_config(round.task.config).max_votes
    judged = Validation.objects.filter(example=OuterRef("pk"), validator=validator)
    queue = (
        Example.objects.filter(
            round=round, validation_state=ValidationState.PENDING, model_wrong=model_wrong, retracted=False,
            validation_count__lt=max_votes,
        )
        .exclude(author=validator)
        .exclude(Exists(TaskBan.objects.filter(task_id=round.task_id, user_id=OuterRef("author_id"))))
        .filter(Q(leased_until__isnull=True) | Q(leased_until__lte=now) | Q(leased_to=validator))
        .filter(~Exists(judged))
        .order_by("validation_count", "created_at")
    )
    if exclude_ids:
        queue = queue.exclude(pk__in=list(exclude_ids))
    return queue


def current_example_for(*, validator, round, exclude_ids=()) -> Example | None:
    """Return the example ``validator`` holds a live lease on in ``round`` (pending, not
    retracted, not judged by them, not in ``exclude_ids``), else ``next_example_for``.
    The review page calls this on load, so reloading shows the same example (or the same
    gold item: ``gold.open_gold_for``)."""
    served = gold.open_gold_for(validator=validator, round=round, lease=LEASE_DURATION, exclude_ids=exclude_ids)
    if served is not None:
        return served
    mine = (
        Example.objects.filter(
            round=round, leased_to=validator, leased_until__gt=timezone.now(),
            validation_state=ValidationState.PENDING, retracted=False,
        )
        .exclude(pk__in=list(exclude_ids))
        .filter(~Exists(Validation.objects.filter(example=OuterRef("pk"), validator=validator)))
        .select_related("context", "round__task")
        .first()
    )
    return mine or next_example_for(validator=validator, round=round, exclude_ids=exclude_ids)


def next_example_for(*, validator, round, exclude_ids=()) -> Example | None:
    """Give back whatever ``validator`` holds in ``round`` and lease them the next example; or None.

    Order: fooling examples first (non-fooling too when the task's ``validate_non_fooling``
    is set), fewest validations, oldest; never their own, never one they judged, never a
    retracted or settled one; ``exclude_ids`` (examples they skipped) left out.

    Claiming, one implementation for both databases: the same ``review_queue`` query; on
    PostgreSQL its first row is locked with ``SELECT … FOR UPDATE SKIP LOCKED`` and leased
    in the same ``UPDATE … RETURNING`` statement (two validators never wait on or take the
    same row); elsewhere (SQLite) a few candidates are read and each is leased with a
    conditional UPDATE that succeeds only while the lease is free (``== 1`` row). The lease
    lasts ``LEASE_DURATION`` (10 minutes); an abandoned example comes back after that.

    Gold items are mixed in first: with probability ``gold_rate`` the validator gets a gold
    item instead (``gold.serve``, presented as a pending example; their leases in the round
    are given back the same way).
    """
    if not round.task.collecting:
        return None
    served = gold.serve(validator=validator, round=round, lease=LEASE_DURATION, exclude_ids=exclude_ids)
    if served is not None:
        Example.objects.filter(round=round, leased_to=validator).update(leased_to=None, leased_until=None)
        served.round = round
        return served
    now = timezone.now()
    kinds = [True, False] if round.task.config.get("validate_non_fooling") else [True]
    if connection.features.has_select_for_update_skip_locked:
        for n, model_wrong in enumerate(kinds):
            queue = review_queue(validator=validator, round=round, model_wrong=model_wrong, now=now, exclude_ids=exclude_ids)
            example = _claim_first_skip_locked(queue, validator=validator, now=now, release_in=round if n == 0 else None)
            if example is not None:
                example.round = round
                return example
        return None
    Example.objects.filter(round=round, leased_to=validator).update(leased_to=None, leased_until=None)
    while True:
        found_any = False
        with transaction.atomic():
            for model_wrong in kinds:
                queue = review_queue(validator=validator, round=round, model_wrong=model_wrong, now=now, exclude_ids=exclude_ids)
                candidates = list(queue.only("pk")[:4])
                found_any = found_any or bool(candidates)
                for candidate in candidates:
                    if _claim(candidate.pk, validator=validator, now=now):
                        return Example.objects.select_related("context", "round__task").get(pk=candidate.pk)
                if candidates:
                    break  # all taken meanwhile: look again from the top
        if not found_any:
            return None
        now = timezone.now()


def _claim_first_skip_locked(queue, *, validator, now, release_in):
    """PostgreSQL: lock the first free example of ``queue`` (``FOR UPDATE SKIP LOCKED``) and
    lease it in one ``UPDATE … RETURNING`` statement; return it, or None. With
    ``release_in`` (a round) the validator's leases in that round are given back first, in
    the same transaction.

    Rows another claim holds are skipped; a row whose lease was taken meanwhile fails
    PostgreSQL's re-check under the lock and the scan moves on. When the claim is its own
    transaction it is sent as one round trip together with ``SET LOCAL synchronous_commit
    = off``: only a lease is written, and a lease lost in a server crash just returns the
    example to the queue (validations keep synchronous commit).
    """
    table = connection.ops.quote_name(Example._meta.db_table)
    plain, params = queue.values("pk")[:1].query.sql_with_params()
    locked = f"{plain} {connection.ops.for_update_sql(skip_locked=True, of=(table,))}"
    fields = Example._meta.concrete_fields
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    claim = f"UPDATE {table} SET leased_to_id = %s, leased_until = %s WHERE id = ({locked}) RETURNING {columns}"
    release = f"UPDATE {table} SET leased_to_id = NULL, leased_until = NULL WHERE round_id = %s AND leased_to_id = %s"
    one_string = not connection.in_atomic_block and not connection.settings_dict["OPTIONS"].get("server_side_binding")
    claim_params = [validator.pk, now + LEASE_DURATION, *params]
    release_first = release_in is not None
    release_params = [release_in.pk, validator.pk] if release_first else []
    with connection.cursor() as cursor:
        if one_string:
            # One simple-protocol query string runs as one implicit transaction: one round trip.
            statements = ["SET LOCAL synchronous_commit = off"] + ([release] if release_first else []) + [claim]
            cursor.execute("; ".join(statements), release_params + claim_params)
            for _ in range(len(statements) - 1):
                cursor.nextset()
        else:
            if release_first:
                cursor.execute(release, release_params)
            cursor.execute(claim, claim_params)
        row = cursor.fetchone()
    if row is None:
        return None
    values = [f.from_db_value(v, None, connection) if hasattr(f, "from_db_value") else v for f, v in zip(fields, row)]
    return Example.from_db(connection.alias, [f.attname for f in fields], values)


def _claim(pk, *, validator, now) -> bool:
    free = Q(leased_until__isnull=True) | Q(leased_until__lte=now) | Q(leased_to=validator)
    return (
        Example.objects.filter(free, pk=pk, validation_state=ValidationState.PENDING)
        .update(leased_to=validator, leased_until=now + LEASE_DURATION)
        == 1
    )


def note_skip(*, validator, round) -> int:
    """Count one skip by ``validator`` in ``round``; return how many they have left today.

    At most ``settings.VALIDATION_SKIPS_PER_DAY`` (0: no limit) a day (fixed 24 h window, kept in
    the cache so it survives a new session): otherwise skipping until the queue hands out a
    chosen example would undo the lease rule (``record_validation`` takes only leased examples).
    Raises ``RuleError`` (429, ``too_many_skips``) past the limit; nothing is skipped then.
    """
    limit = settings.VALIDATION_SKIPS_PER_DAY
    if limit <= 0:
        return -1
    count, resets_in = count_hit(f"validation-skip:{validator.pk}:{round.pk}", window_s=86400)
    if count > limit:
        hours = max(1, -(-resets_in // 3600))
        raise RuleError(
            Code.TOO_MANY_SKIPS,
            f"You skipped {limit} examples in this round today, the most allowed. Validate this one (flag it if it "
            f"cannot be judged), or come back in {hours} hour{'s' if hours != 1 else ''}.",
            status_code=429,
        )
    return limit - count


def release_lease(*, example, validator) -> bool:
    """Give ``example`` back to the queue if ``validator`` holds its lease (or forget the gold
    item it was served as); True if released."""
    released = Example.objects.filter(pk=example.pk, leased_to=validator).update(leased_to=None, leased_until=None) == 1
    return gold.give_back(example=example, validator=validator) or released


# --- closing a round into datasets --------------------------------------------------------

def dataset_name(round, split) -> str:
    """Return the dataset name of ``round``'s ``split``: ``<task>-r<N>-<split>``."""
    return f"{round.task.code}-r{round.number}-{split}"


def _check_ratios(ratios) -> dict[str, float]:
    if not isinstance(ratios, dict) or set(ratios) != set(SPLITS):
        raise RuleError(Code.BAD_RATIOS, "Split ratios need exactly train, dev and test.", field="ratios")
    try:
        values = {s: float(ratios[s]) for s in SPLITS}
    except (TypeError, ValueError):
        raise RuleError(Code.BAD_RATIOS, "Split ratios must be numbers.", field="ratios") from None
    if any(v < 0 or v > 1 for v in values.values()) or abs(sum(values.values()) - 1) > 1e-6:
        raise RuleError(Code.BAD_RATIOS, f"Split ratios must be between 0 and 1 and sum to 1 (they sum to {sum(values.values()):g}).", field="ratios")
    return values


NEXT_LOOP_CHOICES = ("current", "retrained")
"""Who is in the loop of the round opened by ``close_round(open_next=...)``: the closed round's
models, or a model retrained on every validated example so far (trained in the background; it
takes the loop of the new round when its training finishes, the current models hold it until then)."""


@dataclass
class RoundClosePreview:
    """What closing ``round`` would do (``preview_round_close``), shown before the owner confirms.

    ``validated``: validated-correct examples; ``sizes``: ``{train, dev, test}`` item counts (after
    any merge); ``names``: the dataset name per split; ``models``: the model records that will be
    scored on the new dev and test sets; ``problems``: why closing is refused now (empty when it
    may close), e.g. a test split below the task's minimum; ``closed``: the round is already closed
    (closing again changes nothing); ``min_items``: the fewest items a dev or test set may hold
    (``Task.config["min_scoring_items"]``); ``merge_small``: the owner asked to merge small scoring
    splits; ``merges``: ``{split: split it joins}`` (``calculations.small_split_plan``), applied
    only with ``merge_small``; ``notes``: what the merge does, in words; ``warnings``: what the
    owner should know but that does not refuse the close (a scoring set far smaller than the
    task's other scoring sets, with the same weight in the Dynascore).
    """

    round: Round
    ratios: dict
    seed: int
    validated: int
    sizes: dict
    names: dict
    models: list
    problems: list
    closed: bool
    min_items: int = 1
    merge_small: bool = False
    merges: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    @property
    def can_close(self) -> bool:
        return not self.problems and not self.closed

    @property
    def written(self) -> list[str]:
        """The splits that get a dataset: every split, less those merged away."""
        return [s for s in SPLITS if not (self.merge_small and s in self.merges)]

    def as_dict(self) -> dict:
        """JSON shape of the preview (the API's ``GET .../close``)."""
        return {
            "round": self.round.number, "status": self.round.status, "closed": self.closed, "can_close": self.can_close,
            "ratios": self.ratios, "seed": self.seed, "validated": self.validated,
            "splits": [{"split": s, "dataset": self.names[s], "items": self.sizes[s]} for s in SPLITS],
            "models_rescored": [{"id": m.pk, "name": m.name, "published": m.published} for m in self.models],
            "problems": self.problems, "min_scoring_items": self.min_items, "merge_small": self.merge_small,
            "merges": self.merges if self.merge_small else {}, "notes": self.notes, "warnings": self.warnings,
        }


def _close_settings(task, ratios, seed) -> tuple[dict, int]:
    ratios = _check_ratios(ratios if ratios is not None else task.config.get("split_ratios", DEFAULT_SPLIT_RATIOS))
    return ratios, int(seed if seed is not None else task.config.get("split_seed", 0))


SMALL_SET_FACTOR = 10
"""A new scoring set this many times smaller than the task's largest other scoring set gets a warning in the preview."""


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def preview_round_close(round: Round, *, ratios=None, seed=None, merge_small: bool = False) -> RoundClosePreview:
    """Return what closing ``round`` would do: validated examples per split, the datasets written,
    the models re-scored on them, and the problems that refuse it (``close_round`` checks the same).

    A dev or test split below the task's ``min_scoring_items`` (default 1: an empty one) is a
    problem, unless ``merge_small``: then the small scoring splits merge
    (``calculations.small_split_plan``: dev into test when together they reach the minimum, else
    both into train, so the round adds no scoring set) and ``notes`` say so. A scoring set at
    least ``SMALL_SET_FACTOR`` times smaller than the task's largest other scoring set is a
    warning (it weighs as much in the Dynascore). Raises ``RuleError`` for bad ratios.
    """
    task = round.task
    ratios, seed = _close_settings(task, ratios, seed)
    min_items = int(task.config.get("min_scoring_items") or DEFAULT_MIN_SCORING_ITEMS)
    validated = selectors.validated_queryset(round=round).count()
    sizes = split_sizes(validated, ratios)
    plan = small_split_plan(sizes, min_items=min_items)
    problems, notes, warnings = [], [], []
    at = f"at ratios {ratios['train']:g}/{ratios['dev']:g}/{ratios['test']:g}"
    if plan and not merge_small:
        for split in ("dev", "test"):
            if sizes[split] == 0 and min_items <= 1:
                problems.append(f"The {split} split would be empty: {_plural(validated, 'validated example')} {at}. "
                                "Validate more examples or change the ratios.")
            elif sizes[split] < min_items:
                problems.append(
                    f"The {split} set would hold {_plural(sizes[split], 'item')}, fewer than the minimum of {min_items} "
                    f"this task sets for a scoring set ({_plural(validated, 'validated example')} {at}). Validate more "
                    "examples, change the ratios, or merge the small scoring splits."
                )
    elif plan and validated == 0:
        problems.append("No validated example in this round: there is nothing to build datasets from.")
    elif plan:
        sizes = merged_sizes(sizes, plan)
        if plan == {"dev": "test"}:
            notes.append(f"Dev and test merge into one test set of {_plural(sizes['test'], 'item')} (each alone is below the "
                         f"minimum of {min_items}); no dev set is written for this round.")
        else:
            notes.append(f"Dev and test together hold fewer than {min_items} items: every validated example goes into "
                         "train, and this round adds no scoring set to the Dynascore.")
    largest = (Dataset.objects.filter(task=task, access=Dataset.Access.SCORING, item_count__gt=0)
               .exclude(round=round).order_by("-item_count").first())
    if largest is not None and not problems:
        for split in ("dev", "test"):
            if 0 < sizes[split] and sizes[split] * SMALL_SET_FACTOR <= largest.item_count:
                warnings.append(
                    f"The {split} set would hold {_plural(sizes[split], 'item')}, yet weigh in the Dynascore as much as "
                    f"{largest.name} ({_plural(largest.item_count, 'item')}); its score will be noisy. Consider validating "
                    "more, a larger minimum (Settings), or merging."
                )
    return RoundClosePreview(
        round=round, ratios=ratios, seed=seed, validated=validated, sizes=sizes,
        names={split: dataset_name(round, split) for split in SPLITS}, models=evaluable_models(task),
        problems=problems, closed=round.status == Round.Status.CLOSED, min_items=min_items,
        merge_small=merge_small, merges=plan, notes=notes, warnings=warnings,
    )


def close_round(
    *, round, acting_user, ratios=None, seed=None, open_next=False, next_loop="current", merge_small: bool = False,
) -> list[Dataset]:
    """Close ``round`` and build its train/dev/test datasets from its verified-correct examples.

    ``ratios``: ``{"train", "dev", "test"}`` summing to 1 (default the task's
    ``split_ratios``, else 0.8/0.1/0.1); ``seed``: default the task's ``split_seed``, else 0.
    The split is ``calculations.assign_splits`` (a hash of seed and example id: the same
    examples, ratios and seed always give the same split); it is written to
    ``Example.split`` and to three ``Dataset`` rows ``<task>-r<N>-train|dev|test`` (train
    ``standard`` with public labels; dev and test ``scoring`` with hidden labels) whose items carry
    ``input``, ``target`` (the final label of ``selectors.validated_examples``) and ``tag``.
    Writing the datasets sends ``leaderboard_inputs_changed``: every model is scored on them once
    the close commits.

    The round's crowd studies end with it (``annotation.crowd_setup.end_studies``).

    Safe to repeat: the round is claimed with a conditional UPDATE (``open`` → ``closed``), so of
    two concurrent or repeated closes exactly one builds the datasets; the other (and any close of
    a closed round) changes nothing and returns the round's existing datasets.

    ``open_next``: open round N+1 in the same step, with the closed round's active contexts and loop
    rule, and ``next_loop`` in the loop: ``"current"``
    (the closed round's models) or ``"retrained"`` (a model retrained on every validated example,
    ``request_retraining``; it takes the new round's loop when its training finishes).

    A dev or test split below the task's ``min_scoring_items`` refuses the close (``small_split``;
    ``empty_split`` when it would be empty), unless ``merge_small``: then the small scoring splits
    merge as ``preview_round_close`` shows (``calculations.small_split_plan``) and only the splits
    that keep items get a dataset.

    Raises ``NotAllowed`` unless ``acting_user`` owns the task; ``RuleError`` for bad ratios, a
    small or empty dev or test split (nothing changes) or an unknown ``next_loop``.
    Returns the datasets written, in train, dev, test order.
    """
    task = round.task
    if not task.is_owner(acting_user):
        raise NotAllowed(Code.NOT_OWNER, f"Only an owner of task '{task.code}' can close its rounds.")
    if next_loop not in NEXT_LOOP_CHOICES:
        raise RuleError(Code.BAD_NEXT_LOOP, f"next_loop must be one of {', '.join(NEXT_LOOP_CHOICES)}.", field="next_loop")
    preview = preview_round_close(round, ratios=ratios, seed=seed, merge_small=merge_small)
    ratios, seed = preview.ratios, preview.seed
    if preview.problems and not preview.closed:
        empty = [s for s in ("dev", "test") if preview.sizes[s] == 0]
        if empty and not merge_small:
            raise RuleError(
                Code.EMPTY_SPLIT,
                f"Round {round.number} was not closed: its {' and '.join(empty)} split{'s' if len(empty) > 1 else ''} would be empty "
                f"({preview.validated} validated examples at ratios {ratios['train']:g}/{ratios['dev']:g}/{ratios['test']:g}). "
                "Validate more examples, change the ratios" + (", or merge the small scoring splits." if preview.min_items > 1 else "."),
            )
        raise RuleError(Code.SMALL_SPLIT, f"Round {round.number} was not closed: " + " ".join(preview.problems))
    plan = preview.merges if merge_small else {}
    with transaction.atomic():
        claimed = Round.objects.filter(pk=round.pk, status=Round.Status.OPEN).update(status=Round.Status.CLOSED, end=timezone.now())
        if not claimed:
            existing = Dataset.objects.filter(round_id=round.pk, split__in=SPLITS, name__in=list(preview.names.values()))
            return sorted(existing, key=lambda d: SPLITS.index(d.split))
        round = Round.objects.select_related("task").get(pk=round.pk)
        crowd_setup.end_studies(round)  # its crowd studies end with it: workers get a page saying so
        closed_id = round.pk
        transaction.on_commit(lambda: round_status_changed.send(sender=Round, round_id=closed_id, status=str(Round.Status.CLOSED)))
        validated = selectors.validated_examples(round=round)
        examples = [v.example for v in validated]
        targets = {v.example.pk: v.target for v in validated}
        splits = assign_splits([e.pk for e in examples], ratios=ratios, seed=seed)
        splits = {pk: plan.get(split, split) for pk, split in splits.items()}
        empty = [s for s in ("dev", "test") if s not in plan and s not in set(splits.values())]
        if empty:
            raise RuleError(
                Code.EMPTY_SPLIT,
                f"Round {round.number} was not closed: its {' and '.join(empty)} split{'s' if len(empty) > 1 else ''} would be empty "
                f"({len(examples)} validated examples at ratios {ratios['train']:g}/{ratios['dev']:g}/{ratios['test']:g}). "
                "Validate more examples or change the ratios.",
            )
        Example.objects.filter(round=round).exclude(pk__in=list(splits)).exclude(split="").update(split="")
        datasets = []
        for split in SPLITS:
            if split in plan:
                continue
            chosen = [e for e in examples if splits[e.pk] == split]
            Example.objects.filter(pk__in=[e.pk for e in chosen]).exclude(split=split).update(split=split)
            items = [
                DatasetItem(
                    uid=f"e{e.pk}",
                    input=e.input,
                    target=targets[e.pk],
                    tag=e.tag or e.context.tag,
                    metadata={"example_id": e.pk, "context_uid": e.context.uid, "model_wrong": e.model_wrong},
                )
                for e in chosen
            ]
            access = Dataset.Access.STANDARD if split == "train" else Dataset.Access.SCORING
            description = (f"Verified-correct examples of {round}, {split} split "
                           f"(ratios {ratios['train']:g}/{ratios['dev']:g}/{ratios['test']:g}, seed {seed}).")
            dataset, _ = Dataset.objects.update_or_create(
                task=task,
                name=dataset_name(round, split),
                defaults={"round": round, "split": split, "access": access, "description": description},
                create_defaults={
                    "round": round, "split": split, "access": access, "description": description,
                    "label_visibility": default_label_visibility(split=split, access=access),
                },
            )
            dataset.items.all().delete()
            for item in items:
                item.dataset = dataset
            DatasetItem.objects.bulk_create(items, batch_size=1000)
            record_dataset_content(dataset, source=f"round {round.number}, {split} split")
            datasets.append(dataset)
        if open_next:
            _open_next_round(round, acting_user=acting_user, next_loop=next_loop)
    return datasets


def _open_next_round(round: Round, *, acting_user, next_loop: str) -> Round:
    """Open round N+1 with the closed round's models in the loop, its loop rule and its active
    contexts carried over (as the console's "Open the next round" does by default: without them
    annotators could not write in it); with ``next_loop="retrained"`` also request a retrained model
    that takes that loop when its training finishes."""
    current = [m.pk for m in round.target_models.all()]
    new_round = open_round(task=round.task, acting_user=acting_user, target_model_ids=current, loop_rule=round.loop_rule,
                           contexts_from=round.number)
    if next_loop == "retrained":
        request_retraining(task=round.task, acting_user=acting_user, loop_of_round=new_round)
    return new_round


# --- retraining -------------------------------------------------------------------------


@transaction.atomic
def request_retraining(
    *, task: Task, acting_user, name: str | None = None, epochs: int | None = None, loop_of_round: Round | None = None
) -> MLModel:
    """Create a new target-model record of ``task`` (status ``training``) and enqueue its training.

    The RQ job (``validation.jobs.retrain_from_validated`` on the ``training`` queue, enqueued when
    the transaction commits) trains MiniLM on the task's validated examples plus the seed set
    and fills in the record. ``name`` (a slug, unique in the task) defaults to
    ``minilm-retrained-<timestamp>``; ``epochs`` overrides the default number of epochs.
    ``loop_of_round``: an open round whose loop the model takes once trained
    (``validation.jobs.retrain_from_validated``). Once trained, the model is scored on every dataset
    of the task (``tasks.loop.training`` sends ``leaderboard_inputs_changed``).

    Raises ``NotAllowed`` unless ``acting_user`` owns the task (or is an admin);
    ``RuleError`` when the task has no validated example yet or the name is bad or taken.
    """
    if not task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"Only owners of {task.code} may retrain its target model.")
    validated = selectors.validated_queryset(task=task).count()
    if not validated:
        raise RuleError(
            "no_validated_examples",
            f"Task {task.code} has no example validated as correct yet; retraining would only repeat the seed model.",
        )
    if epochs is not None and not 1 <= epochs <= 100:
        raise RuleError("bad_epochs", "epochs must be between 1 and 100.", field="epochs")
    name = training.check_model_name(task, name or retraining_name())
    job_id = f"retrain-{task.code}-{uuid.uuid4().hex}"
    ml_model = MLModel.objects.create(
        task=task, owner=acting_user, name=name, kind=MLModel.Kind.HF_DIRECTORY, status=MLModel.Status.TRAINING,
        path=str(training.model_directory(task, name)),
        description=f"MiniLM retrained for {task.name} on {validated} validated examples plus the seed set.",
        training_info={"job_id": job_id, "requested_by": acting_user.pk, "requested_at": timezone.now().isoformat(),
                       "validated_at_request": validated,
                       **({"loop_of_round": loop_of_round.pk} if loop_of_round is not None else {})},
    )
    transaction.on_commit(lambda: enqueue_retraining(task.pk, model_id=ml_model.pk, job_id=job_id, epochs=epochs))
    return ml_model


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
    settle_example(example)
    return gold.mark_gold(example=example, acting_user=acting_user)
