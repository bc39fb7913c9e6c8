"""Conversations kept on the server until they are judged: nothing a turn the server accepted is lost.

A conversation's state (``annotation/chat.py``: the context, the models, each turn with its answers,
the submission key) is a ``ChatDraft`` row; the page and the API hold a sealed reference to it
(``save_draft``: encrypted and authenticated, bound to the user and the task), so a side-by-side
comparison's models never reach the client. Each turn the server accepts is a ``ChatTurn`` row written
before any model is asked (``open_turn``), with its prompt, and finished as ``done`` with the answers
(the draft's state moving on in the same transaction) or ``failed`` with the reason and the part of
each answer that came (``close_turn``). A turn still ``running`` long after the page's wait for a
model (the web process that served it was killed) is failed when the draft is next read
(``fail_stalled``). A page reloaded mid-turn shows the stored turn, and the last prompt that got no
answer waits in the form (``unanswered``).

Drafts nobody touched for ``DRAFT_MAX_AGE_S`` have expired (``load_draft`` refuses them) and are
removed by ``expire_drafts`` (``manage.py remove_stale_chat_drafts``); they never become examples.
Text-to-image attempts, which need no server-side turn, keep a stateless sealed token (``seal_state``).
"""

from __future__ import annotations

import datetime
import json

from django.conf import settings
from django.core import signing
from django.db import transaction
from django.utils import timezone

from annotation.chat_models import ChatDraft, ChatTurn
from dynabench.errors import RuleError
from dynabench.sealing import seal, unseal

#: Seconds a draft (or an attempt's stateless token) stays valid after it last changed.
DRAFT_MAX_AGE_S = 6 * 3600
#: Seconds past the page's wait for a model (``DYNABENCH_MODEL_WAIT_S``) after which a turn still
#: ``running`` is taken for one whose web process died.
STALL_GRACE_S = 60
EXPIRED = "This conversation has expired or does not belong to you; start a new one."
STOPPED = "The server stopped before the answer ended; your prompt is in the form: send it again."


def _salt(user, task) -> str:
    return f"dynabench.chat:{user.pk}:{task.pk}"


def seal_state(*, user, task, state: dict) -> str:
    """A stateless token of ``state`` (signed, compressed, sealed) for the page: text-to-image attempts."""
    return seal(signing.dumps(state, salt=_salt(user, task), compress=True), purpose="chat-state")


def open_state(*, user, task, token: str) -> dict:
    """The state of a ``seal_state`` token; ``RuleError`` ``chat_expired`` when it is forged, another
    user's or task's, or older than ``DRAFT_MAX_AGE_S``."""
    try:
        state = signing.loads(unseal(token, purpose="chat-state"), salt=_salt(user, task), max_age=DRAFT_MAX_AGE_S)
    except (signing.BadSignature, ValueError):
        raise RuleError("chat_expired", EXPIRED) from None
    if not isinstance(state, dict) or state.get("task") != task.pk:
        raise RuleError("chat_expired", "This conversation belongs to another task; start a new one.")
    return state


def save_draft(*, user, task, state: dict) -> str:
    """Store ``state`` as the draft of its submission key (written only when it changed) and return the
    page's token: a sealed reference to the draft, bound to ``user`` and ``task``."""
    draft = ChatDraft.objects.filter(key=state["key"]).only("pk", "user_id", "task_id", "state").first()
    if draft is None:
        draft = ChatDraft.objects.create(user=user, task=task, key=state["key"], state=state)
    elif (draft.user_id, draft.task_id) != (user.pk, task.pk):
        raise RuleError("chat_expired", EXPIRED)
    elif draft.state != state:
        ChatDraft.objects.filter(pk=draft.pk).update(state=state, updated_at=timezone.now())
    return seal(json.dumps({"d": draft.pk, "u": user.pk, "t": task.pk}), purpose="chat-draft")


def load_draft(*, user, task, token: str) -> ChatDraft:
    """The draft a ``save_draft`` token names, its stalled turns failed (``fail_stalled``); ``RuleError``
    ``chat_expired`` when the token is forged, another user's or task's, or the draft has expired."""
    try:
        ref = json.loads(unseal(token, purpose="chat-draft"))  # authenticated: made by this server (save_draft)
    except ValueError:
        raise RuleError("chat_expired", EXPIRED) from None
    if not isinstance(ref, dict) or (ref.get("u"), ref.get("t")) != (user.pk, task.pk):
        raise RuleError("chat_expired", EXPIRED)
    fresh = timezone.now() - datetime.timedelta(seconds=DRAFT_MAX_AGE_S)
    draft = ChatDraft.objects.filter(pk=ref.get("d"), user=user, task=task, updated_at__gte=fresh).first()
    if draft is None:
        raise RuleError("chat_expired", EXPIRED)
    fail_stalled(draft)
    return draft


def fail_stalled(draft: ChatDraft) -> int:
    """Fail ``draft``'s turns still ``running`` past the page's wait for a model plus ``STALL_GRACE_S``
    (their web process died mid-answer); return how many."""
    wait_s = int(getattr(settings, "DYNABENCH_MODEL_WAIT_S", 300)) + STALL_GRACE_S
    stalled = timezone.now() - datetime.timedelta(seconds=wait_s)
    return ChatTurn.objects.filter(draft=draft, status=ChatTurn.Status.RUNNING, started_at__lt=stalled).update(
        status=ChatTurn.Status.FAILED, reason=STOPPED, finished_at=timezone.now())


def open_turn(*, user, task, state: dict, prompt: str) -> int:
    """Store a turn the server accepted (``running``, with its prompt) before any model is asked; return
    its id. A conversation started without a page (``chat.start`` from a script) gets its draft here."""
    draft_id = ChatDraft.objects.filter(key=state["key"]).values_list("pk", flat=True).first()
    if draft_id is None:
        draft_id = ChatDraft.objects.create(user=user, task=task, key=state["key"], state=state).pk
    return ChatTurn.objects.create(draft_id=draft_id, number=len(state["turns"]), prompt=prompt).pk


def close_turn(turn_id: int, *, state: dict | None = None, answers: list, reason: str = "") -> None:
    """Finish the stored turn: ``done`` with ``answers`` (the answers' records) and the draft's new
    ``state`` in one transaction, or, without ``state``, ``failed`` with ``reason`` and ``answers``
    (the text of each side that came)."""
    with transaction.atomic():
        turn = ChatTurn.objects.select_for_update().filter(pk=turn_id).first()
        if turn is None:
            return
        turn.status = ChatTurn.Status.DONE if state is not None else ChatTurn.Status.FAILED
        turn.answers, turn.reason, turn.finished_at = answers, reason, timezone.now()
        turn.save(update_fields=["status", "answers", "reason", "finished_at"])
        if state is not None:
            ChatDraft.objects.filter(pk=turn.draft_id).update(state=state, updated_at=timezone.now())


def unanswered(draft: ChatDraft) -> ChatTurn | None:
    """The draft's last turn when it has no answer in the state: still running, or failed (its prompt
    goes back in the form); None otherwise."""
    last = ChatTurn.objects.filter(draft=draft).order_by("-pk").first()
    if last is None or last.status == ChatTurn.Status.DONE or last.number < len(draft.state.get("turns", [])):
        return None
    return last


def expire_drafts(*, now=None) -> int:
    """Remove the drafts nobody touched for ``DRAFT_MAX_AGE_S`` (with their turns); return how many."""
    cutoff = (now or timezone.now()) - datetime.timedelta(seconds=DRAFT_MAX_AGE_S)
    _, removed = ChatDraft.objects.filter(updated_at__lt=cutoff).delete()
    return removed.get(ChatDraft._meta.label, 0)
