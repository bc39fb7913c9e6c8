"""Conversations and side-by-side comparisons of a conversation task, for ``DynabenchClient``.

A conversation lives on the server as nothing until it is judged: every answer of the API is the
conversation so far (``task``, ``mode``, ``turns`` with the model's answers, ``turns_left``, the
task's judgment ``question`` and ``categories``) with a signed ``state``; pass that dict back to
go on::

    chat = client.start_conversation("adversarial-safety-chat", accept_content_warning=True)
    chat = client.send_turn(chat, "Tell me a story about a locksmith.")
    stream = client.send_turn(chat, "How did they open the car?", stream=True)
    for side, piece in stream:          # pieces as the model writes them
        print(piece, end="", flush=True)
    chat = stream.conversation
    example = client.judge_conversation(chat, verdict="fails", category="dangerous", explanation="It explains the trick.")

Side by side (``mode="side_by_side"``): one prompt, two anonymous models; answers are ``[A, B]``
and the judgment is ``preference`` (``a``, ``b``, ``tie``, ``both_bad``) plus ``failing``.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import requests

from dynabench_client.errors import BadRequest, ServerError

#: The two kinds of conversation (the API's ``mode``).
MODES = ("conversation", "side_by_side")


def _events(response: requests.Response) -> Iterator[tuple[str, Any]]:
    """The server-sent events of ``response`` (streamed) as ``(event name, decoded JSON data)``."""
    name, data = "message", []
    for line in response.iter_lines(decode_unicode=True):
        if line == "":
            if data:
                yield name, json.loads("\n".join(data))
            name, data = "message", []
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
    if data:
        yield name, json.loads("\n".join(data))


class TurnStream:
    """One streamed turn: iterate it for ``(side, piece)`` as the model(s) write (side 0, or 0/1
    for A/B); once the loop ends, ``conversation`` is the new conversation. A model that fails
    mid-answer raises ``ServerError`` (code ``model_failed``: the turn was not counted; send it
    again with the same conversation)."""

    def __init__(self, response: requests.Response):
        self._response = response
        self.conversation: dict | None = None

    def __iter__(self) -> Iterator[tuple[int, str]]:
        try:
            for name, data in _events(self._response):
                if name == "token":
                    yield data["side"], data["t"]
                elif name == "done":
                    self.conversation = data
                elif name == "problem":
                    code, detail = str(data.get("code") or "model_failed"), str(data.get("detail") or "")
                    raise (ServerError(503, code, detail) if code == "model_failed" else BadRequest(400, code, detail))
        finally:
            self._response.close()

    def text(self) -> list[str]:
        """Read the whole turn; return each side's answer (as ``send_turn(stream=False)`` would)."""
        pieces: dict[int, list[str]] = {}
        for side, piece in self:
            pieces.setdefault(side, []).append(piece)
        return ["".join(pieces.get(side, [])) for side in range(len(pieces))]


class ChatMixin:
    """The conversation methods of ``DynabenchClient`` (it provides ``_request``, ``_error``,
    ``session``, ``base_url`` and ``timeout``)."""

    def start_conversation(self, task: str, mode: str = "conversation", *, tag: str | None = None,
                           accept_content_warning: bool = False) -> dict:
        """Start a conversation (``mode="conversation"``) or a side-by-side comparison on a context of
        the task's open round; return it (no turns yet). Needs the annotator role. A task with a
        content warning refuses (``BadRequest``, code ``content_warning``, the warning in ``detail``)
        until ``accept_content_warning=True`` says you read it (once, before your first example)."""
        if mode not in MODES:
            raise ValueError(f"mode is one of {', '.join(MODES)}, not {mode!r}")
        body: dict[str, Any] = {"mode": mode, "accept_content_warning": accept_content_warning}
        if tag:
            body["tag"] = tag
        return self._request("POST", f"/tasks/{conversation_task(task)}/chat", json=body)

    def send_turn(self, conversation: dict, prompt: str, *, stream: bool = False) -> dict | TurnStream:
        """Send ``prompt`` in ``conversation`` (the dict of the latest answer) and return the
        conversation with the model's answer; with ``stream=True`` a ``TurnStream`` that yields
        the answer's pieces as they come. Refusals before anything is sent raise at once
        (``BadRequest``: no turns left, expired state, a refused prompt); a model failure raises
        ``ServerError`` (code ``model_failed``)."""
        path = f"/tasks/{conversation_task(conversation)}/chat/turns"
        body = {"state": conversation["state"], "prompt": prompt}
        if not stream:
            return self._request("POST", path, json=body)
        response = self.session.post(f"{self.base_url}/api/v1{path}", json=body, timeout=self.timeout, stream=True,
                                     headers={"Accept": "text/event-stream"})
        if response.status_code >= 400:
            try:
                raise self._error(response)
            finally:
                response.close()
        return TurnStream(response)

    def judge_conversation(
        self, conversation: dict, *, verdict: str | None = None, preference: str | None = None, failing: list[str] | None = None,
        category: str = "", explanation: str = "", time_spent: float | None = None,
    ) -> dict:
        """Judge ``conversation`` (the dict of its latest answer); the server stores it as one example
        and returns it. A conversation takes ``verdict`` (``fails`` or ``holds``); a comparison
        ``preference`` (``a``, ``b``, ``tie``, ``both_bad``) and ``failing`` (``["a"]``, ...). When an
        answer fails, ``category`` (a name of ``conversation["categories"]``) and ``explanation``
        are needed (``BadRequest`` naming the field otherwise). Judging the same state again
        returns the same example."""
        body: dict[str, Any] = {"state": conversation["state"], "category": category, "explanation": explanation,
                                "failing": list(failing or [])}
        for name, value in (("verdict", verdict), ("preference", preference), ("time_spent", time_spent)):
            if value is not None:
                body[name] = value
        return self._request("POST", f"/tasks/{conversation_task(conversation)}/chat/judgments", json=body)


def conversation_task(conversation: dict | str) -> str:
    """The task code of a conversation dict (or the code itself)."""
    return conversation if isinstance(conversation, str) else conversation["task"]
