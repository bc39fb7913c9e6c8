"""The RQ worker class of the platform: RQ's forking worker that makes sure the reaper runs.

Set as ``RQ["WORKER_CLASS"]`` in the settings, so ``manage.py rqworker`` uses it; run it with
``--with-scheduler`` so that the repeating reaper job (``leaderboard/reaper.py``) is scheduled.
"""

from __future__ import annotations

import importlib
import logging
import os
import signal

import redis.exceptions
from django.conf import settings
from rq import worker_registration
from rq.defaults import DEFAULT_WORKER_TTL
from dynabench import job_stop
from dynabench.job_observer import ObservedWorker

logger = logging.getLogger(__name__)


def release_database() -> None:
    """Close this process's database connections, and on PostgreSQL its connection pool (whose
    threads a fork does not copy), so that a work horse forked afterwards opens its own."""
    from django.db import connections

    for connection in connections.all(initialized_only=True):
        connection.close()
        if connection.alias in getattr(type(connection), "_connection_pools", {}):
            connection.close_pool()


class WorkHorseKilled(Exception):
    """The process running a job (RQ's work horse) ended without finishing it: killed (SIGKILL, the
    kernel's out-of-memory killer) or crashed. Passed to the job's failure callback as its error."""


class ReapingWorker(ObservedWorker):
    """An ``rq.Worker`` (``dynabench.job_observer.ObservedWorker``: each job's request id, JSON log line and
    metrics) that, when it starts working, creates the repeating reaper job if it is missing
    (``leaderboard.reaper.ensure_reaper``): a worker restarted after a crash reaps at once.

    It also queues one pass of the reaper at once (a worker restarted after a crash recovers
    what the dead one left without waiting for the period), runs RQ's maintenance (which reports
    jobs of dead workers as abandoned to their failure callbacks, and takes over the scheduler
    of a dead worker) every minute instead of every ten, and imports the model registry (torch,
    transformers, ``settings.RQ_WORKER_PRELOAD``) and prepares it (``tasks.loop.registry.prepare_to_fork``)
    once, before it forks a work horse per job, so that each evaluation job starts without doing
    either again. A worker that listens only to ``default`` (short jobs: notifications, leaderboard
    rebuilds, the reaper) imports none of them: it starts at once and holds no torch.

    A warm stop (the first SIGTERM or Ctrl-C) also asks the running job to give way
    (``dynabench.job_stop``): the horse gets ``job_stop.STOP_SIGNAL``, and a training queues itself
    again between two batches and ends, so the worker stops within a step instead of after the job.

    A work horse killed mid-job (SIGKILL, out of memory) never runs the job's failure callback, and
    RQ only marks the job failed: the worker runs the callback itself (``handle_work_horse_killed``),
    so the run, shard, training or unpacking is recovered at once, through the same code the reaper
    uses, instead of after the stale limit.

    A Redis that restarted empty (or was flushed) forgets every worker and the reaper's job. On each
    heartbeat (every ``settings.RQ_WORKER_TTL`` - 15 s while idle, every 30 s during a job) the worker
    registers itself again when its registration is gone, and makes sure the reaper job exists, so
    ``/healthz`` counts it and the reaper runs again without restarting anything.
    """

    #: Queues of short jobs that load no model: a worker that takes only these skips ``settings.RQ_WORKER_PRELOAD``.
    SHORT_QUEUES = ("default",)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("maintenance_interval", 60)
        # ``manage.py rqworker`` passes RQ's default TTL unless told otherwise: then the setting decides.
        if kwargs.get("worker_ttl") in (None, DEFAULT_WORKER_TTL):
            kwargs["worker_ttl"] = int(getattr(settings, "RQ_WORKER_TTL", DEFAULT_WORKER_TTL))
        super().__init__(*args, **kwargs)

    def work(self, *args, **kwargs):
        if any(name not in self.SHORT_QUEUES for name in self.queue_names()):
            self._preload()
        try:
            from leaderboard.reaper import ensure_reaper, reap_once

            ensure_reaper(self.connection)
            reap_once()
        except Exception:  # noqa: BLE001 - a worker must start even when the reaper cannot be scheduled
            logger.exception("could not schedule the reaper")
        return super().work(*args, **kwargs)

    def heartbeat(self, timeout=None, pipeline=None):
        """RQ's heartbeat, after ``keep_registered`` (skipped inside a pipeline: ``maintain_heartbeats`` calls it)."""
        if pipeline is None:
            self.keep_registered()
        return super().heartbeat(timeout, pipeline)

    def maintain_heartbeats(self, job):
        """RQ's heartbeat during a job, after ``keep_registered``."""
        self.keep_registered()
        return super().maintain_heartbeats(job)

    def keep_registered(self) -> bool:
        """Register this worker again if Redis lost its registration (restarted empty, flushed), and make
        sure the reaper job exists; return whether the worker had to register again. A Redis that cannot
        be reached raises, as RQ's own heartbeat does (the worker's loop waits and tries again)."""
        if self._is_horse or self.birth_date is None:  # the horse beats nothing; before register_birth, nothing to keep
            return False
        registered = self.connection.sismember(self.redis_workers_keys, self.key)
        if not registered:
            with self.connection.pipeline() as pipeline:
                pipeline.hset(self.key, mapping={**self.serialize(), "state": self.get_state()})
                worker_registration.register(self, pipeline)
                pipeline.expire(self.key, self.worker_ttl + 60)
                pipeline.execute()
            logger.warning("Redis had lost this worker's registration (restarted or emptied): registered again as %s", self.name)
        try:
            from leaderboard.reaper import ensure_reaper

            if ensure_reaper(self.connection):
                logger.warning("the reaper job was missing (Redis restarted or emptied): scheduled again")
        except Exception:  # noqa: BLE001 - the heartbeat must go on; the next one tries again
            logger.exception("could not make sure the reaper is scheduled")
        return not registered

    def unsubscribe(self):
        """Stop listening on this worker's command channel (RQ's ``unsubscribe``), without RQ's wait of up
        to a minute at a stop.

        RQ sends UNSUBSCRIBE and then stops the listening thread, which since redis-py 8 waits for the
        thread to end; but that thread may read the UNSUBSCRIBE reply before its stop flag is cleared, and
        then sits in its next read for RQ's ``sleep_time`` (60 s): a warm stop took a minute and
        ``scripts/run.sh`` shut the worker down cold. Here the flag is cleared first, so the reply
        itself ends the thread. When a message reaches the thread between the two, the thread ends first and
closes the connection, which unsubscribes it: the UNSUBSCRIBE that then fails on the closed socket is
not an error."""
        thread = self.pubsub_thread
        if not thread:
            return
        self.log.info("Worker %s: unsubscribing from channel %s", self.name, self.pubsub_channel_name)
        thread.stop(timeout=0)  # clears the flag only: the reply to UNSUBSCRIBE below wakes the reader, which ends
        try:
            self.pubsub.unsubscribe()
        except redis.exceptions.ConnectionError:
            # a command reached the thread first: it saw the flag and closed the connection under UNSUBSCRIBE,
            # and a closed connection is subscribed to nothing
            pass
        thread.join(timeout=5)
        self.pubsub.close()

    def handle_work_horse_killed(self, job, retpid, ret_val, rusage):
        """Run ``job``'s failure callback (``leaderboard.reaper.on_job_failure``,
        ``tasks.loop.recovery.on_training_job_failure``) with ``WorkHorseKilled``, in this process:
        the horse that would have run it is dead. Never raises; the database connections it opened
        are closed, so that no later work horse inherits them."""
        super().handle_work_horse_killed(job, retpid, ret_val, rusage)
        if not job.failure_callback:
            return
        if ret_val is not None and os.WIFSIGNALED(ret_val):
            number = os.WTERMSIG(ret_val)
            how = f"killed by {signal.Signals(number).name if number in signal.valid_signals() else f'signal {number}'}"
        else:
            how = f"ended with status {os.waitstatus_to_exitcode(ret_val) if ret_val is not None else 'unknown'}"
        error = WorkHorseKilled(f"the process running it (pid {retpid}) was {how}, e.g. out of memory")
        try:
            job.execute_failure_callback(self.death_penalty_class, WorkHorseKilled, error, None)
        except Exception:  # noqa: BLE001 - the worker goes on; the reaper recovers the job after the stale limit
            logger.exception("could not recover job %s after its work horse was killed", job.id)
        finally:
            release_database()

    def _preload(self) -> None:
        import tasks.loop.registry  # noqa: F401 - preloaded for every forked work horse

        # torch and the transformers modules a job uses (``settings.RQ_WORKER_PRELOAD``): the
        # registry imports torch only when it first loads a model, and ``import transformers``
        # alone loads nothing, so without this each horse imported them again (~25 s wall per
        # job on 2 loaded cores). Importing starts no thread pool, so the fork stays safe.
        for name in getattr(settings, "RQ_WORKER_PRELOAD", ()):
            importlib.import_module(name)
        tasks.loop.registry.prepare_to_fork()

    def _install_signal_handlers(self):
        super()._install_signal_handlers()
        job_stop.install()  # inherited by every horse forked from now on

    def fork_work_horse(self, job, queue):
        """RQ's fork, after ``release_database``: the worker itself may have used the database
        (``handle_work_horse_killed``), and a horse must not share its connections or pool."""
        release_database()
        return super().fork_work_horse(job, queue)

    def main_work_horse(self, job, queue):
        if self._stop_requested:  # the stop came between the dequeue and the fork: nobody will signal this horse
            job_stop.request()
        return super().main_work_horse(job, queue)

    def handle_warm_shutdown_request(self):
        """RQ's warm stop, and the running job (if any) asked to give way (``dynabench.job_stop``)."""
        super().handle_warm_shutdown_request()
        if self.horse_pid:
            try:
                os.kill(self.horse_pid, job_stop.STOP_SIGNAL)
            except ProcessLookupError:
                logger.debug("the horse ended before it could be asked to stop")
