"""Settings of the test suite (pytest.ini's ``DJANGO_SETTINGS_MODULE``): the platform's own
``dynabench.settings``, read after each pytest process has been given state of its own.

The suite runs in parallel under pytest-xdist (``make test``: ``-n``), one process per worker
(``gw0``, ``gw1``, ...; ``PYTEST_XDIST_WORKER``), and serially under plain ``pytest``. Before the
platform's settings are read, each of those processes gets, through the environment variables
the settings read (README.md, "Configuration"):

- its own scratch folder ``$TMPDIR/dynabench-tests-<worker>-*``, removed when the process exits:
  ``DYNABENCH_VAR_DIR`` (so its own embedded Redis on its own unix socket when ``REDIS_URL`` is
  unset, its own secret key and static files), ``MEDIA_ROOT``, ``DYNABENCH_MODELS_DIR`` and
  ``DYNABENCH_ARTEFACT_CACHE``; the checkout's ``var/`` is never touched;
- with ``REDIS_URL`` set, its own Redis database: worker ``gwN`` uses the URL's database number
  plus N (``redis://127.0.0.1:6379/11`` -> gw0 on 11, gw1 on 12). A database, not a key prefix:
  ``cache.clear()`` (Django's Redis cache) empties the whole database and RQ's keys carry no
  prefix, so two workers sharing one database would empty each other's queues. Redis has 16
  databases (0-15) by default; a worker whose number would pass 15 stops with a message;
- its own test database: pytest-django suffixes the PostgreSQL test database per worker
  (``test_<name>_gw0``, ...), and SQLite's test database is in memory, per process: the run's
  first process to need one migrates it and leaves a copy in the run's shared folder
  (``DYNABENCH_TEST_RUN_DIR``), which the others load instead of migrating again
  (``tests/sqlite3/base.py``).

Child processes a test starts (``manage.py`` commands, servers) inherit this environment and
keep their parent's state, unless the test gives them a ``DYNABENCH_VAR_DIR`` of their own.
Live servers bind port 0 (pytest-django's ``live_server``; the tests' own servers do too).
"""

import atexit
import os
import re
import shutil
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, urlsplit, urlunsplit

REDIS_DATABASES = 16
"""Databases a Redis server has by default (``databases 16`` in redis.conf)."""

_OWNER = "DYNABENCH_TEST_STATE_OWNER"
"""Set to the worker name of the process that made the scratch folder; inherited by its children."""

_RUN_DIR = "DYNABENCH_TEST_RUN_DIR"
"""Set to the scratch folder of a run's first pytest process (the pytest-xdist controller, or the one
process of a serial run) and inherited by the workers it starts: what the processes of one run
share, the migrated test database (``tests/sqlite3/base.py``)."""


def worker_redis_url(url: str, index: int) -> str:
    """``url`` with its database number (path ``/N`` or query ``db=N``, default 0) raised by ``index``.

    Raises ``RuntimeError`` when the result would pass Redis's last default database (15)."""
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    if "db" in query:
        base = int(query["db"][0])
    else:
        base = int(parts.path.strip("/") or 0)
    number = base + index
    if number >= REDIS_DATABASES:
        raise RuntimeError(
            f"pytest-xdist worker {index} would use Redis database {number} of {url} (base {base} + worker {index}), "
            f"past the {REDIS_DATABASES} a Redis server has: run fewer workers (make test TEST_WORKERS=N) "
            f"or point REDIS_URL at a lower database number"
        )
    if "db" in query:  # unix:///path?db=N: keep the URL as written (urlunsplit would drop its "//")
        return re.sub(r"([?&]db=)\d+", rf"\g<1>{number}", url, count=1)
    return urlunsplit(parts._replace(path=f"/{number}"))


def _give_this_process_its_own_state() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER") or "main"
    if os.environ.get(_OWNER) == worker:
        return  # a child process of a test: it shares its parent's state
    index = int(worker[2:]) if worker.startswith("gw") else 0
    scratch = Path(tempfile.mkdtemp(prefix=f"dynabench-tests-{worker}-"))
    os.environ.update({
        _OWNER: worker,
        "DYNABENCH_VAR_DIR": str(scratch / "var"),
        "MEDIA_ROOT": str(scratch / "media"),
        "DYNABENCH_MODELS_DIR": str(scratch / "models"),
        "DYNABENCH_ARTEFACT_CACHE": str(scratch / "artefact-cache"),
    })
    os.environ.setdefault(_RUN_DIR, str(scratch))
    if os.environ.get("REDIS_URL"):
        os.environ["DYNABENCH_TEST_REDIS_BASE_URL"] = os.environ["REDIS_URL"]  # as given, before the worker's offset
        os.environ["REDIS_URL"] = worker_redis_url(os.environ["REDIS_URL"], index)

    def clean_up():
        import time

        from dynabench import embedded_redis

        embedded_redis.stop(scratch / "var" / "redis.sock")  # a no-op when REDIS_URL was set
        # The Redis server may still write its last log line and remove its pid file just after
        # it closed the connection: retry until the folder is gone (a few seconds at most).
        for _ in range(50):
            shutil.rmtree(scratch, ignore_errors=True)
            if not scratch.exists():
                break
            time.sleep(0.1)

    atexit.register(clean_up)


_give_this_process_its_own_state()
# No embedding job after each example (their workers would load MiniLM); the diversity tests embed directly.
os.environ.setdefault("DYNABENCH_EMBED_ON_ARRIVAL", "0")
# Nor a diversity report as a round's validated examples grow; its test turns it on.
os.environ.setdefault("DYNABENCH_DIVERSITY_REFRESH", "0")

from dynabench.settings import *  # noqa: E402,F401,F403

if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":  # noqa: F405
    DATABASES["default"]["ENGINE"] = "tests.postgresql"  # noqa: F405  (Django's, with a flush that deletes rows: see tests/postgresql/base.py)
elif DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    # Django's, with the test database copied to a file once migrated, for the worker stacks (see
    # tests/sqlite3/base.py). In memory as by default: ":memory:" is said aloud, or pytest-django
    # would give an engine other than Django's own a per-worker file name.
    DATABASES["default"]["ENGINE"] = "tests.sqlite3"  # noqa: F405
    DATABASES["default"]["TEST"] = {  # noqa: F405
        **DATABASES["default"].get("TEST", {}), "NAME": ":memory:",  # noqa: F405
        "MIGRATED_COPY": os.path.join(os.environ[_RUN_DIR], "migrated-test-db.sqlite3"),
    }
