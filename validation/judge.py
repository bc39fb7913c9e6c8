"""AI validators: a round's judge votes on each example as it enters the validation queue.

``set_judge`` is the owner's choice (the console's *AI help* page calls it); ``on_example_saved`` queues
the voting job when an example that goes to the validators is written; ``judge_examples`` is the RQ job
(a plain function that reports: it returns a one-line summary; tests and ``benchmarks/judge.py`` call it
directly).

The request and its parsing belong to the task kind (``TaskKindSpec.judge_messages`` /
``judge_verdict``, ``tasks/kinds/judge.py``). Every call passes the gate (``tasks/loop/gate.py``,
purpose ``judge``): the submitter's consent, one call and its tokens reserved from the round's endpoint
budget before each request, one ``ModelCall`` per request. A spent budget or a revoked consent stops the
job, keeping the votes it stored. A vote is an ``AIVote``, never a ``Validation``: no validator sees it
and it pays no one; it counts toward consensus only under the round's policy (``validation/judge_policy.py``,
off by default).
"""

from __future__ import annotations

import dataclasses
import logging

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from annotation import assist
from annotation.models import Example
from annotation.selectors import awaits_validation
from dynabench.errors import NotAllowed, RuleError
from tasks.kinds.judge import VerdictError
from tasks.loop import gate
from tasks.loop.endpoints.base import EndpointCode, EndpointError
from tasks.models import MLModel, Purpose, Round
from validation import judge_policy
from validation.error_codes import ValidationErrorCode as Code
from validation.judge_models import AIVote, RoundJudge

logger = logging.getLogger(__name__)

#: Examples one job asks about before it stores their votes (the votes of a stopped job up to then stay).
CHUNK = 500
#: The most characters of an unreadable answer kept on its vote.
RAW_MAX = 2000


def judges_for(task) -> list[MLModel]:
    """The models an owner of ``task`` may pick as its rounds' judge: the same as for the writing
    assistant (``annotation.assist.generators_for``: the task's endpoint models, local causal language
    models the task's owners own)."""
    return assist.generators_for(task)


def judge_of(round) -> RoundJudge | None:
    """The round's enabled judge (with its model), or None."""
    return RoundJudge.objects.select_related("model").filter(round=round, enabled=True).first()


@transaction.atomic
def set_judge(*, round: Round, model: MLModel | None, acting_user, enabled: bool = True, policy: str = "off",
              kappa_threshold: float = 0.6, min_settled: int = 50, triage_confidence: float = 0.9,
              ab_split: bool = False) -> RoundJudge | None:
    """Turn ``round``'s AI validator on (``model``, its ``policy`` and thresholds: ``RoundJudge``) or off
    (``model`` None: the record is deleted; the votes it cast stay, those on pending examples stop
    counting). Turning it on queues a vote on every example of the round already waiting for validation
    that this model has not voted on (after the transaction commits). A change of model or policy makes
    the votes on pending examples stop counting (``judge_policy.release_pending``) until the new policy
    counts them; settled examples are never rewritten.

    Raises ``NotAllowed`` (403) for anyone but the task's owners; ``RuleError`` ``not_a_judge`` (400,
    field ``model``) for a model not in ``judges_for``, ``bad_judge_policy`` (400) for a policy or threshold
    out of range (κ threshold −1 to 1, confidence 0 to 1); ``model_consent_missing`` (400) when another
    user's endpoint lacks its submitter's consent to ``judge``."""
    task = round.task
    if not task.is_owner(acting_user):
        raise NotAllowed(Code.NOT_OWNER, f"Only owners of {task.name} choose a round's AI validator.")
    _forget_flag(round.pk)
    if model is None:
        RoundJudge.objects.filter(round=round).delete()
        judge_policy.release_pending(round)
        return None
    if model.pk not in {m.pk for m in judges_for(task)}:
        raise RuleError(Code.NOT_A_JUDGE, f"{model.name} cannot judge examples of {task.name}: pick an endpoint model of "
                        "the task or a local language model you own.", field="model")
    if policy not in RoundJudge.Policy.values or not -1 <= kappa_threshold <= 1 or not 0 <= triage_confidence <= 1 \
            or int(min_settled) < 1:
        raise RuleError(Code.BAD_JUDGE_POLICY, "The policy is off, one_vote or triage; the κ threshold lies in [-1, 1], the "
                        "triage confidence in [0, 1], and at least one settled example is needed.", field="policy")
    gate.check_consent([model], Purpose.JUDGE, field="model")
    before = RoundJudge.objects.filter(round=round).values_list("model_id", "policy", "ab_split").first()
    judge, _ = RoundJudge.objects.update_or_create(round=round, defaults={
        "model": model, "enabled": enabled, "set_by": acting_user, "policy": policy, "kappa_threshold": kappa_threshold,
        "min_settled": int(min_settled), "triage_confidence": triage_confidence, "ab_split": ab_split})
    if before is not None and before != (model.pk, policy, ab_split):
        judge_policy.release_pending(round)
    judge_policy.check_counting(judge)
    if enabled:
        round_id = round.pk
        transaction.on_commit(lambda: enqueue(round_id))
    return judge


def _forget_flag(round_id: int) -> None:
    """Forget the cached ``round_has_judge`` now and again once the transaction commits."""
    cache.delete(_flag_key(round_id))
    transaction.on_commit(lambda: cache.delete(_flag_key(round_id)))


def enqueue(round_id: int, example_ids: list[int] | None = None) -> None:
    """Queue ``judge_examples`` for ``round_id`` (the ``default`` queue, by dotted path)."""
    import django_rq

    django_rq.get_queue("default").enqueue("validation.judge.judge_examples", round_id, example_ids)


#: Seconds a round's "has an enabled judge" answer stays in the shared cache (``set_judge`` forgets it at once).
JUDGE_FLAG_S = 300


def _flag_key(round_id: int) -> str:
    return f"judge-on:{round_id}"


def round_has_judge(round_id: int) -> bool:
    """Whether round ``round_id`` has an enabled judge, from the shared cache (one query on a miss), so that
    writing an example costs no statement in rounds without one."""
    on = cache.get(_flag_key(round_id))
    if on is None:
        on = RoundJudge.objects.filter(round_id=round_id, enabled=True).exists()
        cache.set(_flag_key(round_id), on, JUDGE_FLAG_S)
    return on


def on_example_saved(sender, instance, created, raw=False, **kwargs):
    """``post_save`` receiver of ``Example``: a new example that goes to the validators
    (``annotation.selectors.awaits_validation``) in a round with an enabled judge gets a vote, queued
    after the transaction commits. No database statement while the round's answer is cached
    (``round_has_judge``)."""
    if not created or raw or instance.retracted:
        return
    if round_has_judge(instance.round_id) and awaits_validation(instance):
        round_id, example_id = instance.round_id, instance.pk
        transaction.on_commit(lambda: enqueue(round_id, [example_id]))


@dataclasses.dataclass
class _Answer:
    example_id: int
    text: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0


def _pending(round: Round, model: MLModel, example_ids) -> list[int]:
    """Ids of the round's examples that went to the validators (pending, or settled already: their votes
    measure the judge) and that ``model`` has not voted on, retracted ones left out."""
    rows = Example.objects.filter(round=round, retracted=False).exclude(ai_votes__model=model)
    if not round.task.config.get("validate_non_fooling"):
        rows = rows.filter(model_wrong=True)
    if example_ids is not None:
        rows = rows.filter(pk__in=list(example_ids))
    return list(rows.order_by("pk").values_list("pk", flat=True))


def _checksum(model: MLModel) -> str:
    if model.is_endpoint:
        from tasks.loop.endpoints.records import settings_checksum

        return settings_checksum(model.endpoint)
    return model.checksum or ""


def _messages(task, example: Example) -> list[dict]:
    return task.spec.judge_messages(task.config, context_data=example.context.data if example.context_id else {},
                                    example_input=example.input, target=example.target, model_output=example.model_output,
                                    instructions=task.instructions)


def _ask_endpoint(model: MLModel, round: Round, batch: list[tuple[int, list[dict]]]) -> tuple[list[_Answer], RuleError | None]:
    """Ask ``model`` (an endpoint) about every example of ``batch``, at most its ``max_concurrency`` at once
    (a pool of threads; the shared slots hold the limit across processes), inside one admission of the
    gate, as ``EndpointPredictor`` does: the breaker is read and the URL checked once, every request's
    share of the round's budget is reserved (and settled) in this thread, each request sent as soon as its
    share is reserved; the pool's threads only send.
    Return the answers and the ``RuleError`` that stopped it (a spent budget: the requests reserved
    before it are still sent; an open breaker or a refused URL: nothing is sent)."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from tasks.loop.endpoints.breaker import breaker_state
    from tasks.loop.endpoints.calls import call
    from tasks.loop.endpoints.urls import check_url

    endpoint = model.endpoint
    state = breaker_state(model)
    if state["open"]:
        return [], RuleError(EndpointCode.UNAVAILABLE, "The judge's circuit breaker is open after repeated failures.",
                             status_code=503)
    check_url(endpoint.base_url)
    answers: list[_Answer] = []
    stop = None
    with gate.admit(model, Purpose.JUDGE, round=round) as admission, ThreadPoolExecutor(
            max_workers=max(1, endpoint.max_concurrency), thread_name_prefix=f"judge-{model.pk}") as pool:
        reserved, futures = {}, {}
        for example_id, messages in batch:  # each request is sent as soon as its share is reserved
            try:
                reserved[example_id] = admission.reserve(messages, endpoint.params)
            except RuleError as refused:
                stop = refused
                break
            futures[pool.submit(call, endpoint, messages, checked=True, failures_known=state["failures"] > 0,
                                admission=admission, reserved=True)] = example_id
        for future in as_completed(futures):
            example_id = futures[future]
            try:
                answer = future.result()
            except EndpointError as error:  # skipped: a later run asks again
                admission.settle(reserved[example_id], None)
                logger.info("judge %s on example %s: %s", model.pk, example_id, error)
                continue
            admission.settle(reserved[example_id], answer)
            answers.append(_Answer(example_id, answer.text, answer.prompt_tokens or 0, answer.completion_tokens or 0))
    return answers, stop


def _ask_local(model: MLModel, round: Round, batch) -> tuple[list[_Answer], RuleError | None]:
    """Ask a local causal language model (in-process, through the gate) about each example in turn; its
    first failure stops the batch (returned as the ``RuleError``)."""
    answers = []
    for example_id, messages in batch:
        try:
            text, tokens = assist.ask_text(model, messages, round=round, purpose=Purpose.JUDGE)
        except RuleError as error:  # a model that does not load or generate fails the same way on every example
            return answers, error
        answers.append(_Answer(example_id, text, 0, tokens))
    return answers, None


def _votes(task, round: Round, model: MLModel, checksum: str, answers: list[_Answer]) -> list[AIVote]:
    votes = []
    for answer in answers:
        vote = AIVote(example_id=answer.example_id, round=round, model=model, settings_checksum=checksum,
                      prompt_tokens=answer.prompt_tokens, completion_tokens=answer.completion_tokens)
        try:
            verdict = task.spec.judge_verdict(task.config, answer.text)
        except VerdictError as error:
            vote.parsed, vote.reason, vote.raw = False, str(error), answer.text[:RAW_MAX]
        else:
            vote.label, vote.reason, vote.confidence = verdict.label, verdict.reason, verdict.confidence
        votes.append(vote)
    return votes


def judge_examples(round_id: int, example_ids: list[int] | None = None) -> str:
    """The job: the round's judge votes on each example waiting for validation that it has not voted on.

    1. Read the round's enabled judge (none: nothing to do) and the examples still without its vote
       (``example_ids``: only those; None: all of the round's).
    2. Per chunk of ``CHUNK`` examples: the kind's spec writes each request (``judge_messages``); the
       judge answers through the gate (purpose ``judge``), an endpoint concurrently up to its
       ``max_concurrency``, a local model in turn; the kind's spec reads each answer (``judge_verdict``):
       an unreadable one is stored unparsed. Whether the judge counts is checked again
       (``judge_policy.check_counting``) and each vote marked under the round's policy
       (``judge_policy.mark_votes``); the chunk's votes are stored at once (an existing vote of the same
       model is kept: reruns never duplicate), and examples where a vote counts are settled again.
    3. A spent budget, a revoked consent or a local model that fails stops the job, keeping the stored
       votes; an endpoint's failed request is skipped (a later run asks again).

    4. The summary is stored on the judge (``last_summary``, ``last_run_at``) for the owner's page.

    Returns ``"judge of <task> round <n>: <v> votes (<u> unparsed) of <e> examples, done|stopped: <why>"``.
    """
    judge = RoundJudge.objects.select_related("model", "round__task").filter(round_id=round_id, enabled=True).first()
    if judge is None:
        return f"judge of round {round_id}: no judge, nothing to do"
    round, model, task = judge.round, judge.model, judge.round.task
    if model.is_endpoint:
        model = MLModel.objects.select_related("endpoint").get(pk=model.pk)
    pending = _pending(round, model, example_ids)
    checksum = _checksum(model)
    stored = unparsed = 0
    stopped = ""
    for start in range(0, len(pending), CHUNK):
        examples = Example.objects.select_related("context").in_bulk(pending[start:start + CHUNK])
        batch = [(pk, _messages(task, examples[pk])) for pk in pending[start:start + CHUNK] if pk in examples]
        try:
            if model.is_endpoint:
                answers, stop = _ask_endpoint(model, round, batch)
            else:
                answers, stop = _ask_local(model, round, batch)
        except RuleError as error:  # consent refused at admission, a URL the allow-list refuses
            answers, stop = [], error
        votes = _votes(task, round, model, checksum, answers)
        judge_policy.check_counting(judge)
        counting = judge_policy.mark_votes(judge, votes)
        AIVote.objects.bulk_create(votes, ignore_conflicts=True)
        if counting:  # its vote may complete a consensus
            judge_policy.resettle([v.example_id for v in votes if v.counted_as])
        stored += len(votes)
        unparsed += sum(not v.parsed for v in votes)
        if stop is not None:
            stopped = stop.message
            break
    state = f"stopped: {stopped}" if stopped else "done"
    summary = (f"judge of {task.code} round {round.number}: {stored} votes ({unparsed} unparsed) of {len(pending)} "
               f"examples, {state}")
    RoundJudge.objects.filter(pk=judge.pk).update(last_summary=summary, last_run_at=timezone.now())
    return summary

