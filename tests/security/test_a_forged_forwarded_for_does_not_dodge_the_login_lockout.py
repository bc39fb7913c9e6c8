"""On the server as ``make run`` starts it (gunicorn with the worker class ``scripts/run.sh`` names),
with ``TRUSTED_PROXY_COUNT`` unset, a client that names a new ``X-Forwarded-For`` on every try is
still one address: after more wrong passwords than the lockout allows, the right one gets no token.

The client connects from 127.0.0.1, the address uvicorn trusts proxy headers from by default; a
server that believed the header would see nine different clients and hand out the token.

The server runs on a database of its own: a copy of the suite's migrated SQLite template, or, when
the suite runs on PostgreSQL, a scratch PostgreSQL database (with the suite's Redis)."""

import json

import pytest
import requests
from django.conf import settings
from django.db import connections

from tests.worker_stack import WorkerStack

pytestmark = pytest.mark.slow
HANG_S = 300  # seconds: a ceiling that only catches a hang
FAILURE_LIMIT = 5
WRONG_TRIES = 8
SETUP = """
from django.contrib.auth.models import User
User.objects.create_user(username="rita", password="the-right-password-1")
"""


def _server_settings(request) -> tuple[dict, object]:
    """``(environment, drop)``: nothing on SQLite (the stack's copy of the template); on PostgreSQL a
    scratch database and the suite's Redis, and the function that drops the database."""
    db = connections["default"].settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return {}, None
    import psycopg

    name = f"{db['NAME']}_proxy"[:63]
    params = {k: v for k, v in {"host": db["HOST"] or None, "port": db["PORT"] or None, "user": db["USER"],
                                "password": db["PASSWORD"] or None, "dbname": "postgres"}.items() if v}
    with psycopg.connect(**params, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    auth = f"{db['USER']}:{db['PASSWORD']}@" if db["PASSWORD"] else f"{db['USER']}@"

    def drop():
        with psycopg.connect(**params, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return {"DATABASE_URL": f"postgres://{auth}{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{name}",
            "REDIS_URL": settings.REDIS_URL}, drop


def _try(base: str, password: str, forwarded_for: str) -> requests.Response:
    return requests.post(f"{base}/api/v1/auth/token", json={"username": "rita", "password": password}, timeout=HANG_S,
                         headers={"X-Forwarded-For": forwarded_for})


def test_a_new_forwarded_for_on_every_try_still_meets_the_lockout(tmp_path, stack_template, request):
    env, drop = _server_settings(request)
    stack = WorkerStack(tmp_path / "stack", stack_template, LOGIN_FAILURE_LIMIT=str(FAILURE_LIMIT),
                        API_RATE_AUTH="1000/hour", **env)
    stack.env.pop("TRUSTED_PROXY_COUNT", None)
    stack.env.pop("FORWARDED_ALLOW_IPS", None)
    try:
        if drop is not None:
            stack.python("from django.core.management import call_command\ncall_command('migrate', verbosity=0)", timeout=HANG_S)
        stack.python(SETUP)
        base = stack.gunicorn(timeout=HANG_S)

        wrong = [_try(base, f"guess-{i}", f"203.0.113.{i + 1}").status_code for i in range(WRONG_TRIES)]
        right = _try(base, "the-right-password-1", "198.51.100.77")

        assert wrong[:FAILURE_LIMIT - 1] == [401] * (FAILURE_LIMIT - 1), wrong
        assert right.status_code == 429, right.text[:300]
        body = right.json()
        assert body["code"] == "throttled" and "Too many failed log-ins" in body["detail"] and "token" not in json.dumps(body)
    finally:
        stack.stop()
        if drop is not None:
            drop()
