"""The gate every call to a model passes: consent, the round's budget and the audit record, decided once.

A caller states why it calls a model and for whom, and calls it inside that admission::

    with gate.admit(model, Purpose.LOOP, user=request.user, round=round):
        output = get_predictor(model).predict([inputs])[0]

    async with gate.aadmit(model, Purpose.ASSIST, user=user, round=round):
        answer = await acall(endpoint, messages)

1. **Consent** (``consent_missing``). A submitter's endpoint serves the leaderboard's evaluations, which
   its submission asked for (``evaluation``). Every other purpose (``loop``, ``assist``, ``generate``,
   ``transfer``, ``judge``) needs the submitter's consent for that purpose (``Endpoint.consents``),
   which only the submitter gives or revokes (``set_consents``). *Test connection* (``test``) is the
   submitter's own, or a task owner's for an endpoint the submitter did not send. An endpoint of an
   owner of the task (or a superuser), or of the platform (no owner), needs no one else's consent.
   Consent is read from the database at every admission, so a revocation stops the next call, in a
   round already running too. A refusal is ``RuleError`` ``model_consent_missing`` (403), recorded.
2. **Budget** (``Admission.reserve``). Every request an endpoint is sent (``tasks/loop/endpoints``:
   ``call``, ``acall``, ``post_json``, ``apost_json``, the chat stream, the probe) first reserves one
   call and an upper bound of its tokens from its round's budget (``RoundSpend``) in one conditional
   ``UPDATE``, which no concurrent reservation can pass, on SQLite or PostgreSQL; after the answer the
   unused tokens are given back (and the call, when it failed). A spent budget is ``RuleError``
   ``endpoint_budget_spent`` (409). An answer from the response cache is no call and reserves nothing.
3. **Audit** (``ModelCall``). One row per request an endpoint was sent: model, purpose, task, round,
   acting user, tokens, latency, status; refusals too. A local model runs in the process, under no
   one's key and on no budget: it passes the gate without a record.

Nothing else calls an endpoint: its transport functions ask ``admission_for(model)``, which raises
``GateBypassed`` outside an admission of that model. ``PURPOSES`` is the registry of purposes and who
may consent to each (the docs' security page lists it; ``tests/security`` drives every path).
"""

from __future__ import annotations

import contextvars
import dataclasses
import threading
from contextlib import asynccontextmanager, contextmanager

from asgiref.sync import sync_to_async
from django.db import transaction
from django.db.models import F

from dynabench import metrics
from dynabench.db import release_connections
from dynabench.errors import NotAllowed, RuleError
from tasks.loop.gate_models import ModelCall, Purpose, RoundSpend
from tasks.loop.endpoints.base import EndpointCode

CONSENT_MISSING = "model_consent_missing"


@dataclasses.dataclass(frozen=True)
class PurposeRule:
    """What a purpose is and who may let the task's owners call another user's endpoint for it."""

    purpose: Purpose
    needs_consent: bool
    consent_by: str


PURPOSES: dict[str, PurposeRule] = {rule.purpose.value: rule for rule in (
    PurposeRule(Purpose.EVALUATION, False, "implied by the submission: a submitted model is evaluated"),
    PurposeRule(Purpose.LOOP, True, "the submitter"),
    PurposeRule(Purpose.ASSIST, True, "the submitter"),
    PurposeRule(Purpose.GENERATE, True, "the submitter"),
    PurposeRule(Purpose.TRANSFER, True, "the submitter"),
    PurposeRule(Purpose.JUDGE, True, "the submitter"),
    PurposeRule(Purpose.TEST, False, "none: only the submitter (or a task owner, for endpoints the submitter does not own) tests it"),
)}

#: The purposes a submitter can consent to (``Endpoint.consents`` holds a subset).
CONSENTABLE = tuple(p for p, rule in PURPOSES.items() if rule.needs_consent)

#: Tokens reserved for the answer of a request whose parameters set no ``max_tokens``.
DEFAULT_COMPLETION_RESERVE = 1024
#: Tokens reserved for a message part that is not text (an image, a clip).
MEDIA_PART_TOKENS = 1024
#: Tokens reserved per message for the chat template around it.
MESSAGE_OVERHEAD_TOKENS = 16


class GateBypassed(RuntimeError):
    """An endpoint was about to be called outside an admission of the gate (a programming error)."""


def owned_by_task_owners(model) -> bool:
    """True when ``model`` needs no one else's consent (one query): the platform's (no owner), or its
    owner owns the task (or is a superuser)."""
    return _standing(model)[0]


def _standing(model) -> tuple[bool, list]:
    """``(owned by the task's owners or the platform, the submitter's consents)``: one query, two when
    the submitter is no superuser (whether they own the task)."""
    from tasks.models import Endpoint, Task

    if model.owner_id is None:
        return True, []
    row = Endpoint.objects.filter(model_id=model.pk).values_list("consents", "model__owner__is_superuser").first()
    consents, superuser = (list(row[0] or []), row[1]) if row is not None else ([], model.owner.is_superuser)
    return superuser or Task.owners.through.objects.filter(task_id=model.task_id, user_id=model.owner_id).exists(), consents


def consent_missing(model, purpose, *, user=None) -> str:
    """Why ``model`` may not be called for ``purpose`` on behalf of ``user``: a message naming whose
    consent is missing, or ``""`` when it may. Reads the database (the consent as it is now)."""
    purpose = Purpose(purpose)
    if not model.is_endpoint or purpose is Purpose.EVALUATION:
        return ""
    own, consents = _standing(model)
    if purpose is Purpose.TEST:
        if user is None or user.pk == model.owner_id or (own and model.task.is_owner(user)) or user.is_superuser:
            return ""
        return (f"Only the submitter of {model.name} tests its connection: the call would go to their server under "
                "their key.")
    if own or purpose.value in consents:
        return ""
    owner = model.owner.get_username() if model.owner is not None else "its submitter"
    return (f"Model {model.name} is an endpoint submitted by {owner}, who has not consented to its use for "
            f"'{purpose.value}' ({purpose.label.lower()}): the call would go to their server under their key. "
            f"Ask {owner} to allow '{purpose.value}' for it, or choose another model.")


def check_consent(models, purpose, *, field: str = "model", user=None) -> None:
    """Refuse early, where a model is put to work (forms, serializers, the admin, services): raise
    ``RuleError`` ``model_consent_missing`` (400, ``field``) for the first of ``models`` that
    ``consent_missing`` refuses for ``purpose``."""
    for model in models:
        reason = consent_missing(model, purpose, user=user)
        if reason:
            raise RuleError(CONSENT_MISSING, reason, field=field)


def consented(models, purpose) -> list:
    """The ``models`` that may be called for ``purpose`` (the others skipped, not refused)."""
    return [model for model in models if not consent_missing(model, purpose)]


def clean_consents(consents) -> list:
    """``consents`` as stored: sorted, unique, each a purpose a submitter can consent to; ``RuleError`` otherwise."""
    if not isinstance(consents, (list, tuple, set)) or not all(isinstance(c, str) for c in consents):
        raise RuleError("bad_consents", f"'consents' is a list of purposes among {', '.join(CONSENTABLE)}.", field="consents")
    unknown = sorted(set(consents) - set(CONSENTABLE))
    if unknown:
        raise RuleError("bad_consents", f"Unknown purposes {unknown}; a submitter consents to {', '.join(CONSENTABLE)}.",
                        field="consents")
    return sorted(set(consents))


def set_consents(*, model, acting_user, consents) -> list:
    """Set the purposes ``model``'s submitter consents to; return them sorted. Only the submitter (or a
    superuser) may: ``NotAllowed`` (403) otherwise; an unknown purpose is ``RuleError`` (400, ``consents``).
    A revocation holds from the next call on."""
    from tasks.models import Endpoint

    if not (acting_user.is_authenticated and (acting_user.pk == model.owner_id or acting_user.is_superuser)):
        raise NotAllowed("not_model_submitter", f"Only the submitter of {model.name} gives or revokes consent to its use.")
    chosen = clean_consents(consents)
    if not Endpoint.objects.filter(model_id=model.pk).update(consents=chosen):
        raise RuleError(EndpointCode.BAD_SETTINGS, f"The model '{model.name}' is not behind an endpoint.")
    return chosen


@dataclasses.dataclass
class Reservation:
    """What one request reserved of its round's budget: one call and ``tokens`` (an upper bound)."""

    tokens: int


def estimate_tokens(messages, params: dict) -> int:
    """An upper bound of the tokens one request uses: each text's UTF-8 bytes (a token is at least one
    byte), ``MEDIA_PART_TOKENS`` per image or clip, ``MESSAGE_OVERHEAD_TOKENS`` per message, plus the
    answer's ``max_tokens`` (``DEFAULT_COMPLETION_RESERVE`` when unset)."""
    total = 0
    for message in messages if isinstance(messages, list) else [messages]:
        content = message.get("content") if isinstance(message, dict) else message
        total += MESSAGE_OVERHEAD_TOKENS
        for part in content if isinstance(content, list) else [content]:
            if isinstance(part, str):
                total += len(part.encode())
            elif isinstance(part, dict) and part.get("type") == "text":
                total += len(str(part.get("text", "")).encode())
            else:
                total += MEDIA_PART_TOKENS if part is not None else 0
    limit = params.get("max_tokens") if isinstance(params, dict) else None
    return total + (int(limit) if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0
                    else DEFAULT_COMPLETION_RESERVE)


class Admission:
    """One caller's leave to call ``model`` for ``purpose``: reserves each request's share of the round's
    budget (``reserve``), records how it ended (``settle``) and writes the audit rows (``flush``).
    Thread-safe: an evaluation's requests run on a pool of threads."""

    def __init__(self, model, purpose: Purpose, *, user=None, round=None):
        self.model, self.purpose, self.round = model, Purpose(purpose), round
        self.user_id = getattr(user, "pk", None) if getattr(user, "is_authenticated", False) else None
        self.counted = bool(model.is_endpoint and round is not None)  # every request of a round is counted
        self._rows: list[ModelCall] = []
        self._back = [0, 0]  # calls, tokens reserved but not used: given back to the round's RoundSpend on flush
        self._lock = threading.Lock()

    def _row(self, status, prompt_tokens=0, completion_tokens=0, latency_ms=0.0) -> ModelCall:
        """The audit row of one call (or refusal), counted in the platform's metrics as it is made."""
        metrics.record_model_call(self.model.pk, self.purpose.value, status, (latency_ms or 0.0) / 1000 if latency_ms else None,
                                  prompt_tokens, completion_tokens)
        return ModelCall(model_id=self.model.pk, task_id=self.model.task_id, round_id=getattr(self.round, "pk", None),
                         user_id=self.user_id, purpose=self.purpose.value, status=status, prompt_tokens=prompt_tokens or 0,
                         completion_tokens=completion_tokens or 0, latency_ms=latency_ms or 0.0)

    def reserve(self, messages, params=None) -> Reservation | None:
        """Reserve one request's call and tokens (``estimate_tokens``, or 0 when the round sets no token
        budget) of the round's ``RoundSpend``; None outside a round or for a local model. Raises
        ``RuleError`` ``endpoint_budget_spent`` (409), recorded, when the reservation would pass either budget."""
        if not self.counted:
            return None
        round = self.round
        estimate = estimate_tokens(messages, params if params is not None else self._params()) \
            if round.endpoint_token_budget is not None else 0
        fits = RoundSpend.objects.filter(round_id=round.pk)
        if round.endpoint_call_budget is not None:
            fits = fits.filter(calls__lt=round.endpoint_call_budget)
        if round.endpoint_token_budget is not None:
            fits = fits.filter(tokens__lte=round.endpoint_token_budget - estimate)
        taken = fits.update(calls=F("calls") + 1, tokens=F("tokens") + estimate)
        if not taken:  # the round's first reservation makes its row, unless a concurrent one just did: try again either way
            RoundSpend.objects.get_or_create(round_id=round.pk)
            taken = fits.update(calls=F("calls") + 1, tokens=F("tokens") + estimate)
        if not taken:
            ModelCall.objects.bulk_create([self._row(ModelCall.Status.REFUSED_BUDGET)])
            spent = RoundSpend.objects.filter(round_id=round.pk).values("calls", "tokens").first() or {"calls": 0, "tokens": 0}
            raise RuleError(
                EndpointCode.BUDGET_SPENT,
                f"Round {round.number} has used its budget for endpoint models ({spent['calls']} calls, "
                f"{spent['tokens']} tokens reserved or used). Nothing was saved; a task owner can raise the budget.",
                status_code=409,
            )
        return Reservation(tokens=estimate)

    def _params(self) -> dict:
        endpoint = getattr(self.model, "endpoint", None)
        return getattr(endpoint, "params", None) or {}

    def settle(self, reservation: Reservation | None, answer=None, *, latency_ms: float = 0.0) -> None:
        """Record how one request ended (``answer``: the endpoint's ``Answer``, None when it failed) and
        what it gives back to the round's budget: the unused tokens, and the call when it failed. Touches
        no database: ``flush`` writes it all in one transaction."""
        if answer is None:
            row = self._row(ModelCall.Status.FAILED, latency_ms=latency_ms)
        else:
            row = self._row(ModelCall.Status.OK, answer.prompt_tokens, answer.completion_tokens, answer.latency_ms)
        with self._lock:
            self._rows.append(row)
            if reservation is not None:
                used = row.prompt_tokens + row.completion_tokens if answer is not None else 0
                self._back[0] += 0 if answer is not None else 1
                self._back[1] += reservation.tokens - used

    @property
    def pending(self) -> bool:
        """True when ``flush`` has something to write."""
        return bool(self._rows or any(self._back))

    def flush(self) -> None:
        """In one transaction: write the audit rows recorded so far, and give back to the round's
        ``RoundSpend`` what its requests reserved and did not use (the tokens they used past an
        estimate of 0 are charged)."""
        with self._lock:
            rows, self._rows = self._rows, []
            (back_calls, back_tokens), self._back = self._back, [0, 0]
        if not rows and not back_calls and not back_tokens:
            return
        with transaction.atomic():
            if rows:
                ModelCall.objects.bulk_create(rows)
            if back_calls or back_tokens:
                RoundSpend.objects.filter(round_id=self.round.pk).update(calls=F("calls") - back_calls, tokens=F("tokens") - back_tokens)


_ADMITTED: contextvars.ContextVar[tuple] = contextvars.ContextVar("gate_admitted", default=())


def _open(model, purpose, user, round) -> Admission:
    reason = consent_missing(model, purpose, user=user)
    admission = Admission(model, purpose, user=user, round=round)
    if reason:
        ModelCall.objects.bulk_create([admission._row(ModelCall.Status.REFUSED_CONSENT)])
        raise RuleError(CONSENT_MISSING, reason, status_code=403)
    return admission


@contextmanager
def admit(model, purpose, *, user=None, round=None):
    """Admit calls to ``model`` for ``purpose`` on behalf of ``user`` (None: a job of the platform) in
    ``round`` (its budget; None: none) for the block; yield the ``Admission``. Raises ``RuleError``
    ``model_consent_missing`` (403) before the block runs when consent is missing. A local model (no key,
    no budget, no one's consent) passes without a record or a query."""
    admission = _open(model, purpose, user, round)
    token = _ADMITTED.set(_ADMITTED.get() + (admission,))
    try:
        yield admission
    finally:
        _ADMITTED.reset(token)
        admission.flush()


@asynccontextmanager
async def aadmit(model, purpose, *, user=None, round=None):
    """``admit`` for a coroutine: the database steps run on a thread, the block on the event loop."""
    admission = await sync_to_async(released(_open))(model, purpose, user, round) if model.is_endpoint else _open(model, purpose, user, round)
    token = _ADMITTED.set(_ADMITTED.get() + (admission,))
    try:
        yield admission
    finally:
        _ADMITTED.reset(token)
        if admission.pending:
            await sync_to_async(released(admission.flush))()


def released(step):
    """``step`` (a database step of a coroutine's call, run by ``sync_to_async``) that gives its database
    connections back when it ends (``dynabench.db.release_connections``): a call that waits a minute on a
    model between two such steps holds no pooled connection meanwhile."""
    def run(*args, **kwargs):
        try:
            return step(*args, **kwargs)
        finally:
            release_connections()

    return run


def admission_for(model) -> Admission:
    """The admission in force for ``model`` in this context; ``GateBypassed`` when there is none: every
    transport function of ``tasks/loop/endpoints`` asks it before sending anything."""
    for admission in reversed(_ADMITTED.get()):
        if admission.model.pk == model.pk:
            return admission
    raise GateBypassed(f"model {model.pk} was called outside the gate (tasks.loop.gate.admit)")


def calls_left(round) -> int | None:
    """The calls ``round``'s endpoint budget has left now (None: it sets no call budget)."""
    if round.endpoint_call_budget is None:
        return None
    reserved = RoundSpend.objects.filter(round_id=round.pk).values_list("calls", flat=True).first() or 0
    return max(0, round.endpoint_call_budget - reserved)


def usage_by_purpose(model) -> list[dict]:
    """The calls made under ``model``'s key, for its submitter: one row per task, purpose and status with
    ``calls``, ``prompt_tokens``, ``completion_tokens`` (newest activity first)."""
    from django.db.models import Count, Max, Sum

    rows = (ModelCall.objects.filter(model=model).values("task__code", "purpose", "status")
            .annotate(calls=Count("id"), prompt_tokens=Sum("prompt_tokens"), completion_tokens=Sum("completion_tokens"),
                      last=Max("created_at")).order_by("-last"))
    return [{"task": r["task__code"], "purpose": r["purpose"], "status": r["status"], "calls": r["calls"],
             "prompt_tokens": r["prompt_tokens"] or 0, "completion_tokens": r["completion_tokens"] or 0,
             "last_call": r["last"]} for r in rows]
