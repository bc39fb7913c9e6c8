"""Conversations with generative models and side-by-side comparisons, for task kinds whose spec
is ``conversational`` (``tasks/kinds/open_ended.py``): every rule of the chat pages lives here.

A conversation is not an example until the annotator judges it. Until then its state (the
context, the model(s), each turn with the model's answer, latency and parameters, the one-time
submission key) is kept on the server as a draft (``annotation/chat_drafts.py``), and every turn the
server accepts is stored with its prompt before any model is asked, then with its answers or why it
failed; the page holds a sealed reference to the draft (encrypted, bound to the user and the task,
valid ``STATE_MAX_AGE_S`` after its last change), so the annotator cannot alter a model's answer or
read which models a comparison drew, and a token is of no use to another user or task. The
judgment (``judge``) checks the token and stores the whole transcript as one ``Example``
(``annotation.saving._save_example``: the daily cap, the round's tallies and the context's use
as for every example), under the token's submission key, so a repeated submit gives back the same
example.

Side by side: with two or more models in the round's loop (endpoints or local causal language models), ``start`` draws two of them
(the pair with the fewest comparisons so far in the round, ties at random), in a random order
recorded as A and B; the annotator sees "A" and "B" only.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import threading
import time
from collections import Counter

from asgiref.sync import sync_to_async
from django.conf import settings

from annotation import chat_drafts, contexts, example_checks, limits, loop_choice, qualification, saving
from annotation.error_codes import AnnotationErrorCode as Code
from annotation.models import Example
from dynabench import idempotency
from dynabench.errors import NotAllowed, RuleError
from tasks import access
from tasks.loop import gate
from tasks.loop.chat import stream_chat
from tasks.loop.endpoints.base import EndpointError
from tasks.loop.endpoints.breaker import breaker_open_for
from tasks.models import Context, MLModel, Purpose, Round, Task
from tasks.loop.registry import get_predictor
from tasks.loop.training.records import model_ready

logger = logging.getLogger(__name__)


STATE_MAX_AGE_S = chat_drafts.DRAFT_MAX_AGE_S
CONVERSATION, SIDE_BY_SIDE = "conversation", "side_by_side"
MODES = (CONVERSATION, SIDE_BY_SIDE)


def sign_state(*, user, task: Task, state: dict) -> str:
    """Store the state as the conversation's draft on the server and return the page's token: a sealed
    reference to it (``chat_drafts.save_draft``), so the page cannot read which models it names."""
    return chat_drafts.save_draft(user=user, task=task, state=state)


def read_state(*, user, task: Task, token: str) -> dict:
    """The state of the draft ``token`` names; ``RuleError`` ``chat_expired`` when it is forged, another
    user's or task's, or expired (``chat_drafts.load_draft``)."""
    state = chat_drafts.load_draft(user=user, task=task, token=token).state
    if not isinstance(state, dict) or state.get("task") != task.pk:
        raise RuleError("chat_expired", "This conversation belongs to another task; start a new one.")
    return state


def unanswered_prompt(*, user, task: Task, token: str) -> tuple[str, str]:
    """``(prompt, why)`` of the conversation's last accepted turn that has no answer yet (the model is
    still answering, or it failed: the page puts the prompt back in the form), or ``("", "")``."""
    turn = chat_drafts.unanswered(chat_drafts.load_draft(user=user, task=task, token=token))
    if turn is None:
        return "", ""
    if turn.status == turn.Status.RUNNING:
        return turn.prompt, "The model is still answering your last prompt: reload the page in a moment to read the answer."
    return turn.prompt, f"Your last prompt got no answer: {turn.reason}"


def _check_writer(user, task: Task) -> None:
    if not access.has_task_role(user, task, "annotator"):
        raise NotAllowed(Code.NOT_ANNOTATOR, f"Only annotators write examples; ask an owner of {task.name} for the annotator role.")
    qualification.require_qualified(user=user, task=task)


def loop_models(round: Round) -> list[MLModel]:
    """The round's models in the loop that can answer now (ready; an endpoint's breaker closed), by id:
    endpoint models and local causal language model directories."""
    models = round.target_models.filter(kind__in=[MLModel.Kind.ENDPOINT, MLModel.Kind.HF_DIRECTORY]).order_by("pk")
    return [m for m in models if model_ready(m) and not (m.is_endpoint and breaker_open_for(m) > 0)]


def _draw_pair(round: Round, models: list[MLModel]) -> list[MLModel]:
    """Two of ``models``: the pair compared least in ``round`` so far (ties at random), in random order."""
    seen = Counter()
    for order in Example.objects.filter(round=round, input__mode=SIDE_BY_SIDE).values_list("model_output__order", flat=True):
        if isinstance(order, list) and len(order) == 2:
            seen[frozenset(order)] += 1
    pairs = [(a, b) for i, a in enumerate(models) for b in models[i + 1:]]
    fewest = min(seen[frozenset((a.pk, b.pk))] for a, b in pairs)
    pair = list(random.choice([p for p in pairs if seen[frozenset((p[0].pk, p[1].pk))] == fewest]))
    random.shuffle(pair)
    return pair


def start(*, user, task: Task, mode: str, tag: str | None = None) -> dict:
    """A new conversation (``mode`` ``conversation``) or comparison (``side_by_side``) on a context of
    the open round: its state (see the module docstring). Raises ``RuleError`` when the user may not
    write, the round is closed, or the loop lacks models (``no_model_in_loop``: a comparison needs two)."""
    if not task.spec.conversational:
        raise RuleError("not_conversational", f"{task.name} is not a conversation task.")
    if mode not in MODES:
        raise RuleError("bad_mode", f"Choose one of {', '.join(MODES)}.")
    _check_writer(user, task)
    round = task.current_round()
    if round is None:
        raise RuleError("no_round", f"{task.name} has no round yet.")
    example_checks._check_open(task, round)
    if mode == SIDE_BY_SIDE:
        if task.config.get("side_by_side") is False:
            raise RuleError("bad_mode", f"{task.name} does not compare models side by side.")
        models = loop_models(round)
        if len(models) < 2:
            raise RuleError(Code.NO_MODEL_IN_LOOP, "Comparing side by side needs two models in the loop that answer now.", status_code=409)
        chosen = _draw_pair(round, models)
    else:
        chosen = [loop_choice.model_in_loop(round)]
    context = contexts.choose_context(round=round, tag=tag)
    return {"task": task.pk, "round": round.pk, "context": context.pk, "mode": mode, "models": [m.pk for m in chosen],
            "turns": [], "answers": [], "key": idempotency.new_key(), "started": time.time()}


def max_turns(task: Task, state: dict) -> int:
    """User turns allowed: the task's ``max_turns`` for a conversation, one for a comparison."""
    return 1 if state["mode"] == SIDE_BY_SIDE else int(task.config.get("max_turns", 3))


def _turn_record(model: MLModel, answerer, answer) -> dict:
    endpoint = getattr(answerer, "endpoint", None)
    return {"role": "assistant", "content": answer.text, "model_id": model.pk,
            "model": endpoint.model_name if endpoint is not None else model.name,
            "params": endpoint.params if endpoint is not None else answerer.params, "latency_ms": round(answer.latency_ms, 3),
            "first_token_ms": answer.raw.get("first_token_ms"), "prompt_tokens": answer.prompt_tokens,
            "completion_tokens": answer.completion_tokens, "finish_reason": answer.raw.get("finish_reason", "")}


def _history(state: dict, side: int) -> list[dict]:
    """The turns so far as one model saw them (its own answers)."""
    turns = []
    for text, answers in zip(state["turns"], state["answers"]):
        turns += [{"role": "user", "content": text}, {"role": "assistant", "content": answers[side]["content"]}]
    return turns


@dataclasses.dataclass
class Turn:
    """A checked turn, ready to send (``prepare_turn``): the conversation's ``state``, its ``round``,
    the cleaned prompt ``text``, and per side its model, predictor and messages."""

    state: dict
    round: Round
    user: object
    text: str
    sides: list
    predictors: list
    messages: list
    record: int = 0  # the stored turn (``chat_drafts.open_turn``)


def prepare_turn(*, user, task: Task, state: dict, prompt: str) -> Turn:
    """Check a turn and gather what it needs; raise ``RuleError`` before anything is sent: the
    writer's role, the round still open, the turn limit, the prompt (the task's prompt field
    rules), the submission rate, and each endpoint's consent to the loop (``tasks.loop.gate``). The
    accepted turn is stored with its prompt (``chat_drafts.open_turn``) before anything is sent. Sync: it
    reads the database and may load a local model."""
    _check_writer(user, task)
    context = Context.objects.select_related("round__task").get(pk=state["context"], round__task=task)
    round = context.round
    example_checks._check_open(task, round, context)
    if len(state["turns"]) >= max_turns(task, state):
        raise RuleError("too_many_turns", "This conversation has had all its turns: judge it now.")
    (field,) = task.config["model_inputs"]
    text = example_checks.clean_example_input(task=task, context=context, input={field: prompt})[field]
    limits.check_submission_rate(key=f"user:{user.pk}")
    models = {m.pk: m for m in MLModel.objects.filter(pk__in=state["models"])}
    if len(models) != len(state["models"]):
        raise RuleError(Code.NO_MODEL_IN_LOOP, "A model of this conversation was removed; start a new one.", status_code=409)
    gate.check_consent([models[pk] for pk in state["models"]], Purpose.LOOP, field="prompt")
    predictors = [get_predictor(models[pk]) for pk in state["models"]]  # endpoints, or local models loaded by the registry
    messages = [task.spec.chat_messages(task.config, context.data, _history(state, side) + [{"role": "user", "content": text}])
                for side in range(len(predictors))]
    return Turn(state=state, round=round, user=user, text=text, sides=[models[pk] for pk in state["models"]], predictors=predictors,
                messages=messages, record=chat_drafts.open_turn(user=user, task=task, state=state, prompt=text))


async def _in_thread(stream, messages: list[dict]):
    """Relay a local model's blocking ``stream(messages)`` (generation runs on its own thread) to the
    event loop, item by item."""
    loop, relay = asyncio.get_running_loop(), asyncio.Queue()

    def send(message) -> None:
        if not loop.is_closed():  # the turn may end (and its loop close) before the model's last step
            loop.call_soon_threadsafe(relay.put_nowait, message)

    def pump():
        try:
            for item in stream(messages):
                send(("item", item))
        except Exception as error:  # noqa: BLE001 - raised again on the loop
            send(("error", error))
        else:
            send(("end", None))

    threading.Thread(target=pump, daemon=True, name="local-model-stream").start()
    while True:
        what, value = await relay.get()
        if what == "end":
            return
        if what == "error":
            raise value
        yield value


#: Turns still running after their page left: held so that they finish and are stored.
_FINISHING: set = set()


async def take_turn(turn: Turn):
    """Send a checked turn (``prepare_turn``) to the model(s) and yield the answers as they stream (an
    async generator, run on the event loop: waiting on an endpoint holds no thread):
    ``("token", side, piece)`` (side 0, or 0/1 for A/B), then ``("done", new state)``, or
    ``("error", message)`` when a model fails mid-answer (the turn is then not counted; the
    earlier state stays valid). Each side is called through the gate (``loop``: consent, the round's
    budget reserved per request, the call recorded). Nothing starts before the first step is asked
    for. The turn runs in a task of its own and is stored when it ends (``chat_drafts.close_turn``:
    done with the new state, or failed with the reason and the text that came): a page that leaves or
    loses its connection mid-answer finds the stored answer when it comes back."""
    events: asyncio.Queue = asyncio.Queue()
    work = asyncio.ensure_future(_run_turn(turn, events))
    _FINISHING.add(work)
    work.add_done_callback(_FINISHING.discard)
    while True:
        item = await events.get()
        if item is None:
            return
        yield item


async def _run_turn(turn: Turn, out: asyncio.Queue) -> None:
    """The work of ``take_turn``: run each side, relay its steps to ``out`` (then None), store the outcome."""
    state, sides, predictors, messages = turn.state, turn.sides, turn.predictors, turn.messages
    events: asyncio.Queue = asyncio.Queue()

    async def run(side: int, predictor):
        try:
            async with gate.aadmit(sides[side], Purpose.LOOP, user=turn.user, round=turn.round):
                if sides[side].is_endpoint:
                    steps = stream_chat(predictor.endpoint, messages[side])
                else:
                    steps = _in_thread(predictor.stream, messages[side])
                async for step, value in steps:
                    await events.put((step, side, value))
        except (EndpointError, RuleError) as error:
            await events.put(("failed", side, error.message))
        except Exception as error:  # a side that dies must still end the turn, never leave it waiting
            logger.exception("model %s failed mid-answer", state["models"][side])
            await events.put(("failed", side, f"the model's call failed ({type(error).__name__})."))

    runners = [asyncio.create_task(run(i, p)) for i, p in enumerate(predictors)]
    answers, failure, open_sides, came = {}, None, len(runners), [[] for _ in predictors]
    try:
        try:
            while open_sides:
                try:
                    step, side, value = await asyncio.wait_for(events.get(), settings.DYNABENCH_MODEL_WAIT_S)
                except asyncio.TimeoutError:  # the page's wait (DYNABENCH_MODEL_WAIT_S) is over: a stalled model
                    failure, open_sides = failure or f"no answer for {settings.DYNABENCH_MODEL_WAIT_S} s.", 0
                    break
                if step == "token":
                    came[side].append(value)
                    out.put_nowait(("token", side, value))
                elif step == "done":
                    answers[side], open_sides = value, open_sides - 1
                else:
                    failure, open_sides = failure or value, open_sides - 1
        finally:
            for runner in runners:
                runner.cancel()
        if failure is not None:
            await sync_to_async(gate.released(chat_drafts.close_turn))(turn.record, answers=["".join(c) for c in came], reason=failure)
            out.put_nowait(("error", None, f"The model did not finish its answer: {failure} Your prompt was not counted; send it again."))
            return
        records = [_turn_record(sides[i], predictors[i], answers[i]) for i in range(len(predictors))]
        new_state = {**state, "turns": [*state["turns"], turn.text], "answers": [*state["answers"], records]}
        await sync_to_async(gate.released(chat_drafts.close_turn))(turn.record, state=new_state, answers=records)
        out.put_nowait(("done", None, new_state))
    except Exception as error:  # noqa: BLE001 - the page is told; the stored turn stays running and is failed on its next read
        logger.exception("chat turn %s could not be stored", turn.record)
        out.put_nowait(("error", None, f"The turn could not be stored ({type(error).__name__}); send your prompt again."))
    finally:
        out.put_nowait(None)


async def finish_turn(events, state: dict) -> tuple[dict, str]:
    """Read a turn's ``events`` (``take_turn``) to the end without streaming them; return
    ``(the conversation's new state, the model's failure message or "")``: on a failure the state is
    the one before the turn."""
    new_state, problem = state, ""
    async for step, _side, value in events:
        if step == "done":
            new_state = value
        elif step == "error":
            problem = value
    return new_state, problem


def transcript(task: Task, state: dict, context_data: dict) -> list[dict]:
    """The conversation's messages with each assistant turn's record (model, parameters, latency)."""
    messages = task.spec.chat_messages(task.config, context_data, [])
    for text, answers in zip(state["turns"], state["answers"]):
        messages += [{"role": "user", "content": text}, answers[0]]
    return messages


def judge(*, user, task: Task, state: dict, target: dict, time_spent=None) -> Example:
    """Store the judged conversation (or comparison) as one example; return it.

    The judgment is checked by the kind (``spec.clean_target``); ``model_wrong`` is the
    annotator's claim (``spec.model_wrong``), confirmed or overturned by validators. Needs at least
    one answered turn. Under the state's submission key: judging the same state again returns the
    first example (``replayed`` True)."""
    first = saving._replayed(user=user, submission_key=state.get("key", ""))
    if first is not None:
        return first
    _check_writer(user, task)
    if not state["answers"]:
        raise RuleError("nothing_to_judge", "Send a prompt and read the model's answer before you judge it.")
    context = Context.objects.select_related("round__task").get(pk=state["context"], round__task=task)
    example_checks._check_open(task, context.round, context)
    (field,) = task.config["model_inputs"]
    example_input = {**{f["name"]: context.data.get(f["name"], "") for f in task.config["context_fields"]},
                     "mode": state["mode"], field: state["turns"][0], "turns": list(state["turns"])}
    if state["mode"] == SIDE_BY_SIDE:
        a, b = state["answers"][0]
        output = {"mode": SIDE_BY_SIDE, "prompt": state["turns"][0], "order": list(state["models"]),
                  "system": task.spec.chat_messages(task.config, context.data, []), "answers": {"a": a, "b": b}}
    else:
        output = {"mode": CONVERSATION, "transcript": transcript(task, state, context.data)}
    cleaned = task.spec.clean_target(task.config, example_input, target)
    model = MLModel.objects.filter(pk=state["models"][0]).first()
    example = saving._save_example(
        user=user, context=context, submission_key=state["key"], input=example_input, target=cleaned, model=model,
        model_output=output, model_wrong=task.spec.model_wrong(task.config, cleaned, output), metadata={},
        tag=context.tag or "", time_spent=example_checks._clean_time_spent(time_spent),
    )
    return example
