"""RQ jobs carry the request id of the request that queued them, and each job leaves one JSON log
line and its metrics.

- ``RequestQueue`` (``settings.RQ["QUEUE_CLASS"]``) writes the current request id into a new job's
  ``meta["request_id"]``, so the job's log lines share the id of the page that queued it.
- ``ObservedWorker`` (the base of ``leaderboard.worker.ReapingWorker``) binds that id while the job
  runs, and when it ends logs ``{"event": "job", "request_id", "job_id", "queue", "function",
  "status", "duration_ms"}`` and records ``dynabench_rq_job_duration_seconds``. It does this in the
  worker's own process, around the work horse: a forked horse writes no metric file of its own.
"""

from __future__ import annotations

import time

from django_rq.queues import DjangoRQ
from rq.worker import Worker

from dynabench import metrics, request_ids


class RequestQueue(DjangoRQ):
    """django-rq's queue, which puts the current request id in the meta of each job it creates."""

    def create_job(self, *args, **kwargs):
        """RQ's ``create_job``, with ``meta["request_id"]`` set when a request or job is running."""
        request_id = request_ids.current()
        if request_id:
            kwargs["meta"] = {"request_id": request_id, **(kwargs.get("meta") or {})}
        return super().create_job(*args, **kwargs)


class ObservedWorker(Worker):
    """RQ's forking worker that binds each job's request id and reports each job (module docstring)."""

    def execute_job(self, job, queue):
        """RQ's ``execute_job`` (fork a horse, wait for it), inside the job's request id, then its line and metrics."""
        carried = (job.meta or {}).get("request_id")
        token = request_ids.bind(carried if request_ids.well_formed(carried) else request_ids.new_id())
        started = time.perf_counter()
        try:
            return super().execute_job(job, queue)
        finally:
            self._report(job, queue, time.perf_counter() - started)
            request_ids.unbind(token)

    def _report(self, job, queue, seconds: float) -> None:
        try:
            status = job.get_status(refresh=True)
            status = getattr(status, "value", status) or "unknown"
        except Exception:  # noqa: BLE001 - the job's hash expired or Redis is out: report what is known
            status = "unknown"
        try:
            function = job.func_name if isinstance(job.func_name, str) else "unknown"
        except Exception:  # noqa: BLE001 - a job whose data cannot be read still gets its line
            function = "unknown"
        if metrics.enabled():
            metrics.record_job(queue=queue.name, function=function, status=status, seconds=seconds,
                               finished_at=time.time() if status == "finished" else None)
        request_ids.event("job", job_id=job.id, queue=queue.name, function=function, status=status,
                          duration_ms=round(seconds * 1000, 2))
