"""AI-generated candidates: an owner asks a generator (an endpoint or a local causal language model) for
N adversarial candidates per context of a round; those that fool the model in the loop enter the
validation queue like people's examples, validated blind.

``start_generation`` checks and queues (the owner's console calls it); ``run_generation`` is the RQ job
(a plain function that reports: it returns a one-line summary). The request is the writing assistant's
(``TaskKindSpec.assistant_messages``, numbered per candidate so N requests are N questions), read by the
same parser (``assistant_suggestion``); a candidate must be a whole example (its target included) that the
kind's checks accept. Every call counts against the round's endpoint budget
(``tasks/loop/endpoints/budget.py``): when it is spent the run stops, keeping what it made.

A kept candidate is an ``Example`` with ``origin="generated"`` whose author is the generator's account
(``generator_account``: inactive, no password, named after no model): validators see it like any other
example (the review card and the validation API show no origin or author).
"""

from __future__ import annotations

import logging

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation import assist, example_checks, model_answer
from annotation.assist_models import GenerationRun
from annotation.error_codes import AnnotationErrorCode as Code
from annotation.loop_choice import model_in_loop
from annotation.models import Example, Origin
from dynabench.errors import NotAllowed, RuleError
from tasks.kinds.assist import SuggestionError
from tasks.loop import gate
from tasks.loop.endpoints.base import EndpointCode
from tasks.models import MLModel, Purpose, Round

logger = logging.getLogger(__name__)

#: The account that authors generated examples (one per platform).
GENERATOR_USERNAME = "ai-candidates"
MAX_PER_CONTEXT = 20


def generator_account():
    """The inactive account that authors generated examples (created on first use)."""
    user, created = get_user_model().objects.get_or_create(username=GENERATOR_USERNAME, defaults={"is_active": False})
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def start_generation(*, round: Round, model: MLModel, per_context: int, acting_user) -> GenerationRun:
    """Create a ``GenerationRun`` and queue ``run_generation`` after the transaction commits.

    Only the task's owners (and admins) may (``NotAllowed``); the round must be open, the model one of
    ``assist.generators_for`` (``not_a_generator``) whose submitter consented to ``generate``
    (``model_consent_missing``), ``per_context`` 1 to ``MAX_PER_CONTEXT``."""
    task = round.task
    if not task.is_owner(acting_user):
        raise NotAllowed(Code.NOT_ANNOTATOR, f"Only owners of {task.name} generate candidates.")
    if round.status != Round.Status.OPEN:
        raise RuleError(Code.ROUND_CLOSED, f"Round {round.number} is closed; generate candidates for an open round.",
                        status_code=409)
    if model.pk not in {m.pk for m in assist.generators_for(task)}:
        raise RuleError(Code.NOT_A_GENERATOR, f"{model.name} cannot generate text for {task.name}: pick an endpoint "
                        "model of the task or a local language model you own.", field="model")
    gate.check_consent([model], Purpose.GENERATE, field="model")
    if not 1 <= int(per_context) <= MAX_PER_CONTEXT:
        raise RuleError(Code.TOO_LONG, f"Ask for 1 to {MAX_PER_CONTEXT} candidates per context.", field="per_context")
    contexts = round.contexts.filter(active=True).count()
    run = GenerationRun.objects.create(round=round, model=model, requested_by=acting_user, per_context=per_context,
                                       total=contexts * per_context)
    transaction.on_commit(lambda: _enqueue(run.pk))
    return run


def _enqueue(run_id: int) -> None:
    import django_rq

    django_rq.get_queue("default").enqueue("annotation.generation.run_generation", run_id)


def run_generation(run_id: int) -> str:
    """The job: ask for each active context's candidates, keep those that fool the model in the loop.

    1. Claim the run (queued → running; a second worker gets nothing to do).
    2. Per context and candidate number: ask the generator (``assist.ask_text`` through the gate, purpose
       ``generate``: consent, the round's budget reserved per request), read the candidate (``assistant_suggestion``), check it as an example
       (``example_checks``); ask the model in the loop; keep it when it was fooled.
    3. Progress (``done``) as each request is answered (before its candidate is read, so ``candidates`` never
       runs ahead of it); a spent budget or a revoked consent stops the run (``stopped``), any other
       failure of the generator is counted and the run goes on; a bug fails it with the reason.
    """
    if not GenerationRun.objects.filter(pk=run_id, status=GenerationRun.Status.QUEUED).update(
            status=GenerationRun.Status.RUNNING):
        return f"generation run {run_id}: nothing to do"
    run = GenerationRun.objects.select_related("round__task", "model").get(pk=run_id)
    round, task = run.round, run.round.task
    author = generator_account()
    status, reason = GenerationRun.Status.DONE, ""
    try:
        for context in round.contexts.filter(active=True).order_by("pk"):
            for attempt in range(run.per_context):
                counted = []  # the request is counted done as soon as it is answered, before its candidate is read
                try:
                    _one_candidate(run, context, attempt, author, counted)
                except RuleError as error:
                    if error.code in (EndpointCode.BUDGET_SPENT, gate.CONSENT_MISSING):
                        raise
                    logger.info("generation run %s: %s", run.pk, error.message)
                if not counted:  # the request itself failed
                    GenerationRun.objects.filter(pk=run.pk).update(done=F("done") + 1)
    except RuleError as error:
        status, reason = GenerationRun.Status.STOPPED, error.message
    except Exception as error:  # noqa: BLE001 - stored on the run as its reason
        logger.exception("generation run %s failed", run.pk)
        status, reason = GenerationRun.Status.FAILED, f"{type(error).__name__}: {error}"
    GenerationRun.objects.filter(pk=run.pk).update(status=status, reason=reason, finished_at=timezone.now())
    run.refresh_from_db()
    return f"generation run {run.pk} of {task.code} round {round.number}: {run.kept} kept of {run.candidates} candidates, {status}"


def _one_candidate(run: GenerationRun, context, attempt: int, author, counted: list) -> None:
    round, task = run.round, run.round.task
    loop_model = model_in_loop(round)
    messages = task.spec.assistant_messages(task.config, context_data=context.data, instructions=task.instructions,
                                            model_name=loop_model.name, attempt=attempt)
    text, tokens = assist.ask_text(run.model, messages, round=round, purpose=Purpose.GENERATE, user=run.requested_by)
    # answered: one more request done (so the progress never shows more candidates than requests answered)
    GenerationRun.objects.filter(pk=run.pk).update(tokens=F("tokens") + tokens, done=F("done") + 1)
    counted.append(True)
    try:
        parsed = task.spec.assistant_suggestion(task.config, text, context_data=context.data)
        example_input = example_checks.clean_example_input(task=task, context=context, input=parsed["input"])
        target = task.spec.target_from_form(parsed["form"])
        target = example_checks.clean_target(task=task, example_input=example_input, target=target)
    except (SuggestionError, RuleError, TypeError, ValueError):
        return  # not a whole example: not a candidate
    GenerationRun.objects.filter(pk=run.pk).update(candidates=F("candidates") + 1)
    output, _ = model_answer.ask_model(loop_model, task.spec.model_input(task.config, example_input), round=round,
                                       user=run.requested_by)
    if not task.spec.model_wrong(task.config, target, output):
        return
    with transaction.atomic():
        Example.objects.create(
            round=round, context=context, author=author, input=example_input, target=target, model=loop_model,
            model_output=output, model_wrong=True, origin=Origin.GENERATED, suggestion=parsed,
        )
        GenerationRun.objects.filter(pk=run.pk).update(kept=F("kept") + 1)
