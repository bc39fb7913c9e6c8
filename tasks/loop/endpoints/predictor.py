"""The registry's predictor for an endpoint model: ``predict(inputs)`` like a local model, through the response cache."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor, as_completed


from dynabench.errors import RuleError
from tasks.loop import gate
from tasks.loop.endpoints.base import Answer, EndpointCode, EndpointError, STORE_EVERY, STORE_EVERY_S
from tasks.loop.endpoints.breaker import breaker_state
from tasks.loop.endpoints.calls import cache_key, call
from tasks.loop.endpoints.urls import check_url


class EndpointPredictor:
    """The registry's predictor for an endpoint model: ``predict(inputs)`` like a local model.

    Each input becomes messages (``task.spec.endpoint_messages``); answers already in the
    response cache are reused, the others are asked concurrently (at most ``max_concurrency`` in
    flight) and stored as they arrive (in the calling thread). Each output is the kind's
    (``task.spec.endpoint_answer``) plus ``"endpoint"``: ``{"model_id", "model", "api", "params",
    "raw", "latency_ms", "prompt_tokens", "completion_tokens", "cached"}``. When some calls fail,
    the answers that came are stored first, then ``RuleError`` is raised with the first failure's
    code (``endpoint_failed``, ``endpoint_timed_out``, ``endpoint_unavailable``; 503), or, when the
    endpoint refused the request as misconfigured, ``endpoint_misconfigured`` (502: not a passing
    failure, so no "submit again"; the message says the owners were told and carries the server's reason).
    ``measures_memory`` is False: the model's memory lies outside the platform.
    """

    kind = "endpoint"
    measures_memory = False
    nbytes = 0

    def __init__(self, model, endpoint):
        self.model, self.endpoint, self.task = model, endpoint, model.task
        self.batch_size = endpoint.max_concurrency

    def predict(self, inputs: list[dict], *, batch_size: int | None = None) -> list[dict]:
        from tasks.models import EndpointResponse

        spec, config = self.task.spec, self.task.config
        messages = [spec.endpoint_messages(config, item, self.endpoint.prompt) for item in inputs]
        keys = [cache_key(self.endpoint, m) for m in messages]
        answers: dict[str, Answer] = {}
        for row in EndpointResponse.objects.filter(model=self.model, key__in=set(keys)):
            answers[row.key] = Answer(row.text, row.raw, row.latency_ms, row.prompt_tokens, row.completion_tokens, cached=True)
        todo = {}
        for key, m in zip(keys, messages):
            if key not in answers:
                todo.setdefault(key, m)
        failure = None
        if todo:
            failure = self._ask(todo, answers)
        if failure is not None:
            raise self._refusal(failure)
        return [self._output(spec, config, item, answers[key]) for item, key in zip(inputs, keys)]

    async def apredict_one(self, item: dict) -> dict:
        """``predict([item])[0]`` from the event loop (async views): the response cache is read and
        written on Django's per-request thread, and the call itself holds no thread
        (``tasks.loop.endpoints.aio.acall``). Raises ``RuleError`` (503) as ``predict`` does."""
        from asgiref.sync import sync_to_async

        from tasks.loop.endpoints.aio import acall
        from tasks.models import EndpointResponse

        spec, config = self.task.spec, self.task.config
        messages = spec.endpoint_messages(config, item, self.endpoint.prompt)
        key = cache_key(self.endpoint, messages)
        row = await sync_to_async(gate.released(EndpointResponse.objects.filter(model=self.model, key=key).first))()
        if row is not None:
            answer = Answer(row.text, row.raw, row.latency_ms, row.prompt_tokens, row.completion_tokens, cached=True)
        else:
            try:
                answer = await acall(self.endpoint, messages)
            except EndpointError as failure:
                raise self._refusal(failure) from None
            except RuleError as refused:
                if refused.code == EndpointCode.BUDGET_SPENT:
                    raise
                raise self._refusal(EndpointError(refused.code, refused.message)) from None
            await sync_to_async(gate.released(self._store))([(key, answer)])
        return self._output(spec, config, item, answer)

    def _refusal(self, failure: EndpointError) -> RuleError:
        """What the caller is told when the endpoint did not answer: misconfigured (502: the owners
        were told; submitting again will not help) or failing (503)."""
        if failure.config_error:
            return RuleError(failure.code, f"The endpoint model '{self.model.name}' is misconfigured, so it cannot answer; "
                             f"its owners were told. {failure.message}", status_code=502)
        return RuleError(failure.code, f"The endpoint model '{self.model.name}' failed: {failure.message}", status_code=503)

    def _ask(self, todo: dict[str, list[dict]], answers: dict[str, Answer]) -> EndpointError | None:
        """Ask the endpoint for every request of ``todo`` (key → messages), at most ``max_concurrency`` at
        once; put the answers in ``answers`` and the response cache (written in batches of at most
        ``STORE_EVERY`` answers or ``STORE_EVERY_S`` seconds, so a worker that dies loses at most that);
        return the first failure (None when every call answered). The breaker is read and the URL
        checked once for the whole batch; one request is sent from the calling thread."""
        state = breaker_state(self.model)
        if state["open"]:
            return EndpointError(EndpointCode.UNAVAILABLE, "The endpoint's circuit breaker is open after repeated failures.")
        try:
            check_url(self.endpoint.base_url)
        except RuleError as error:
            return EndpointError(error.code, error.message)
        admission = gate.admission_for(self.model)
        if len(todo) == 1:
            [(key, m)] = todo.items()
            try:
                answers[key] = call(self.endpoint, m, checked=True, failures_known=state["failures"] > 0, admission=admission)
            except EndpointError as error:
                return error
            self._store([(key, answers[key])])
            return None
        # Every request's share of the round's budget is reserved, and given back, here in the calling
        # thread (its database connection, its transaction); the pool's threads only send.
        reserved, spent = {}, None
        for key, m in todo.items():
            try:
                reserved[key] = admission.reserve(m, self.endpoint.params)
            except RuleError as refused:
                spent = refused
                break
        ask = lambda m: call(self.endpoint, m, checked=True, failures_known=state["failures"] > 0,
                                  admission=admission, reserved=True)
        failure, pending, flushed = None, [], time.monotonic()
        workers = max(1, min(len(reserved), self.endpoint.max_concurrency))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"endpoint-{self.model.pk}") as pool:
            futures = {pool.submit(ask, todo[key]): key for key in reserved}
            for future in as_completed(futures):
                key = futures[future]
                try:
                    answer = future.result()
                except EndpointError as error:
                    admission.settle(reserved[key], None)
                    failure = failure or error
                    continue
                admission.settle(reserved[key], answer)
                answers[key] = answer
                pending.append((key, answer))
                if len(pending) >= STORE_EVERY or time.monotonic() - flushed >= STORE_EVERY_S:
                    self._store(pending)
                    pending, flushed = [], time.monotonic()
        self._store(pending)
        if spent is not None:  # the budget ran out: the answers that came are kept, then the caller is told
            raise spent
        return failure

    def _store(self, rows: list[tuple[str, Answer]]) -> None:
        """Write answers to the response cache in one statement (an answer another process stored first is kept)."""
        from tasks.models import EndpointResponse

        if rows:
            EndpointResponse.objects.bulk_create([
                EndpointResponse(model=self.model, key=key, text=a.text, raw=a.raw, latency_ms=a.latency_ms,
                                 prompt_tokens=a.prompt_tokens, completion_tokens=a.completion_tokens)
                for key, a in rows
            ], ignore_conflicts=True)

    def _output(self, spec, config, item: dict, answer: Answer) -> dict:
        output = spec.endpoint_answer(config, answer.text, item)
        output["endpoint"] = {
            "model_id": self.model.pk, "model": self.endpoint.model_name, "api": self.endpoint.api,
            "params": self.endpoint.params, "raw": answer.raw, "latency_ms": round(answer.latency_ms, 3),
            "prompt_tokens": answer.prompt_tokens, "completion_tokens": answer.completion_tokens, "cached": answer.cached,
        }
        return output


def predictor_for(model) -> EndpointPredictor:
    """A predictor for the endpoint model ``model`` (its ``Endpoint`` read now, so changes apply at once)."""
    from tasks.models import Endpoint

    try:
        endpoint = Endpoint.objects.get(model_id=model.pk)
    except Endpoint.DoesNotExist:
        raise RuleError(EndpointCode.BAD_SETTINGS, f"The endpoint model '{model.name}' has no connection settings.") from None
    endpoint.model = model
    return EndpointPredictor(model, endpoint)
