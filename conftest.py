"""Fixtures shared by every app's tests: people in each role, the default tasks, tiny models,
a tiny base encoder for training (its sha256 pinned) and a scratch models directory; and the
order the suite runs in (the slow tests first, see ``pytest_collection_modifyitems``).

Each pytest process (each pytest-xdist worker) has its own state: see ``tests/settings.py``."""

from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User

from tasks.loop.training.base_encoder import WEIGHTS_FILE, BaseEncoder, file_sha256


def pytest_sessionstart(session):
    """On a Redis server (``REDIS_URL``), start from an empty database: this process's own
    (``tests/settings.py`` gives each xdist worker its own number), so that no job or cache
    entry left by an earlier run is met. The embedded Redis of a run is new and empty anyway."""
    from django.conf import settings

    if session.config.pluginmanager.has_plugin("dsession"):
        return  # the pytest-xdist controller runs no test: each worker empties its own database
    if not settings.EMBEDDED_REDIS:
        import redis

        redis.Redis.from_url(settings.REDIS_URL).flushdb()


def pytest_collection_modifyitems(session, config, items):
    """Run the tests marked ``slow`` (each a minute or more of real processes) first, then the tests
    that use Chromium, keeping the order within each module: with ``make test``'s ``--maxschedchunk 1`` pytest-xdist hands them
    out one at a time, so they spread over the workers and run beside the many short tests,
    instead of ending the run with one worker busy on the last of them and the others idle."""
    # Stable: a module stays in order. The browser tests come next, one after the other, so that
    # each process runs them in a row on one Chromium (tests/browser_support.py: _SharedChromium).
    from tests.browser_support import uses_chromium

    items.sort(key=lambda item: (item.get_closest_marker("slow") is None, not uses_chromium(item)))


#: The garbage collector's thresholds in a pytest process (Python's default: 700, 10, 10). A test
#: process allocates fast and holds a heap of a million objects and more (torch, transformers,
#: Django, the loaded models): with the default, the three workers of ``make test`` spent 53 to 60
#: CPU-seconds in the collector, 40 to 45 of them in full collections (``gc.callbacks`` timing). A
#: young generation of 10,000 objects makes each collection rarer; with the freeze below, the
#: workers spent 25 CPU-seconds in it, 5 in full collections (leaderboard/tests alone, serially:
#: 4.1 s -> 1.7 s).
GC_THRESHOLDS = (10_000, 10, 10)


def pytest_configure(config):
    """Set ``GC_THRESHOLDS`` before collection, in the controller and in each worker."""
    import gc

    gc.set_threshold(*GC_THRESHOLDS)


def pytest_collection_finish(session):
    """Move what collection loaded (Django, the test modules, what they import: about 570,000
    objects, alive until the process ends) to the garbage collector's permanent generation
    (``gc.freeze``): each gen-2 collection during the tests, and pytest's five at the end, then
    walks only what the tests made since."""
    import gc

    gc.freeze()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Tests create many users: hash their passwords cheaply (production keeps Django's default)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _one_rate_limit_window(monkeypatch):
    """Every fixed-window counter a test counts (``dynabench.ratelimits``: 40 quiz attempts an
    hour, so many submissions a minute) reads one instant, the test's start, so the window never
    ends under a test that counts up to a limit: the scripted quiz-taker saw 78 attempts pass a
    limit of 40 when its run happened to cross 08:00. Processes a test starts keep the real clock."""
    import time
    import types

    from dynabench import ratelimits

    start = time.time()
    monkeypatch.setattr(ratelimits, "time", types.SimpleNamespace(time=lambda: start))


def _emptied_queue(name):
    import django_rq

    queue = django_rq.get_queue(name)
    queue.empty()
    yield queue
    queue.empty()


@pytest.fixture
def default_queue():
    """RQ's ``default`` queue, emptied before and after the test (the jobs a test enqueues stay its own)."""
    yield from _emptied_queue("default")


@pytest.fixture
def training_queue():
    """RQ's ``training`` queue, emptied before and after the test."""
    yield from _emptied_queue("training")


@pytest.fixture
def private_redis(tmp_path):
    """A running ``redis-server`` of this test's own (``tests/private_redis.py``), which the test may
    stop, start and empty; stopped after the test."""
    from tests.private_redis import PrivateRedis

    with PrivateRedis(tmp_path / "private-redis") as server:
        yield server


@pytest.fixture
def private_postgres():
    """A running PostgreSQL cluster of this test's own (``tests/private_postgres.py``), which the test
    may dump, restore, stop and restart; stopped and removed after the test. Skips the test where
    the PostgreSQL server binaries are not installed."""
    from tests import private_postgres as module

    if not module.available():
        pytest.skip("the PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    with module.PrivatePostgres() as server:
        yield server


@pytest.fixture
def full_disk(settings, tmp_path):
    """The default storage on a disk that fills up (``tests/full_disk.py``), over a fresh ``MEDIA_ROOT``,
    returned with no room at all: set its ``room_bytes`` to how much still fits."""
    from django.core.files.storage import storages

    settings.MEDIA_ROOT = tmp_path / "full-media"
    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "tests.full_disk.FullDiskStorage", "OPTIONS": {"location": str(settings.MEDIA_ROOT), "room_bytes": 0},
    }}
    return storages["default"]


@pytest.fixture
def cache_on_private_redis(settings, private_redis):
    """The cache (and with it the sessions, rate windows and throttles) on ``private_redis``, returned;
    back on the process's own Redis after the test, before other fixtures clear the cache."""
    before = settings.CACHES
    settings.CACHES = {"default": {**before["default"], "LOCATION": private_redis.url()}}
    yield private_redis
    settings.CACHES = before


@pytest.fixture
def one_torch_thread():
    """Torch on one intra-op thread during the test: tiny models only lose time to a second thread (a
    lot of it on a busy machine); the count before is restored after."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def private_media(settings, tmp_path):
    """This test's own ``MEDIA_ROOT`` (``tmp_path / "media"``, returned), with the cache cleared before
    and after it: stored images and uploads stay the test's, and the cache's submission-rate counters
    and image indexes, which outlive a test's database, do not leak into the next test."""
    from django.core.cache import cache

    cache.clear()
    settings.MEDIA_ROOT = tmp_path / "media"
    yield settings.MEDIA_ROOT
    cache.clear()


def _user(username, *roles, **extra):
    user = User.objects.create_user(username=username, password="pw-" + username, **extra)
    user.groups.add(*Group.objects.filter(name__in=roles))
    return user


@pytest.fixture
def annotator(db):
    return _user("annie", "annotator")


@pytest.fixture
def validator(db):
    return _user("val", "validator")


@pytest.fixture
def researcher(db):
    return _user("rita", "researcher")


@pytest.fixture
def outsider(db):
    return _user("otto")


@pytest.fixture
def admin_user(db):
    return User.objects.create_superuser(username="root", password="pw-root", email="root@example.org")


@pytest.fixture
def default_tasks(db):
    """``{code: Task}``: the four default tasks as ``tasks.data.seed.seed_default_tasks`` makes them
    (seeded once per process, copied after: ``tests/default_tasks.py``)."""
    from tests.default_tasks import default_tasks

    return default_tasks()


@pytest.fixture
def sentiment_task(default_tasks):
    return default_tasks["sentiment"]


@pytest.fixture
def nli_task(default_tasks):
    return default_tasks["nli"]


@pytest.fixture
def qa_task(default_tasks):
    return default_tasks["qa"]


@pytest.fixture
def hate_task(default_tasks):
    return default_tasks["hate-speech"]


@pytest.fixture
def owner(db, default_tasks):
    """A user who owns every default task."""
    user = _user("olga", "annotator", "validator")
    for task in default_tasks.values():
        task.owners.add(user)
    return user


@pytest.fixture(scope="session")
def tiny_classifier_dir(tmp_path_factory):
    """A tiny sentiment classifier directory (labels positive/negative/neutral)."""
    # Imported here, not at the top: torch and transformers take 3.6 s to import, which pytest-xdist's
    # controller would spend on importing this file before it starts the workers.
    from tests.tiny_models import build_tiny_classifier

    return build_tiny_classifier(tmp_path_factory.mktemp("tiny-sentiment"), ["positive", "negative", "neutral"])


@pytest.fixture(scope="session")
def tiny_nli_dir(tmp_path_factory):
    """A tiny NLI classifier directory (labels entailment/neutral/contradiction)."""
    from tests.tiny_models import build_tiny_classifier

    return build_tiny_classifier(tmp_path_factory.mktemp("tiny-nli"), ["entailment", "neutral", "contradiction"])


@pytest.fixture(scope="session")
def tiny_qa_dir(tmp_path_factory):
    """A tiny extractive QA model directory."""
    from tests.tiny_models import build_tiny_qa_model

    return build_tiny_qa_model(tmp_path_factory.mktemp("tiny-qa"))


@pytest.fixture
def tiny_encoder(tiny_classifier_dir, settings):
    """A 2-layer BERT standing in for MiniLM, used by every training entry point through the setting."""
    encoder = BaseEncoder(path=tiny_classifier_dir, sha256=file_sha256(tiny_classifier_dir / WEIGHTS_FILE), name="tiny-bert")
    settings.DYNABENCH_TRAINING_BASE_ENCODER = {"path": str(encoder.path), "sha256": encoder.sha256, "name": encoder.name}
    settings.DYNABENCH_TRAINING_THREADS = 1  # a tiny model only loses time to a second thread
    return encoder


@pytest.fixture(scope="session")
def stack_template(tmp_path_factory, django_db_setup):
    """A migrated SQLite database file that each ``tests.worker_stack.WorkerStack`` copies: on SQLite,
    the copy of the test database taken as the run migrated it, which every process of the run
    shares (``tests/sqlite3/base.py``); on PostgreSQL, or where no test of this process uses the
    database (pytest-django then creates none), one ``migrate`` in a child process, once per process."""
    from django.db import connection

    from tests.worker_stack import migrated_template

    copy = connection.settings_dict["TEST"].get("MIGRATED_COPY")
    if copy and Path(copy).exists():
        return Path(copy)
    return migrated_template(tmp_path_factory.mktemp("stack-template"))


@pytest.fixture
def models_dir(tmp_path, settings):
    settings.MODELS_DIR = tmp_path / "models"
    return settings.MODELS_DIR


from tests.browser_support import browser, page, phone_page, pytest_runtest_setup, pytest_runtest_teardown  # noqa: E402,F401  (browser fixtures for every app)
from tests.endpoint_fixtures import (  # noqa: E402,F401
    _shared_endpoint_server, _shared_transcription_server, endpoint_server, make_endpoint_model, make_transcription_endpoint,
    speech_task_with_clips, tiny_causal_lm_dir, transcription_server,
)
from tests.generative_fixtures import chat_task  # noqa: E402,F401
