"""Each pytest process (each pytest-xdist worker, ``make test``) runs on state of its own
(``tests/settings.py``): a scratch folder outside the checkout for var/, media, models and the
artefact cache; its own Redis database (base + worker number) on a Redis server, or its own
embedded Redis; and its own test database."""

import os
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from tests.settings import worker_redis_url

WORKER = os.environ.get("PYTEST_XDIST_WORKER") or "main"


def test_var_media_and_models_are_in_a_scratch_folder_of_this_process():
    scratch = Path(settings.VAR_DIR).parent
    assert scratch.name.startswith(f"dynabench-tests-{WORKER}-")
    assert not scratch.is_relative_to(settings.BASE_DIR)
    for path in (settings.MEDIA_ROOT, settings.MODELS_DIR, settings.ARTEFACT_CACHE_DIR):
        assert Path(path).is_relative_to(scratch)


def test_redis_is_this_process_own():
    if settings.EMBEDDED_REDIS:
        assert Path(settings.EMBEDDED_REDIS_SOCKET).is_relative_to(settings.VAR_DIR)
    else:
        index = int(WORKER[2:]) if WORKER.startswith("gw") else 0
        given = os.environ["DYNABENCH_TEST_REDIS_BASE_URL"]  # REDIS_URL as the suite was started with
        assert settings.REDIS_URL == worker_redis_url(given, index) == os.environ["REDIS_URL"]
        assert settings.CACHES["default"]["LOCATION"] == settings.REDIS_URL
        assert all(queue["URL"] == settings.REDIS_URL for queue in settings.RQ_QUEUES.values())


@pytest.mark.django_db
def test_the_test_database_is_this_process_own():
    name = connection.settings_dict["NAME"]
    if connection.vendor == "postgresql" and WORKER != "main":
        assert name.endswith(f"_{WORKER}")
    elif connection.vendor == "sqlite":
        assert connection.is_in_memory_db()


def test_worker_database_numbers_count_up_from_the_url_and_stay_within_redis():
    assert worker_redis_url("redis://127.0.0.1:6379/11", 0) == "redis://127.0.0.1:6379/11"
    assert worker_redis_url("redis://127.0.0.1:6379/11", 3) == "redis://127.0.0.1:6379/14"
    assert worker_redis_url("redis://127.0.0.1:6379", 1) == "redis://127.0.0.1:6379/1"
    assert worker_redis_url("unix:///tmp/r.sock?db=2", 1) == "unix:///tmp/r.sock?db=3"
    with pytest.raises(RuntimeError, match="past the 16 a Redis server has"):
        worker_redis_url("redis://127.0.0.1:6379/14", 2)
