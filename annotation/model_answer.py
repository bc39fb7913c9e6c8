"""Asking the model in the loop for its answer: the one step of writing an example that waits on a model.

``ask_model`` takes the model chosen by ``annotation/loop_choice.py`` and inputs already
checked and built for the model by the task's spec, runs one forward (a local model through ``tasks/loop/registry.py``, or a call to an endpoint,
``tasks/loop/endpoints/``), and returns the output with the seconds it took. It decides
what the annotator is told when the model does not answer; whether the model was fooled is
the task spec's to decide, and nothing here stores an example.
"""

import logging
import time
from contextlib import contextmanager

from asgiref.sync import sync_to_async

from annotation.error_codes import AnnotationErrorCode as Code
from dynabench.errors import RuleError
from tasks.loop.endpoints.breaker import breaker_open_for
from tasks.loop import gate
from tasks.loop.registry import get_predictor
from tasks.models import MLModel, Purpose, Round

logger = logging.getLogger(__name__)


def ask_model(model: MLModel, inputs: dict, *, round: Round | None = None, user=None) -> tuple[dict, float]:
    """Return the model's output for one input and the seconds the registry took (load included).

    The call goes through the gate for the loop (``tasks.loop.gate``, purpose ``loop``, on behalf of
    ``user``): another user's endpoint without their consent is refused (``model_consent_missing``,
    403); each request an endpoint is sent reserves its share of ``round``'s budget of calls and
    tokens first (``endpoint_budget_spent``, 409) and is recorded. When the model does not answer
    (timed out, failing, its circuit breaker open) the example is refused (503) with the reason:
    nothing is saved, and the create page keeps the annotator's text in the form to submit again.
    """
    started = time.perf_counter()
    with _refusals(model), gate.admit(model, Purpose.LOOP, user=user, round=round):
        output = get_predictor(model).predict([inputs])[0]
    return output, time.perf_counter() - started


async def aask_model(model: MLModel, inputs: dict, *, round: Round | None = None, user=None) -> tuple[dict, float]:
    """``ask_model`` for async views: an endpoint's answer is awaited without holding a thread
    (``EndpointPredictor.apredict_one``); a local model's forward runs on a thread of the default
    executor (it computes; the event loop stays free). Same gate, refusals and budget."""
    started = time.perf_counter()
    with _refusals(model):
        async with gate.aadmit(model, Purpose.LOOP, user=user, round=round):
            predictor = await sync_to_async(get_predictor)(model)  # a local model loads on the request's thread
            if model.is_endpoint:
                output = await predictor.apredict_one(inputs)
            else:
                output = (await sync_to_async(predictor.predict, thread_sensitive=False)([inputs]))[0]
    return output, time.perf_counter() - started


@contextmanager
def _refusals(model: MLModel):
    """What the annotator is told when the model does not answer (see ``ask_model``)."""
    try:
        yield
    except RuleError as error:
        if model.is_endpoint and error.status_code == 503:
            wait = breaker_open_for(model)
            again = f"submit it again in {wait:.0f} s" if wait > 0 else "submit it again in a moment"
            raise RuleError(
                error.code, f"{error.message} Nothing was saved; your text stays in the form: {again}.", status_code=503,
            ) from None
        raise
    except Exception:
        logger.exception("model %s failed to answer", model.pk)
        raise RuleError(
            Code.MODEL_FAILED,
            f"The model in the loop ({model.name}) failed to answer, so nothing was saved. "
            "Try again in a moment; if it keeps failing, tell the task owner.",
            status_code=503,
        ) from None
