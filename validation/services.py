"""Everything that changes validation state: recording a verdict, the review queue's
lease, recomputing consensus, and closing a round into datasets.

The HTMX review and owner queues, the admin actions, the importer and the benchmark all
call these functions; none keeps its own copy of a rule.
"""

import hashlib
import json
from datetime import timedelta

from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from annotation.models import Example, ValidationState
from dynabench.errors import NotAllowed, RuleError
from dynabench.roles import has_role
from tasks.config import normalise_label
from tasks.services import set_round_status
from tasks.models import Dataset, DatasetItem, Round, TaskKind
from validation.calculations import (
    CORRECT,
    FLAGGED,
    INCORRECT,
    SPLITS,
    VALIDATION_LABELS,
    assign_splits,
    derive_state,
    tally,
)
from validation.error_codes import ValidationErrorCode as Code
from validation.models import Validation

LEASE_DURATION = timedelta(minutes=10)
METADATA_KEYS = ("corrected_label", "corrected_answer", "flag_reason", "explanation", "voted_label")
MAX_VOTED_LABEL = 64
MAX_TEXT = 2000
DEFAULT_SPLIT_RATIOS = {"train": 0.8, "dev": 0.1, "test": 0.1}
_STATE_NAMES = dict(ValidationState.choices)


# --- recording a validation -------------------------------------------------------------

def record_validation(*, example, validator, label, mode="user", metadata=None, expected_state=None) -> Validation:
    """Record ``validator``'s verdict on ``example`` and update its consensus, atomically.

    ``label``: ``correct|incorrect|flagged``. ``mode``: ``user`` or ``owner`` (an owner's
    decision overrides the crowd at once; an owner may revise their own decision).
    ``metadata``: ``corrected_label`` (classification) or ``corrected_answer``
    (``{"text", "answer_start"}`` or the answer text; QA), ``flag_reason`` (required with
    ``flagged``), ``explanation``, ``voted_label`` (the category the validator voted, when the
    crowd votes categories rather than verdicts, as DynaSent's validators did; read by
    ``selectors.round_agreement(field="voted_label")``). ``expected_state``: the state the form showed; a
    different current state means the form is stale.

    The example row is locked (``SELECT … FOR UPDATE``) for the whole transaction; its
    ``validation_state`` and ``*_count`` columns are recomputed from its validations with
    ``calculations.derive_state`` before commit, and the validator's lease is released.

    Raises ``RuleError`` (400) with a ``ValidationErrorCode`` for bad input, a stale form,
    a settled or retracted example, a validation twice; ``NotAllowed`` (403) for one's own
    example, a validator without the role, owner mode by a non-owner. Nothing changes then.
    """
    if label not in VALIDATION_LABELS:
        raise RuleError(Code.UNKNOWN_LABEL, f"Unknown label '{label}': choose one of {', '.join(VALIDATION_LABELS)}.", field="label")
    if mode not in Validation.Mode.values:
        raise RuleError(Code.UNKNOWN_MODE, f"Unknown mode '{mode}': use 'user' or 'owner'.", field="mode")
    with transaction.atomic():
        example = (
            Example.objects.select_for_update(of=("self",))
            .select_related("round__task", "context")
            .get(pk=example.pk)
        )
        task = example.round.task
        is_owner = task.is_owner(validator)
        if example.author_id == validator.pk:
            raise NotAllowed(Code.OWN_EXAMPLE, "You cannot validate your own example.")
        if mode == Validation.Mode.OWNER and not is_owner:
            raise NotAllowed(Code.NOT_OWNER, f"Only an owner of task '{task.code}' can decide in owner mode.", field="mode")
        if not is_owner and not has_role(validator, "validator"):
            raise NotAllowed(Code.NOT_VALIDATOR, "You need the validator role to validate examples; ask a task owner.")
        if example.retracted:
            raise RuleError(Code.RETRACTED, "Its author retracted this example; it cannot be validated. Load the next one.")
        previous = Validation.objects.filter(example=example, validator=validator).first()
        if previous is not None and mode == Validation.Mode.USER:
            raise RuleError(Code.ALREADY_VALIDATED, f"You already validated this example ({previous.label}).")
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
        try:
            with transaction.atomic():
                if previous is not None:  # an owner revising their decision
                    previous.label, previous.mode, previous.metadata = label, mode, clean
                    previous.save(update_fields=["label", "mode", "metadata"])
                    validation = previous
                else:
                    validation = Validation.objects.create(
                        example=example, validator=validator, label=label, mode=mode, metadata=clean
                    )
        except IntegrityError:
            raise RuleError(Code.ALREADY_VALIDATED, "You already validated this example.") from None
        settle_example(example, release_lease_of=validator)
    return validation


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
        if task.kind != TaskKind.CLASSIFICATION:
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
        if task.kind != TaskKind.EXTRACTIVE_QA:
            raise RuleError(Code.CORRECTED_ANSWER_NOT_A_SPAN, "Only extractive QA examples take a corrected answer.", field="corrected_answer")
        data["corrected_answer"] = _answer_span(example, data["corrected_answer"])
    return data


def passage_of(example) -> str:
    """Return the passage of an extractive QA example (its second model input)."""
    name = example.round.task.config["model_inputs"][-1]
    return example.input.get(name) or example.context.data.get(name) or ""


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
    if start < 0 or passage[start : start + len(text)] != text:
        raise RuleError(
            Code.CORRECTED_ANSWER_NOT_A_SPAN,
            f"The corrected answer '{text[:80]}' is not a span of the passage: select it in the passage.",
            field="corrected_answer",
        )
    return {"text": text, "answer_start": start}


def settle_example(example, *, release_lease_of=None) -> str:
    """Recompute ``example``'s state and counters from its validations and save them.

    Call inside the transaction that changed its validations, with the row locked. Returns
    the new state. The lease is cleared once the example is settled, or when it is held by
    ``release_lease_of`` (the validator who just judged it).
    """
    rows = list(Validation.objects.filter(example_id=example.pk).order_by("id").values_list("label", "mode"))
    state = derive_state(rows, example.round.task.validations_needed)
    fields = {**tally(label for label, _ in rows), "validation_state": state}
    if state != ValidationState.PENDING or (release_lease_of is not None and example.leased_to_id == release_lease_of.pk):
        fields.update(leased_to=None, leased_until=None)
    Example.objects.filter(pk=example.pk).update(**fields)
    for name, value in fields.items():
        setattr(example, name if name != "leased_to" else "leased_to_id", value)
    return state


# --- the review queue -------------------------------------------------------------------

def review_queue(*, validator, round, model_wrong: bool, now=None, exclude_ids=()):
    """Return the queryset of examples ``validator`` may be handed in ``round``, queue order.

    Pending, not retracted, not their own, not already judged by them, not leased to
    someone else; ``model_wrong`` selects fooling or non-fooling examples; fewest
    validations first, then oldest. Fits the index ``example_review_queue``.
    """
    now = now or timezone.now()
    judged = Validation.objects.filter(example=OuterRef("pk"), validator=validator)
    queue = (
        Example.objects.filter(
            round=round, validation_state=ValidationState.PENDING, model_wrong=model_wrong, retracted=False
        )
        .exclude(author=validator)
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
    The review page calls this on load, so reloading shows the same example."""
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
    """
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


def release_lease(*, example, validator) -> bool:
    """Give ``example`` back to the queue if ``validator`` holds its lease; True if released."""
    return Example.objects.filter(pk=example.pk, leased_to=validator).update(leased_to=None, leased_until=None) == 1


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


def dataset_target(example, owner_decision: dict | None) -> dict:
    """Return the target an example contributes to a dataset: the annotator's, unless the
    owner's decision carries a correction (``corrected_label`` / ``corrected_answer``)."""
    meta = owner_decision or {}
    if "corrected_label" in meta:
        return {"label": meta["corrected_label"]}
    if "corrected_answer" in meta:
        return {"answers": [meta["corrected_answer"]]}
    return example.target


def close_round(*, round, acting_user, ratios=None, seed=None) -> list[Dataset]:
    """Close ``round`` and build its train/dev/test datasets from its verified-correct examples.

    ``ratios``: ``{"train", "dev", "test"}`` summing to 1 (default the task's
    ``split_ratios``, else 0.8/0.1/0.1); ``seed``: default the task's ``split_seed``, else 0.
    The split is ``calculations.assign_splits`` (a hash of seed and example id: the same
    examples, ratios and seed always give the same split); it is written to
    ``Example.split`` and to three ``Dataset`` rows ``<task>-r<N>-train|dev|test`` (dev and
    test ``scoring``, train ``standard``) whose items carry ``input``, ``target`` (with an
    owner's correction applied) and ``tag``. Re-closing replaces the items, never duplicates.

    Raises ``NotAllowed`` unless ``acting_user`` owns the task, ``RuleError`` for bad ratios.
    Returns the three datasets in train, dev, test order.
    """
    task = round.task
    if not task.is_owner(acting_user):
        raise NotAllowed(Code.NOT_OWNER, f"Only an owner of task '{task.code}' can close its rounds.")
    ratios = _check_ratios(ratios if ratios is not None else task.config.get("split_ratios", DEFAULT_SPLIT_RATIOS))
    seed = int(seed if seed is not None else task.config.get("split_seed", 0))
    with transaction.atomic():
        round = set_round_status(round=round, status=Round.Status.CLOSED, acting_user=acting_user)
        examples = list(
            Example.objects.filter(round=round, retracted=False, validation_state=ValidationState.VERIFIED_CORRECT)
            .select_related("context")
            .order_by("pk")
        )
        splits = assign_splits([e.pk for e in examples], ratios=ratios, seed=seed)
        owner_decisions = dict(
            Validation.objects.filter(example__in=examples, mode=Validation.Mode.OWNER)
            .order_by("id")
            .values_list("example_id", "metadata")
        )
        Example.objects.filter(round=round).exclude(pk__in=list(splits)).exclude(split="").update(split="")
        datasets = []
        for split in SPLITS:
            chosen = [e for e in examples if splits[e.pk] == split]
            Example.objects.filter(pk__in=[e.pk for e in chosen]).exclude(split=split).update(split=split)
            items = [
                DatasetItem(
                    uid=f"e{e.pk}",
                    input=e.input,
                    target=dataset_target(e, owner_decisions.get(e.pk)),
                    tag=e.tag or e.context.tag,
                    metadata={"example_id": e.pk, "context_uid": e.context.uid, "model_wrong": e.model_wrong},
                )
                for e in chosen
            ]
            checksum = hashlib.sha256(
                "\n".join(json.dumps([i.uid, i.input, i.target, i.tag], sort_keys=True) for i in items).encode()
            ).hexdigest()
            dataset, _ = Dataset.objects.update_or_create(
                task=task,
                name=dataset_name(round, split),
                defaults={
                    "round": round,
                    "split": split,
                    "access": Dataset.Access.STANDARD if split == "train" else Dataset.Access.SCORING,
                    "description": f"Verified-correct examples of {round}, {split} split "
                    f"(ratios {ratios['train']:g}/{ratios['dev']:g}/{ratios['test']:g}, seed {seed}).",
                    "source": f"round {round.number}",
                    "checksum": checksum,
                },
            )
            dataset.items.all().delete()
            for item in items:
                item.dataset = dataset
            DatasetItem.objects.bulk_create(items, batch_size=1000)
            datasets.append(dataset)
    return datasets
