"""Annotators and validators writing through the platform's API, every request counted: the load of
the fault and backup drills.

``writing_setup(model_dir, annotators=, validators=)`` is Django code for ``WorkerStack.python``: the
default tasks seeded, the classifier folder ``model_dir`` the sentiment round's model in the loop,
the limits raised so that they refuse nothing, and users with API tokens; it prints, last, a JSON
document ``{"annotators": [token, ...], "validators": [...], "contexts": [id, ...]}`` (``WorkerStack.json``).

``Load(base, setup)`` then runs one thread per annotator, each writing sentiment examples with
``POST /api/v1/examples`` over a keep-alive connection, and one per validator, each asking
``GET /api/v1/validations/next`` and recording a verdict with ``POST /api/v1/validations``. Every
example and verdict carries an ``Idempotency-Key``, and one that got no answer (a refused
connection, a 5xx, a reset) is sent again with the same key until it is acknowledged, as a careful
client does: an example stored whose answer was lost is then acknowledged by the replay (200), never
stored twice. Each HTTP request is an ``Attempt``; ``acknowledged()`` maps each example acknowledged
(201 or 200) to its text, and ``acknowledged_by(t)`` those whose answer came before ``t``
(``time.monotonic()``). Bounded: ``per_writer`` examples an annotator at most, and ``stop()``.
"""

from __future__ import annotations

import http.client
import json
import secrets
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

LABELS = ("positive", "negative", "neutral")
TEXTS = (
    "The waiter brought our food quickly, although the soup was barely warm",
    "I have been coming to this garage for years and they never overcharge",
    "The concert started forty minutes late and the sound was muddy",
    "We stayed three nights and the room was exactly as described",
    "Not the worst pizza I have had, but I would not go back",
)


def writing_setup(model_dir, *, annotators: int, validators: int = 0) -> str:
    """Django code for ``WorkerStack.python`` (``json``): the sentiment task with ``model_dir`` in its
    loop, ``annotators`` annotators and ``validators`` validators with API tokens; prints their
    tokens and the round's context ids as one JSON document."""
    return f"""
import json
from django.contrib.auth.models import Group, User
from rest_framework.authtoken.models import Token
from dynabench.roles import ensure_role_groups
from tasks.data.seed import seed_default_tasks
from tasks.models import MLModel, Task

ensure_role_groups()
seed_default_tasks()
task = Task.objects.get(code="sentiment")
task.config = {{**task.config, "daily_example_cap": 1000000}}
task.save()
model = MLModel.objects.create(task=task, name="loop-bert", kind=MLModel.Kind.HF_DIRECTORY, path={str(model_dir)!r})
task.current_round().target_models.add(model)

def people(prefix, role, n):
    group = Group.objects.get(name=role)
    tokens = []
    for i in range(n):
        user = User.objects.create_user(username=f"{{prefix}}{{i}}", password="load-password-1")
        user.groups.add(group)
        tokens.append(Token.objects.create(user=user).key)
    return tokens

contexts = list(task.current_round().contexts.order_by("pk").values_list("pk", flat=True)[:20])
print(json.dumps({{"annotators": people("writer", "annotator", {int(annotators)}),
                  "validators": people("checker", "validator", {int(validators)}), "contexts": contexts}}))
"""


#: What a stack needs in its environment so that no limit refuses the load's requests.
UNLIMITED = dict(ANNOTATION_SUBMISSIONS_PER_MINUTE="0", API_RATE_EXAMPLES="1000000/day", API_RATE_VALIDATIONS="1000000/day")


@dataclass
class Attempt:
    """One HTTP request of the load: what it sent (``sent``: ``example`` or ``validation``), when it
    started and ended (``time.monotonic()``), its status (None: no answer at all, ``error`` says why)
    and the id it acknowledged."""

    sent: str
    key: str
    started: float
    ended: float
    status: int | None
    id: int | None = None
    text: str = ""
    error: str = ""

    @property
    def acknowledged(self) -> bool:
        """Whether the server acknowledged it (201 created, or 200: a replay of one already stored)."""
        return self.status in (200, 201) and self.id is not None


class _Client:
    """A keep-alive HTTP/1.1 connection with a token, opened again after any failure."""

    def __init__(self, base: str, token: str, timeout: float):
        address = urlsplit(base)
        self.host, self.port, self.timeout = address.hostname, address.port, timeout
        self.headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
        self.connection = None

    def request(self, method: str, path: str, body=None, key: str = "") -> tuple[int, dict]:
        if self.connection is None:
            self.connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        headers = {**self.headers, **({"Idempotency-Key": key} if key else {})}
        try:
            self.connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
            response = self.connection.getresponse()
            raw = response.read()
        except Exception:
            self.connection.close()
            self.connection = None
            raise
        try:
            data = json.loads(raw) if raw else {}
        except ValueError:
            data = {"text": raw[:200].decode(errors="replace")}
        return response.status, data


class Load:
    """Annotators and validators writing through the API of the platform at ``base`` (module docstring)."""

    def __init__(self, base: str, setup: dict, *, per_writer: int = 1000, retry_pause_s: float = 0.2, timeout_s: float = 60):
        self.base, self.setup = base, setup
        self.per_writer, self.retry_pause_s, self.timeout_s = per_writer, retry_pause_s, timeout_s
        self.attempts: list[Attempt] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._threads = [threading.Thread(target=self._write, args=(n, token), daemon=True)
                         for n, token in enumerate(setup["annotators"])]
        self._threads += [threading.Thread(target=self._validate, args=(token,), daemon=True) for token in setup["validators"]]

    def start(self) -> Load:
        """Start every annotator and validator; returns the load."""
        for thread in self._threads:
            thread.start()
        return self

    def stop(self, *, timeout: float = 120) -> None:
        """Ask every thread to stop once its request in flight is acknowledged or refused, and wait for them."""
        self._stopping.set()
        for thread in self._threads:
            thread.join(timeout)

    def _record(self, attempt: Attempt) -> None:
        with self._lock:
            self.attempts.append(attempt)

    def _send(self, client: _Client, kind: str, path: str, body: dict, key: str, text: str = "") -> Attempt:
        started = time.monotonic()
        try:
            status, data = client.request("POST", path, body, key)
        except Exception as error:  # noqa: BLE001 - a refused or broken connection is what the drills count
            attempt = Attempt(kind, key, started, time.monotonic(), None, text=text, error=type(error).__name__)
        else:
            attempt = Attempt(kind, key, started, time.monotonic(), status, data.get("id") if status in (200, 201) else None,
                              text=text, error="" if status < 400 else str(data.get("code") or data.get("detail") or data)[:120])
        self._record(attempt)
        return attempt

    def _until_acknowledged(self, client: _Client, kind: str, path: str, body: dict, text: str = "") -> Attempt:
        """Send ``body`` with one key until the server acknowledges it, refuses it for good (a 4xx
        other than 429), or the load stops while it gets no answer."""
        key, first = secrets.token_hex(16), time.monotonic()
        while True:
            attempt = self._send(client, kind, path, body, key, text)
            if attempt.acknowledged or (attempt.status is not None and 400 <= attempt.status < 500 and attempt.status != 429):
                return attempt
            # Once the load stops, a request still failing is sent again for up to ``timeout_s``, so
            # that an example stored whose answer was lost is still acknowledged by its replay.
            if self._stopping.is_set() and time.monotonic() - first > self.timeout_s:
                return attempt
            time.sleep(self.retry_pause_s)

    def _write(self, n: int, token: str) -> None:
        client = _Client(self.base, token, self.timeout_s)
        contexts = self.setup["contexts"]
        for i in range(self.per_writer):
            if self._stopping.is_set():
                return
            text = f"{TEXTS[(n + i) % len(TEXTS)]} (writer {n}, example {i}, {secrets.token_hex(3)})"
            body = {"task": "sentiment", "context": contexts[(n + i) % len(contexts)], "input": {"text": text},
                    "target": {"label": LABELS[(n * 7 + i) % 3]}}
            self._until_acknowledged(client, "example", "/api/v1/examples", body, text)

    def _validate(self, token: str) -> None:
        client = _Client(self.base, token, self.timeout_s)
        i = 0
        while not self._stopping.is_set():
            try:
                status, data = client.request("GET", "/api/v1/validations/next?task=sentiment")
            except Exception:  # noqa: BLE001 - the server is out: wait and ask again
                status, data = None, {}
            if status != 200:
                self._stopping.wait(0.2)
                continue
            i += 1
            label = ("correct", "incorrect", "correct")[i % 3]
            self._until_acknowledged(client, "validation", "/api/v1/validations", {"example": data["id"], "label": label})

    def snapshot(self) -> list[Attempt]:
        """The attempts so far (a copy)."""
        with self._lock:
            return list(self.attempts)

    def acknowledged(self, kind: str = "example") -> dict[int, str]:
        """``{id: text}`` of every ``kind`` (``example`` or ``validation``) acknowledged so far."""
        return {a.id: a.text for a in self.snapshot() if a.sent == kind and a.acknowledged}

    def acknowledged_by(self, moment: float, kind: str = "example") -> dict[int, str]:
        """``{id: text}`` of every ``kind`` whose acknowledgement arrived before ``moment`` (``time.monotonic()``)."""
        return {a.id: a.text for a in self.snapshot() if a.sent == kind and a.acknowledged and a.ended < moment}

    def wait_for_acknowledged(self, n: int, *, kind: str = "example", timeout: float = 300) -> None:
        """Wait until at least ``n`` of ``kind`` are acknowledged; ``timeout`` (s) only catches a hang."""
        deadline = time.monotonic() + timeout
        while len(self.acknowledged(kind)) < n:
            if time.monotonic() > deadline:
                failures = [a for a in self.snapshot() if not a.acknowledged][-5:]
                raise AssertionError(f"hung: {len(self.acknowledged(kind))} of {n} {kind}s acknowledged after {timeout:.0f} s; "
                                     f"last failures: {failures}")
            time.sleep(0.05)
