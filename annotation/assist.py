"""The writing assistant of a round: *Suggest* on the create page asks a language model for an example
for the context shown; the annotator edits it or discards it, and the example records that it was
assisted, the suggestion and the edit distance from it.

A generative annotation assistant (Bartolo et al., "Models in the loop: Aiding crowdworkers with
generative annotation assistants", NAACL 2022). The task kind's spec phrases the request and reads the
answer (``TaskKindSpec.assistant_messages`` / ``assistant_suggestion``, ``tasks/kinds/assist.py``): only
the context's visible fields and the task's instructions reach the assistant, never a target or a hidden
label. The assistant is an endpoint model (called from the event loop: ``tasks.loop.endpoints.aio.acall``)
or a local causal language model (``tasks.loop.chat.CausalLMPredictor``, on a worker thread), called
through the gate (``tasks/loop/gate.py``, purpose ``assist``): the submitter's consent, the round's
endpoint budget reserved per request, each call recorded.

With the round's A/B split on, each worker is in one arm for the whole round
(``calculations.ab_arm``): the control arm never sees *Suggest*, and every example records its author's
arm, so the owner's dashboard compares arm with arm.

The suggestion travels to the browser and back signed (``SUGGESTION_SALT``, bound to the user and the
context), so what an example records as suggested is what the assistant said.
"""

from __future__ import annotations

import dataclasses

from asgiref.sync import sync_to_async
from django.core import signing

from annotation import calculations, example_checks, limits, loop_choice, qualification
from annotation.assist_models import RoundAssistant
from annotation.error_codes import AnnotationErrorCode as Code
from annotation.models import Origin
from dynabench.errors import NotAllowed, RuleError
from tasks.kinds.assist import SuggestionError
from tasks.loop.endpoints.base import EndpointError
from tasks.loop import gate
from tasks.models import Context, MLModel, Purpose

SUGGESTION_SALT = "annotation.suggestion"
SUGGESTION_MAX_AGE_S = 24 * 3600


@dataclasses.dataclass
class Suggestion:
    """One suggestion: the example's fields (``input``), the target's form fields it names (``form``),
    and the signed ``token`` the form sends back with the example."""

    input: dict
    form: dict
    token: str


def assistant_of(round) -> RoundAssistant | None:
    """The round's enabled assistant (with its model), or None."""
    return RoundAssistant.objects.select_related("model").filter(round=round, enabled=True).first()


def arm_of(*, round, user, assistant: RoundAssistant | None = None) -> str:
    """``"assisted"`` or ``"control"`` when the round's assistant splits workers, else ``""``."""
    assistant = assistant if assistant is not None else assistant_of(round)
    if assistant is None or not assistant.ab_split:
        return ""
    return calculations.ab_arm(secret=round.secret, user_id=user.pk)


def offered(*, round, user) -> bool:
    """True when ``user`` sees *Suggest* in ``round``: an assistant is on and the user is not in the control arm."""
    if round is None or not getattr(user, "is_authenticated", False):
        return False
    assistant = assistant_of(round)
    return assistant is not None and arm_of(round=round, user=user, assistant=assistant) != "control"


def _prepare(*, user, context: Context):
    """Check who asks and where (as for writing an example, plus the assistant on for the user's arm and
    the submission rate), and return ``(assistant model, messages)``."""
    round = context.round
    task = round.task
    example_checks.check_annotator(user=user, task=task)
    qualification.require_qualified(user=user, task=task)
    example_checks._check_open(task, round, context)
    example_checks._check_one_shot(task)
    assistant = assistant_of(round)
    if assistant is None or arm_of(round=round, user=user, assistant=assistant) == "control":
        raise RuleError(Code.ASSISTANT_OFF, "This round has no writing assistant for you; write the example yourself.",
                        status_code=409)
    limits.check_submission_rate(key=f"suggest:{user.pk}")
    model = assistant.model
    loop_model = loop_choice.model_in_loop(round)
    messages = task.spec.assistant_messages(task.config, context_data=context.data, instructions=task.instructions,
                                            model_name=loop_model.name)
    return model, messages


def ask_text(model: MLModel, messages: list[dict], *, round, purpose=Purpose.ASSIST, user=None) -> tuple[str, int]:
    """The text a language model answers to ``messages`` and the tokens it used (prompt + completion):
    an endpoint or a local causal LM, called through the gate (``tasks.loop.gate``: ``purpose`` on
    behalf of ``user``, the round's budget reserved per request). Raises ``RuleError``
    (``assistant_failed``, 503) when it does not answer, ``endpoint_budget_spent`` (409) when the round's
    budget is used up, ``model_consent_missing`` (403) without the submitter's consent."""
    from tasks.loop.endpoints.calls import call

    with _failures(model), gate.admit(model, purpose, user=user, round=round):
        if model.is_endpoint:
            answer = call(model.endpoint, messages)
            return answer.text, (answer.prompt_tokens or 0) + (answer.completion_tokens or 0)
        answer = _local_answer(model, messages)
    return answer.text, (answer.prompt_tokens or 0) + (answer.completion_tokens or 0)


async def aask_text(model: MLModel, messages: list[dict], *, round, purpose=Purpose.ASSIST, user=None) -> tuple[str, int]:
    """``ask_text`` for async views: an endpoint's answer is awaited without holding a thread; a local
    model generates on a worker thread."""
    from tasks.loop.endpoints.aio import acall

    with _failures(model):
        async with gate.aadmit(model, purpose, user=user, round=round):
            if model.is_endpoint:
                endpoint = await sync_to_async(_endpoint_of)(model)
                answer = await acall(endpoint, messages)
            else:
                answer = await sync_to_async(_local_answer, thread_sensitive=False)(model, messages)
    return answer.text, (answer.prompt_tokens or 0) + (answer.completion_tokens or 0)


def _endpoint_of(model: MLModel):
    from tasks.models import Endpoint

    return Endpoint.objects.select_related("model").get(model=model)


def _local_answer(model: MLModel, messages: list[dict]):
    from tasks.loop.registry import get_predictor

    predictor = get_predictor(model)
    if not hasattr(predictor, "stream"):
        raise RuleError(Code.NOT_A_GENERATOR, f"{model.name} does not generate text.", status_code=409)
    return list(predictor.stream(messages))[-1][1]


class _failures:
    """Turn an assistant that does not answer into ``assistant_failed`` (503) with the reason."""

    def __init__(self, model):
        self.model = model

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        if isinstance(error, EndpointError) or (isinstance(error, RuleError) and error.status_code == 503):
            raise RuleError(Code.ASSISTANT_FAILED, f"The assistant ({self.model.name}) did not answer: {str(error).rstrip('.')}. "
                            "Try again in a moment, or write the example yourself.", status_code=503) from None
        return False


async def asuggest(*, user, context: Context) -> Suggestion:
    """Ask the round's assistant for an example for ``context``; return the ``Suggestion``.

    1. The user may write in this round (as ``create_example``'s steps 2-3) and has the assistant
       (not in the control arm); the submission rate is checked (``suggest:<user>``).
    2. The kind's spec writes the request from the context's visible fields and the instructions.
    3. The assistant answers (``aask_text``; no thread waits on an endpoint).
    4. The kind's spec reads the answer; a useless one is ``bad_suggestion`` (422), nothing stored.
    """
    model, messages = await sync_to_async(_prepare)(user=user, context=context)
    text, _ = await aask_text(model, messages, round=context.round, user=user)
    task = context.round.task
    try:
        parsed = task.spec.assistant_suggestion(task.config, text, context_data=context.data)
    except SuggestionError as error:
        raise RuleError(Code.BAD_SUGGESTION, f"{error} Ask again, or write the example yourself.", status_code=422) from None
    token = signing.dumps({"u": user.pk, "c": context.pk, "s": parsed}, salt=SUGGESTION_SALT, compress=True)
    return Suggestion(input=parsed["input"], form=parsed["form"], token=token)


def origin_fields(*, user, context: Context, suggestion_token: str, example_input: dict) -> dict:
    """The ``Example`` fields that record AI help: ``origin`` (``assisted`` with a valid suggestion,
    else ``written``), ``suggestion``, ``suggestion_distance`` (``calculations.fields_distance`` over the
    annotator's input fields). No statement runs for an unaided example (the author's A/B arm follows
    from the round's secret: ``calculations.ab_arm``). A token that is not this user's for this context is
    refused (``bad_suggestion``, 400)."""
    round = context.round
    fields = {"origin": Origin.WRITTEN}
    if not suggestion_token:
        return fields
    try:
        data = signing.loads(suggestion_token, salt=SUGGESTION_SALT, max_age=SUGGESTION_MAX_AGE_S)
    except signing.BadSignature:
        raise RuleError(Code.BAD_SUGGESTION, "The suggestion was changed or has expired; discard it and ask again.") from None
    if data.get("u") != user.pk or data.get("c") != context.pk:
        raise RuleError(Code.BAD_SUGGESTION, "That suggestion was made for another context; discard it.")
    suggested = data["s"]
    names = [f["name"] for f in round.task.config["input_fields"]]
    distance = calculations.fields_distance(suggested.get("input", {}), example_input, names)
    return {**fields, "origin": Origin.ASSISTED, "suggestion": suggested, "suggestion_distance": distance}


def set_assistant(*, round, model: MLModel | None, enabled: bool, ab_split: bool, acting_user) -> RoundAssistant | None:
    """Turn ``round``'s writing assistant on (``model``, ``enabled``, ``ab_split``) or off (``model`` None:
    the record is deleted; examples keep what they recorded). Only the task's owners (``NotAllowed``);
    the model must be one of ``generators_for`` (``not_a_generator``, 400) whose submitter consented to
    ``assist`` (``tasks.loop.gate.check_consent``: ``model_consent_missing``, 400)."""
    task = round.task
    if not task.is_owner(acting_user):
        raise NotAllowed(Code.NOT_ANNOTATOR, f"Only owners of {task.name} set a round's writing assistant.")
    if model is None:
        RoundAssistant.objects.filter(round=round).delete()
        return None
    if model.pk not in {m.pk for m in generators_for(task)}:
        raise RuleError(Code.NOT_A_GENERATOR, f"{model.name} cannot write for {task.name}: pick an endpoint model of "
                        "the task or a local language model you own.", field="model")
    gate.check_consent([model], Purpose.ASSIST, field="model")
    assistant, _ = RoundAssistant.objects.update_or_create(
        round=round, defaults={"model": model, "enabled": enabled, "ab_split": ab_split})
    return assistant


def generators_for(task) -> list[MLModel]:
    """The models an owner of ``task`` may use as assistant or generator: the task's endpoint models, and
    local causal language models (directories of a conversational task) the task's owners own."""
    endpoints = list(MLModel.objects.filter(task=task, kind=MLModel.Kind.ENDPOINT).order_by("name"))
    local = [m for m in MLModel.objects.filter(kind=MLModel.Kind.HF_DIRECTORY, owner__in=task.owners.all()).select_related("task")
             .order_by("name") if m.task.spec.conversational]
    return endpoints + local
