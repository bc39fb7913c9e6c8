"""The platform's RQ worker imports ``settings.RQ_WORKER_PRELOAD`` once, in the parent, before any job:
a forked work horse then finds torch and transformers already imported."""

import sys

import django_rq
from rq import Queue

from leaderboard.worker import ReapingWorker


def test_it_imports_the_configured_modules_before_working(db, settings):
    settings.RQ_WORKER_PRELOAD = ("wave", "colorsys")
    for name in settings.RQ_WORKER_PRELOAD:
        sys.modules.pop(name, None)
    queue = Queue("preload-test", connection=django_rq.get_connection("default"))  # empty: no job runs
    worker = ReapingWorker([queue], connection=queue.connection, name="preload-test")

    worker.work(burst=True)

    assert {"wave", "colorsys"} <= set(sys.modules)


def test_torch_transformers_and_the_metrics_are_preloaded_by_default(settings):
    assert settings.RQ_WORKER_PRELOAD[0] == "torch" and "transformers.modeling_utils" in settings.RQ_WORKER_PRELOAD
    assert "sklearn.metrics" in settings.RQ_WORKER_PRELOAD  # about 1 s per job otherwise


def test_it_builds_the_checkpoint_conversion_table_before_forking(db, settings):
    import transformers.conversion_mapping as conversions

    settings.RQ_WORKER_PRELOAD = ()
    conversions._checkpoint_conversion_mapping_cache = None
    queue = Queue("preload-test", connection=django_rq.get_connection("default"))
    worker = ReapingWorker([queue], connection=queue.connection, name="preload-table-test")

    worker.work(burst=True)

    assert conversions._checkpoint_conversion_mapping_cache  # built once here, inherited by every horse
