"""Writing examples against the model in the loop: the use cases that change an example.

``create_example`` is the orchestrator of writing one: a numbered list of steps (checked in
``check_example``, the model asked, stored by ``store_example``; ``acreate_example`` is the same
for async views), each calling the module that decides it (``annotation/example_checks.py`` who may write and
what an example must be, ``annotation/limits.py`` the submission rate and daily cap,
``annotation/loop_choice.py`` which model answers, ``annotation/model_answer.py`` asking it,
``annotation/saving.py`` storing the example and its tallies). ``retract_example``,
``flag_example`` and ``add_explanations`` are the author's changes to their own example.

The HTMX pages, the REST API and the admin call these functions; views only parse input
and render output. Each function takes keyword-only arguments, checks the rules first and
raises ``dynabench.errors.RuleError`` (or its ``NotAllowed`` / ``RateLimited`` kinds) with
a code from ``annotation/error_codes.py`` and a message saying what to fix. State changes
happen in one transaction; nothing sent by the client decides whether the model was fooled.
"""

import dataclasses

from asgiref.sync import sync_to_async
from django.db import IntegrityError, transaction

from annotation import assist, counters, example_checks, limits, loop_choice, model_answer, qualification, saving
from annotation.diversity import embeddings as diversity_embeddings, encoder as diversity_encoder, rules as diversity_rules
from annotation.error_codes import AnnotationErrorCode as Code
from annotation.models import Example
from dynabench import idempotency
from dynabench.db import arelease_connections
from dynabench.errors import NotAllowed, RateLimited, RuleError
from tasks.models import Context


def create_example(
    *, user, context: Context, input: dict, target: dict, tag: str = "", time_spent=None, metadata=None,
    submission_key: str = "", suggestion_token: str = "",
) -> Example:
    """Check an annotator's example, ask the model in the loop, and store both; return the ``Example``.

    1. A repeated ``submission_key`` answers with the first example (below).
    2. The user must be an annotator of the task who passed its qualification (below).
    3. The task must be active, the context's round open and the context active
       (``example_checks._check_open``), and the kind must take a one-shot example.
    4. ``input`` (the annotator's fields) and ``target`` are checked (``clean_example_input``,
       ``clean_target``); ``metadata`` may hold the task's explanation fields only. A
       ``suggestion_token`` (the writing assistant's signed suggestion, ``annotation/assist.py``) marks
       the example assisted, with the suggestion and the edit distance from it.
    5. The per-user submission rate (``limits.check_submission_rate``) is checked before the model runs;
       then, under the round's near-duplicate rule (``annotation/diversity/rules.py``), the annotator's
       text is embedded and, in ``refuse`` mode, refused (``near_duplicate``) when an example of the
       round is within the threshold; the embedding is stored with the example.
    6. The round's model in the loop (``loop_choice.model_in_loop``: with several, the round's rule picks one)
       answers through the registry (``model_answer.ask_model``); the
       server decides ``model_wrong`` (the task spec's ``model_wrong``, ``tasks/kinds/``).
    7. In one transaction (``saving._save_example``): the daily cap (``daily_example_cap`` per user per task, a day in
       ``settings.TIME_ZONE``, retracted examples included; counted in the author's
       ``AuthorDayTally``, whose row stays locked until the transaction ends), the example
       with the model's full output, the model, the round and ``time_spent`` (seconds) is
       created, and ``Context.times_used`` is bumped in the same statement that checks the round is open. The returned example
       carries ``inference_s``, the seconds the model took, and ``daily_allowance``, the
       author's ``DailyAllowance`` counted under the lock, this example included (neither stored).

    ``submission_key`` (``dynabench/idempotency.py``): the one-time key of the form or API
    call. If ``user`` already wrote an example with it, that example is returned (with
    ``replayed`` True) and nothing is checked, asked or written again: a double click or a
    retried request never makes a second example. Otherwise ``replayed`` is False.

    Only users with the ``annotator`` role on the task (``tasks.access.has_task_role``: a
    site-wide group or an owner's grant, not banned; owners and admins too) who passed its
    qualification (``annotation.qualification``) write examples; a crowd worker's study
    progress counts the example in the same transaction (``annotation.crowd.note_progress``).
    A ``model_explanation``
    sent with an example that turns out not to fool the model is dropped.
    Raises ``RuleError`` (``NotAllowed``/``RateLimited``) with a code from ``error_codes``.
    """
    draft = check_example(user=user, context=context, input=input, target=target, tag=tag, time_spent=time_spent,
                          metadata=metadata, submission_key=submission_key, suggestion_token=suggestion_token)
    if isinstance(draft, Example):
        return draft
    # 6. The model in the loop answers (``acreate_example`` awaits this step instead).
    output, inference_s = model_answer.ask_model(draft.model, draft.model_input, round=draft.context.round, user=draft.user)
    return store_example(draft, output=output, inference_s=inference_s)


async def acreate_example(**kwargs) -> Example:
    """``create_example`` for async views (same keyword arguments, same rules and errors): the
    checks and the storing run on Django's per-request thread, and the wait for the model in the
    loop (step 6) holds no thread when it is an endpoint (``model_answer.aask_model``)."""
    draft = await sync_to_async(check_example)(**kwargs)
    if isinstance(draft, Example):
        return draft
    await arelease_connections()  # not held while the model answers (dynabench/db.py)
    output, inference_s = await model_answer.aask_model(draft.model, draft.model_input, round=draft.context.round, user=draft.user)
    return await sync_to_async(store_example)(draft, output=output, inference_s=inference_s)


@dataclasses.dataclass
class Draft:
    """An example checked and ready for the model in the loop (steps 1-5 of ``create_example``)."""

    user: object
    context: Context
    input: dict
    target: dict
    explanations: dict
    time_spent: object
    tag: str
    submission_key: str
    model: object
    model_input: dict
    origin: dict = dataclasses.field(default_factory=dict)
    embedding: object = None


def check_example(
    *, user, context: Context, input: dict, target: dict, tag: str = "", time_spent=None, metadata=None,
    submission_key: str = "", suggestion_token: str = "",
) -> "Draft | Example":
    """Steps 1-5 of ``create_example``, and the choice of the model in the loop: the first example
    of a repeated ``submission_key``, or a ``Draft``. Raises ``RuleError`` as ``create_example``."""
    # 1. A repeated submission key: the example it already made, nothing checked or asked again.
    submission_key = idempotency.clean_key(submission_key)
    if (first := saving._replayed(user=user, submission_key=submission_key)) is not None:
        return first
    round = context.round
    task = round.task
    # 2. Who writes: an annotator of the task (not banned) who passed its qualification.
    example_checks.check_annotator(user=user, task=task)
    qualification.require_qualified(user=user, task=task)
    # 3. Where: the task collecting, the round open, the context offered, a one-shot kind.
    example_checks._check_open(task, round, context)
    example_checks._check_one_shot(task)
    # 4. What: the annotator's fields, the target, explanations, time spent and tag.
    example_input = example_checks.clean_example_input(task=task, context=context, input=input)
    example_target = example_checks.clean_target(task=task, example_input=example_input, target=target)
    explanations = example_checks._clean_explanations(task, metadata, model_wrong=None)
    time_spent = example_checks._clean_time_spent(time_spent)
    tag = example_checks.clean_tag(tag, context=context)
    origin = assist.origin_fields(user=user, context=context, suggestion_token=suggestion_token, example_input=example_input)
    # 5. How often: the submission rate, before the model runs.
    limits.check_submission_rate(key=f"user:{user.pk}")
    # 5b. Not a near-copy of the round's examples, under the round's rule (``annotation/diversity/rules.py``):
    # after the rate, so refused copies count toward it and cannot make the server embed without limit.
    embedding = diversity_rules.check_near_duplicate(round=round, user=user, task=task, example_input=example_input)
    model = loop_choice.model_in_loop(round)
    return Draft(user=user, context=context, input=example_input, target=example_target, explanations=explanations,
                 time_spent=time_spent, tag=tag, submission_key=submission_key, model=model,
                 model_input=task.spec.model_input(task.config, example_input), origin=origin, embedding=embedding)


def store_example(draft: Draft, *, output: dict, inference_s: float) -> Example:
    """Step 7 of ``create_example``: the task's spec decides whether the model was fooled, then the
    example and its tallies are stored in one transaction (the daily cap is counted there)."""
    task = draft.context.round.task
    model_wrong = task.spec.model_wrong(task.config, draft.target, output)
    explanations = dict(draft.explanations)
    if "model_explanation" in explanations and not model_wrong:
        explanations.pop("model_explanation")
    try:
        example = saving._save_example(
            user=draft.user, context=draft.context, input=draft.input, target=draft.target, model=draft.model,
            model_output=output, model_wrong=model_wrong, metadata=explanations, tag=draft.tag, time_spent=draft.time_spent,
            submission_key=draft.submission_key, **draft.origin,
        )
    except (IntegrityError, RateLimited):
        # A concurrent request with the same key committed between our check and our insert
        # (its transaction rolled back; its example may also have used up the day's cap):
        # answer with its example.
        if (first := saving._replayed(user=draft.user, submission_key=draft.submission_key)) is not None:
            return first
        raise
    _store_embedding(example, draft.embedding)
    example.inference_s = inference_s  # not stored: the page reports it in a Server-Timing header
    return example


def _store_embedding(example: Example, vector) -> None:
    """Store the embedding computed by the near-duplicate check, else queue the task's embedding job."""
    if vector is None:
        diversity_embeddings.queue_embedding(example.round.task_id)
        return
    encoder = diversity_encoder.get_encoder()
    diversity_embeddings.store_vectors([(example, diversity_embeddings.written_text(example), vector)], encoder=encoder)


def _check_author(example: Example, user) -> None:
    if not user.is_authenticated or example.author_id != user.pk:
        raise NotAllowed(Code.NOT_AUTHOR, "Only the author of an example can change it.")


def retract_example(*, example: Example, user) -> Example:
    """Retract ``user``'s own ``example``: it stays stored but leaves every count and queue.

    Retracting twice is harmless. The round's tallies (``annotation.counters``) drop it in the
    same transaction, under a lock on the example. Raises ``NotAllowed`` (``not_author``) for anyone else.
    """
    _check_author(example, user)
    with transaction.atomic():
        locked = Example.objects.select_for_update().filter(pk=example.pk, retracted=False).first()
        if locked is not None:
            Example.objects.filter(pk=locked.pk).update(retracted=True)
            before = counters.contribution_of(locked)
            locked.retracted = True
            counters.count_change(round_id=locked.round_id, author_id=locked.author_id, before=before, after=counters.contribution_of(locked), example=locked)
    example.retracted = True
    return example


def flag_example(*, example: Example, user, reason: str) -> Example:
    """Flag ``user``'s own ``example`` with a reason (stored as ``metadata["flag_reason"]``).

    Raises ``NotAllowed`` (``not_author``) or ``RuleError`` ``flag_reason_required`` /
    ``too_long`` (at most ``FLAG_REASON_MAX_LENGTH`` characters).
    """
    _check_author(example, user)
    reason = (reason or "").strip() if isinstance(reason, str) else ""
    if not reason:
        raise RuleError(Code.FLAG_REASON_REQUIRED, "Say why you flag this example.", field="reason")
    if len(reason) > example_checks.FLAG_REASON_MAX_LENGTH:
        raise RuleError(
            Code.TOO_LONG, f"The reason has {len(reason)} characters; the limit is {example_checks.FLAG_REASON_MAX_LENGTH}.", field="reason"
        )
    with transaction.atomic():
        locked = Example.objects.select_for_update().get(pk=example.pk)
        locked.flagged = True
        locked.metadata = {**locked.metadata, "flag_reason": reason}
        locked.save(update_fields=["flagged", "metadata"])
    return locked


def add_explanations(*, example: Example, user, explanations: dict) -> Example:
    """Add the author's explanations to ``example``'s metadata (merged; empty fields are skipped).

    Keys are the task's ``explanation_fields`` (default ``example_explanation`` "why the
    example is correct" and ``model_explanation`` "why the model got it wrong", the latter
    only for an example that fooled the model), each at most ``EXPLANATION_MAX_LENGTH``
    characters. Raises ``NotAllowed`` (``not_author``), ``RuleError`` ``retracted``,
    ``unknown_explanation``, ``explanation_not_applicable``, ``required`` or ``too_long``.
    """
    _check_author(example, user)
    if example.retracted:
        raise RuleError(Code.RETRACTED, "This example was retracted; it takes no explanations.")
    task = example.round.task
    cleaned = example_checks._clean_explanations(task, explanations, model_wrong=example.model_wrong)
    if not cleaned:
        raise RuleError(Code.REQUIRED, "Write an explanation first.", field=next(iter(explanations or {}), None))
    with transaction.atomic():
        locked = Example.objects.select_for_update().get(pk=example.pk)
        locked.metadata = {**locked.metadata, **cleaned}
        locked.save(update_fields=["metadata"])
    return locked
