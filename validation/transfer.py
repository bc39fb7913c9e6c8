"""Transfer: how many of a task's other models a validated example fools.

An example that fools the model in the loop may only exploit that model's quirk; one that also
fools models it was never written against says something about the task. The **transfer rate**
of a validated example is the share of the task's other ready models it fools (the kind's
``model_wrong`` of each model's answer against the example's final label), out of the number of
models tried. Only models that answer the task count: the leaderboard's (published) models, never the
round's writing assistant or a generator of its candidates (a language model asked for a label answers
with prose, which "is fooled" every time), nor the model the example was written against. Source: the model-transfer analysis of adversarially collected data (Nie et al.,
"Adversarial NLI", ACL 2020, §4 and Table 3: examples written against one model, scored by
models trained otherwise; Kiela et al., "Dynabench", NAACL 2021, §3 on models "in the loop"
fooled by examples that other models also get wrong).

``measure_round(round)`` is the work of the job ``validation.jobs.measure_transfer``:

1. The round's validated examples with their final labels (``selectors.validated_examples``).
2. The task's other ready models (``ready_models``): published models the registry answers with (a
   local directory or an endpoint), not training, unpacking or failed, and not the round's writing
   assistant nor one of its generators (``helper_models``); predictions files are skipped (they only
   answer their datasets' items).
3. For each model, the examples it has not answered yet (not the one each was written against):
   every call goes through the gate (``tasks/loop/gate.py``, purpose ``transfer``): another user's
   endpoint only with its submitter's consent (skipped and noted without it), each request reserving
   its share of the round's endpoint budget (the model stops when it is spent). A local model answers
   in batches through the registry (``get_predictor(...).predict``). Each answer is stored as a
   ``TransferResult``.
4. Every example's rate is rederived from the stored answers (``recompute_rates``): results judged
   against a label that changed since (an owner's correction) are judged again from the stored
   output, without running the model.

Rerunning replaces nothing it does not need to: answers already stored are kept, so the job
queued when a model joins the task (``on_models_changed``) runs that one model only. Reads for
the console, the export and the pay rules: ``validation/transfer_selectors.py``.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field

from django.db import transaction

from annotation.models import VALIDATED, Example, GenerationRun, RoundAssistant, TransferRate, TransferResult
from dynabench.errors import NotAllowed, RuleError
from tasks.loop import gate
from tasks.loop.endpoints.base import EndpointCode
from tasks.loop.registry import get_predictor
from tasks.models import MLModel, Purpose, Round, Task
from tasks.selectors import evaluable_models
from validation.selectors import ValidatedExample, validated_examples

logger = logging.getLogger(__name__)

#: Examples a local model answers per registry call (the registry batches inside it); also the rows written at once.
LOCAL_CHUNK = 2048
#: Examples an endpoint model answers per registry call (each request reserves its own share of the budget).
ENDPOINT_CHUNK = 8
TRANSFER_JOB = "validation.jobs.measure_transfer"
_NOT_READY = (MLModel.Status.TRAINING, MLModel.Status.UNPACKING, MLModel.Status.FAILED)


def helper_models(round: Round) -> dict[int, str]:
    """``{model id: why}`` of the models that wrote or helped write ``round``'s examples: its writing
    assistant (``RoundAssistant``, on or off: it may have helped already) and every generator of its
    candidates (``GenerationRun``). They are never counted in a transfer rate: the examples were made
    with them, and a language model asked for the task's answer rarely gives one. Two queries."""
    helpers = {m: "generated candidates in this round" for m in GenerationRun.objects.filter(round=round).values_list("model_id", flat=True)}
    for model_id in RoundAssistant.objects.filter(round=round).values_list("model_id", flat=True):
        helpers[model_id] = "the round's writing assistant"
    return helpers


def ready_models(task, models=None, *, round: Round | None = None) -> list[MLModel]:
    """The task's models that a validated example is put to: the leaderboard's models (published) that
    the registry answers with (``MLModel.answers``: a Hugging Face directory or an endpoint) and that are
    not training, unpacking or failed (``tasks.selectors.evaluable_models``, narrowed to ``models``: rows
    or ids); with ``round``, less the models that helped write its examples (``helper_models``). By id."""
    helpers = helper_models(round) if round is not None else {}
    return [
        m for m in evaluable_models(task, models)
        if m.published and m.answers and m.status not in _NOT_READY and m.pk not in helpers
    ]


@dataclass
class CountedModels:
    """Which of a task's models a round's transfer rates count (``counted``, names) and which are left
    out, with why (``left_out``: ``(name, why)``), for the owner's dashboard."""

    counted: list[str]
    left_out: list[tuple[str, str]]


def counted_models(round: Round) -> CountedModels:
    """The models ``round``'s transfer rates count (``ready_models``) and, for every other model of the
    task, why it is not counted: it helped write the examples, it is not published, it is a predictions
    file, or it is not ready (training, unpacking, failed). The model each example was written against is
    also left out of that example's rate (not listed: it differs per example)."""
    helpers = helper_models(round)
    counted = {m.pk for m in ready_models(round.task, round=round)}
    names, left_out = [], []
    for model in MLModel.objects.filter(task=round.task).order_by("name", "pk"):
        if model.pk in counted:
            names.append(model.name)
        elif model.pk in helpers:
            left_out.append((model.name, helpers[model.pk]))
        elif model.is_predictions:
            left_out.append((model.name, "a predictions file: it answers only its datasets' items"))
        elif not model.published:
            left_out.append((model.name, "not published: not one of the leaderboard's models"))
        else:
            left_out.append((model.name, f"not ready ({model.get_status_display().lower()})"))
    return CountedModels(counted=names, left_out=left_out)


@dataclass
class TransferSummary:
    """What one ``measure_round`` did: ``answered`` (example × model answers run now), per model
    name the examples it answered or why it stopped (``notes``), ``skipped`` predictions files,
    and ``rated`` examples (with at least one other model tried)."""

    round: str
    examples: int = 0
    answered: int = 0
    rated: int = 0
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        """The job's one-line report."""
        parts = [f"{self.round}: {self.examples} validated examples, {self.answered} answers run, {self.rated} rated"]
        if self.skipped:
            parts.append(f"predictions files skipped: {', '.join(self.skipped)}")
        parts.extend(self.notes)
        return "; ".join(parts)


def measure_round(round: Round, *, model_ids: list[int] | None = None) -> TransferSummary:
    """Answer ``round``'s validated examples with the task's other ready models and rederive every
    example's transfer rate (the steps of the module docstring); return a ``TransferSummary``.

    ``model_ids``: run only these models (a model that just joined); the rates still count every
    ready model's stored answers. A model that fails to load or answer is noted and left out of
    this run; its earlier answers still count. A task kind whose ``model_wrong`` is a person's
    judgment (``spec.measures_transfer`` False) is not measured.
    """
    task = round.task
    summary = TransferSummary(round=str(round))
    if not task.spec.measures_transfer:
        summary.notes.append(f"not measured: a {task.spec.display_name or task.kind} example's model_wrong is the annotator's judgment")
        return summary
    validated = validated_examples(round=round)
    summary.examples = len(validated)
    chosen = MLModel.objects.filter(task=task) if model_ids is None else MLModel.objects.filter(task=task, pk__in=model_ids)
    summary.skipped = sorted(m.name for m in chosen if m.is_predictions)
    for model in ready_models(task, model_ids, round=round):
        done = set(TransferResult.objects.filter(model=model, example__round=round).values_list("example_id", flat=True))
        todo = [v for v in validated if v.example.model_id != model.pk and v.example.pk not in done]
        if not todo:
            continue
        reason = gate.consent_missing(model, Purpose.TRANSFER)
        if reason:
            summary.notes.append(f"{model.name} skipped: its submitter has not consented to transfer measurements")
            continue
        try:
            with gate.admit(model, Purpose.TRANSFER, round=round):
                answered, stopped = (_answer_by_endpoint if model.is_endpoint else _answer_locally)(round, model, todo)
        except (RuleError, OSError) as error:
            answered, stopped = 0, f"{model.name} failed: {getattr(error, 'message', error)}"
        summary.answered += answered
        if stopped:
            summary.notes.append(stopped)
    summary.rated = recompute_rates(round, validated=validated)
    return summary


def _inputs(task, rows: list[ValidatedExample]) -> list[dict]:
    return [task.spec.model_input(task.config, v.example.input) for v in rows]


def _store(task, model: MLModel, rows: list[ValidatedExample], outputs: list[dict]) -> None:
    """Write one ``TransferResult`` per (example, output), replacing an earlier answer of the same pair."""
    spec, config = task.spec, task.config
    results = [
        TransferResult(example=v.example, model=model, output=out, target=v.target, fooled=spec.model_wrong(config, v.target, out))
        for v, out in zip(rows, outputs)
    ]
    TransferResult.objects.bulk_create(
        results, update_conflicts=True, unique_fields=["example", "model"], update_fields=["output", "target", "fooled", "updated_at"],
        batch_size=1000,
    )


def _answer_locally(round: Round, model: MLModel, todo: list[ValidatedExample]) -> tuple[int, str]:
    """A local model answers ``todo`` in chunks of ``LOCAL_CHUNK`` (one registry call each); return
    ``(answers stored, "")``. Raises ``RuleError``/``OSError`` when it cannot load."""
    predictor = get_predictor(model)
    task = round.task
    for start in range(0, len(todo), LOCAL_CHUNK):
        rows = todo[start : start + LOCAL_CHUNK]
        _store(task, model, rows, predictor.predict(_inputs(task, rows)))
    return len(todo), ""


def _answer_by_endpoint(round: Round, model: MLModel, todo: list[ValidatedExample]) -> tuple[int, str]:
    """An endpoint model answers ``todo`` in chunks of at most ``ENDPOINT_CHUNK``, each request
    reserving its share of the round's budget at the gate; return ``(answers stored, why it stopped or
    "")``. A chunk is no larger than the calls left (``gate.calls_left``); answers from the endpoint's
    response cache cost nothing, and a chunk cut short by another spender keeps its answers in that
    cache for the next measurement."""
    predictor = get_predictor(model)
    task = round.task
    answered = 0
    while answered < len(todo):
        left = gate.calls_left(round)
        rows = todo[answered : answered + max(1, min(ENDPOINT_CHUNK, ENDPOINT_CHUNK if left is None else left))]
        try:
            outputs = predictor.predict(_inputs(task, rows))
        except RuleError as error:
            if error.code != EndpointCode.BUDGET_SPENT:
                raise
            return answered, f"{model.name}: the round's endpoint budget is spent ({len(todo) - answered} examples left unanswered)"
        _store(task, model, rows, outputs)
        answered += len(rows)
    return answered, ""


def recompute_rates(round: Round, *, validated: list[ValidatedExample] | None = None) -> int:
    """Rederive the ``TransferRate`` of every validated example of ``round`` from its stored
    ``TransferResult`` rows, counting the task's ready models other than the one it was written
    against (``ready_models`` of the round: published, ready, not a helper of the round); return how
    many examples have a rate. A result judged against a
    label that is no longer the example's final label is judged again from its stored output
    (the kind's ``model_wrong``). Examples no longer validated, or with no other model tried, lose
    their rate. Idempotent; runs no model.
    """
    task = round.task
    validated = validated if validated is not None else validated_examples(round=round)
    final = {v.example.pk: v for v in validated}
    ready = {m.pk for m in ready_models(task, round=round)}
    tried: dict[int, int] = {}
    fooled: dict[int, int] = {}
    rejudged = []
    results = TransferResult.objects.filter(example__round=round, model_id__in=ready).only(
        "id", "example_id", "model_id", "output", "target", "fooled"
    )
    for result in results.iterator(chunk_size=5000):
        v = final.get(result.example_id)
        if v is None or result.model_id == v.example.model_id:
            continue
        if result.target != v.target:
            result.target, result.fooled = v.target, task.spec.model_wrong(task.config, v.target, result.output)
            rejudged.append(result)
        tried[result.example_id] = tried.get(result.example_id, 0) + 1
        fooled[result.example_id] = fooled.get(result.example_id, 0) + int(result.fooled)
    rates = [TransferRate(example_id=pk, tried=n, fooled=fooled[pk]) for pk, n in tried.items()]
    with transaction.atomic():
        if rejudged:
            TransferResult.objects.bulk_update(rejudged, ["target", "fooled"], batch_size=1000)
        stale = sorted(set(TransferRate.objects.filter(example__round=round).values_list("example_id", flat=True)) - set(tried))
        for start in range(0, len(stale), 1000):  # in slices: SQLite caps a statement's parameters
            TransferRate.objects.filter(example_id__in=stale[start : start + 1000]).delete()
        TransferRate.objects.bulk_create(
            rates, update_conflicts=True, unique_fields=["example"], update_fields=["tried", "fooled", "updated_at"], batch_size=1000
        )
    return len(rates)


# --- queueing -----------------------------------------------------------------------------


def enqueue_transfer(round_id: int, *, model_ids: list[int] | None = None) -> None:
    """Put ``measure_transfer(round_id, model_ids)`` on the ``evaluation`` queue (it runs models, as
    evaluations do). Redis being down is logged: the next change, or the owner's button, queues it again."""
    import django_rq
    from redis.exceptions import RedisError

    job_id = f"transfer-round-{round_id}-{uuid.uuid4().hex[:12]}"
    try:
        django_rq.get_queue("evaluation").enqueue(
            TRANSFER_JOB, round_id, model_ids=model_ids, job_id=job_id, job_timeout=3600,
            description=f"transfer of round {round_id}" + (f" to models {model_ids}" if model_ids else ""),
        )
    except RedisError as error:
        logger.warning("the transfer job of round %s is not queued: %s", round_id, error)


def request_transfer(*, round: Round, acting_user) -> None:
    """Queue the transfer of ``round``'s validated examples to every ready model, once the caller's
    transaction commits. Raises ``NotAllowed`` unless ``acting_user`` owns the task, ``RuleError``
    when the kind does not measure transfer (its ``model_wrong`` is a person's judgment)."""
    if not round.task.is_owner(acting_user):
        raise NotAllowed("not_owner", f"Only an owner of task '{round.task.code}' can measure its examples' transfer.")
    if not round.task.spec.measures_transfer:
        raise RuleError("transfer_not_measured", "This task's examples are judged by people, so no other model's answer can be judged.")
    round_id = round.pk
    transaction.on_commit(lambda: enqueue_transfer(round_id))


def on_models_changed(sender, *, task, models=None, datasets=None, **kwargs) -> None:
    """Receiver of ``tasks.signals.leaderboard_inputs_changed``: when models joined or changed (``models``
    given), queue the transfer job of each of the task's rounds that has validated examples, for
    those models only, once the sender's transaction commits. A change of datasets only does nothing."""
    if not models:
        return
    if not isinstance(task, Task):
        task = Task.objects.get(pk=task)
    model_ids = sorted({getattr(m, "pk", m) for m in models})
    rounds = list(Example.objects.filter(VALIDATED, round__task=task).order_by().values_list("round_id", flat=True).distinct())
    if not rounds or not task.spec.measures_transfer or not ready_models(task, model_ids):
        return
    transaction.on_commit(lambda: [enqueue_transfer(round_id, model_ids=model_ids) for round_id in sorted(rounds)])
