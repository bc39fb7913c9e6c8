"""The RQ worker class of the platform: RQ's forking worker that makes sure the reaper runs.

Set as ``RQ["WORKER_CLASS"]`` in the settings, so ``manage.py rqworker`` uses it; run it with
``--with-scheduler`` so that the repeating reaper job (``leaderboard/reaper.py``) is scheduled.
"""

from __future__ import annotations

import importlib
import logging

from django.conf import settings
from rq.worker import Worker

logger = logging.getLogger(__name__)


class ReapingWorker(Worker):
    """An ``rq.Worker`` that, when it starts working, creates the repeating reaper job if it is missing
    (``leaderboard.reaper.ensure_reaper``): a worker restarted after a crash reaps at once.

    It also queues one pass of the reaper at once (a worker restarted after a crash recovers
    what the dead one left without waiting for the period), runs RQ's maintenance (which reports
    jobs of dead workers as abandoned to their failure callbacks, and takes over the scheduler
    of a dead worker) every minute instead of every ten, and imports the model registry (torch,
    transformers, ``settings.RQ_WORKER_PRELOAD``) and prepares it (``tasks.loop.registry.prepare_to_fork``)
    once, before it forks a work horse per job, so that each evaluation job starts without doing
    either again.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("maintenance_interval", 60)
        super().__init__(*args, **kwargs)

    def work(self, *args, **kwargs):
        import tasks.loop.registry  # noqa: F401 - preloaded for every forked work horse

        # torch and the transformers modules a job uses (``settings.RQ_WORKER_PRELOAD``): the
        # registry imports torch only when it first loads a model, and ``import transformers``
        # alone loads nothing, so without this each horse imported them again (~25 s wall per
        # job on 2 loaded cores). Importing starts no thread pool, so the fork stays safe.
        for name in getattr(settings, "RQ_WORKER_PRELOAD", ()):
            importlib.import_module(name)
        tasks.loop.registry.prepare_to_fork()

        try:
            from leaderboard.reaper import ensure_reaper, reap_once

            ensure_reaper(self.connection)
            reap_once()
        except Exception:  # noqa: BLE001 - a worker must start even when the reaper cannot be scheduled
            logger.exception("could not schedule the reaper")
        return super().work(*args, **kwargs)
