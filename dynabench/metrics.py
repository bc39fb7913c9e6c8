"""The platform's Prometheus metrics: the metric objects, the small functions that record into them,
and the scrape-time sources the apps register.

Every web process and RQ worker records into its own files under ``PROMETHEUS_MULTIPROC_DIR``
(prometheus-client's multiprocess mode: ``scripts/run.sh`` sets it to ``var/metrics`` and empties
it at start), and ``/metrics`` (``dynabench/metrics_view.py``) adds them up across processes.
Without that variable each process reports its own (tests, ``runserver``).

Two kinds of figure:

- **recorded** where the event happens, by the functions below: requests (the middleware in
  ``dynabench/request_observer.py``), jobs (``dynabench/job_observer.py``, in the worker's
  parent process, never in the forked work horse), calls to models (the gate, ``record_model_call``),
  streams open, the database pool of each web process;
- **read at scrape** from Redis and the database by the sources the apps register with
  ``register_source`` (queue depth and age, workers, a campaign's tallies, budgets, breakers):
  the running tallies stay the one source of truth, and the hot paths pay nothing for them.

Labels stay bounded: routes by URL name, jobs by function, tasks by code and rounds by number,
models by id (only models that were called or sit in the loop of an open round), never a raw
path, a user or an address. ``DYNABENCH_METRICS=0`` turns the recording and ``/metrics`` off.
"""

from __future__ import annotations

import glob
import logging
import os
import re
from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics, generate_latest
from prometheus_client import multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import REGISTRY

logger = logging.getLogger(__name__)

# No ``*_created`` series: a third of the output, which no rule or panel reads.
disable_created_metrics()

#: Where the processes write their values (prometheus-client reads the same variable as it loads).
MULTIPROC_DIR = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")

#: Seconds: up to a minute for pages, beyond for the waits on models and long jobs.
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
MODEL_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
JOB_BUCKETS = (0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 1800.0, 3600.0)

REQUEST_SECONDS = Histogram(
    "dynabench_http_request_duration_seconds",
    "Time from a request's arrival to its response's headers, by URL name, method and status "
    "(its _count is the request count).",
    ["route", "method", "status"], buckets=REQUEST_BUCKETS,
)
STREAMS_OPEN = Gauge(
    "dynabench_http_streams_open", "Streamed responses (server-sent events: chat turns) being sent now, by URL name.",
    ["route"], multiprocess_mode="livesum",
)
MODEL_CALLS = Counter(
    "dynabench_model_calls_total", "Calls to models through the gate, by model id, purpose and how they ended.",
    ["model", "purpose", "status"],
)
MODEL_CALL_SECONDS = Histogram(
    "dynabench_model_call_duration_seconds", "Time of a call to a model through the gate, by model id and purpose.",
    ["model", "purpose"], buckets=MODEL_BUCKETS,
)
MODEL_TOKENS = Counter(
    "dynabench_model_tokens_total", "Tokens the models reported, by model id, purpose and kind (prompt, completion).",
    ["model", "purpose", "kind"],
)
JOB_SECONDS = Histogram(
    "dynabench_rq_job_duration_seconds", "Time of an RQ job from the fork of its work horse to its end, by queue, "
    "function and final status (its _count is the job count).",
    ["queue", "function", "status"], buckets=JOB_BUCKETS,
)
JOB_LAST_SUCCESS = Gauge(
    "dynabench_rq_job_last_success_timestamp_seconds", "When a job of this function last finished without error "
    "(Unix time), e.g. the reaper's passes (function leaderboard.reaper.reap).",
    ["function"], multiprocess_mode="max",
)
DB_POOL = Gauge(
    "dynabench_db_pool_connections", "PostgreSQL connections of the web processes' pools: in_use, idle and max "
    "(the pools' capacity), summed over live processes, sampled every few seconds.",
    ["state"], multiprocess_mode="livesum",
)
DB_POOL_WAITING = Gauge(
    "dynabench_db_pool_waiting_requests", "Requests waiting for a pooled connection now, summed over live web processes.",
    multiprocess_mode="livesum",
)


def enabled() -> bool:
    """Whether metrics are recorded and served (``settings.DYNABENCH_METRICS``, on by default)."""
    from django.conf import settings

    return bool(getattr(settings, "DYNABENCH_METRICS", True))


def record_request(*, route: str, method: str, status: int, seconds: float) -> None:
    """Count one request and its time to the response's headers."""
    REQUEST_SECONDS.labels(route, method, str(status)).observe(seconds)


def record_model_call(model_id, purpose: str, status: str, seconds: float | None = None,
                      prompt_tokens: int | None = None, completion_tokens: int | None = None) -> None:
    """Count one call to a model through the gate: ``model_id`` (the ``MLModel``'s id), ``purpose``
    (the gate's purpose), ``status`` (the ``ModelCall`` status: ``ok``, ``failed``, ``refused_*``),
    its ``seconds`` when it was sent, and the tokens the model reported. Never raises."""
    try:
        model = str(model_id)
        MODEL_CALLS.labels(model, purpose, status).inc()
        if seconds is not None:
            MODEL_CALL_SECONDS.labels(model, purpose).observe(seconds)
        if prompt_tokens:
            MODEL_TOKENS.labels(model, purpose, "prompt").inc(prompt_tokens)
        if completion_tokens:
            MODEL_TOKENS.labels(model, purpose, "completion").inc(completion_tokens)
    except Exception:  # noqa: BLE001 - a metric must never fail a call
        logger.exception("could not record a model call")


def record_job(*, queue: str, function: str, status: str, seconds: float, finished_at: float | None) -> None:
    """Count one RQ job that ended with ``status`` after ``seconds``; ``finished_at`` (Unix time) when it succeeded."""
    JOB_SECONDS.labels(queue, function, status).observe(seconds)
    if finished_at is not None:
        JOB_LAST_SUCCESS.labels(function).set(finished_at)


def record_pool(*, in_use: int, idle: int, max_size: int, waiting: int) -> None:
    """This process's database pool as last sampled."""
    DB_POOL.labels("in_use").set(in_use)
    DB_POOL.labels("idle").set(idle)
    DB_POOL.labels("max").set(max_size)
    DB_POOL_WAITING.set(waiting)


# Scrape-time sources: name -> a function returning metric families (prometheus_client.core.*MetricFamily).
_sources: dict[str, Callable[[], Iterable]] = {}


def register_source(name: str, source: Callable[[], Iterable]) -> None:
    """Have ``/metrics`` call ``source()`` at each scrape for figures read from Redis or the database
    (an app registers its own in its ``AppConfig.ready``). A source that raises is reported as
    ``dynabench_source_up{source=name} 0`` and left out of that scrape; the others are served."""
    _sources[name] = source


class _Sources:
    """The registered sources as one prometheus-client collector, with an up gauge per source."""

    def collect(self):
        up = GaugeMetricFamily("dynabench_source_up", "1 when the scrape-time source answered this scrape, else 0.",
                               labels=["source"])
        for name, source in sorted(_sources.items()):
            try:
                families = list(source())
            except Exception:  # noqa: BLE001 - Redis or the database out: the rest of the scrape still answers
                logger.exception("metrics source %s failed", name)
                up.add_metric([name], 0)
                continue
            up.add_metric([name], 1)
            yield from families
        yield up


class _ThisProcess:
    """prometheus-client's default registry (this process's own values), when not in multiprocess mode."""

    def collect(self):
        return REGISTRY.collect()


_LIVE_FILE = re.compile(r"gauge_live\w+?_(\d+)\.db$")


def _forget_dead_processes(path: str) -> None:
    """Remove the live gauges' files of processes that are gone (killed ones included), so that
    ``livesum`` gauges count live processes only."""
    for name in glob.glob(os.path.join(path, "gauge_live*.db")):
        found = _LIVE_FILE.search(name)
        if not found:
            continue
        pid = int(found.group(1))
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            multiprocess.mark_process_dead(pid, path)
        except PermissionError:
            pass


def exposition() -> tuple[bytes, str]:
    """The whole platform's metrics in the Prometheus text format, and its content type: every
    process's recorded values (multiprocess mode) or this process's, plus the scrape-time sources."""
    registry = CollectorRegistry()
    if MULTIPROC_DIR:
        _forget_dead_processes(MULTIPROC_DIR)
        multiprocess.MultiProcessCollector(registry, path=MULTIPROC_DIR)
    else:
        registry.register(_ThisProcess())
    registry.register(_Sources())
    return generate_latest(registry), CONTENT_TYPE_LATEST
