"""The project's own scrape-time metric sources (registered in ``DynabenchConfig.ready``): RQ's
queues and workers from Redis, the PostgreSQL server's connections, and the free disk space of the
platform's folders. Each returns prometheus-client metric families; ``dynabench.metrics`` calls them
at every scrape of ``/metrics``."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone

from django.conf import settings
from prometheus_client.core import GaugeMetricFamily


def rq_queues():
    """Per RQ queue: jobs waiting, running and failed, and the age of the oldest waiting job;
    per queue, the workers registered to take it, and the oldest worker heartbeat's age."""
    import django_rq
    from rq import Worker
    from rq.utils import utcparse

    now = datetime.now(timezone.utc)
    jobs = GaugeMetricFamily("dynabench_rq_jobs", "RQ jobs by queue and state (queued: waiting to be taken; "
                             "started: running; failed: kept in the failed registry).", labels=["queue", "state"])
    oldest = GaugeMetricFamily("dynabench_rq_queue_oldest_job_age_seconds", "Seconds the oldest job waiting in the "
                               "queue has waited (0 when the queue is empty).", labels=["queue"])
    workers = GaugeMetricFamily("dynabench_rq_workers", "RQ workers registered (beating) that take jobs of the queue.",
                                labels=["queue"])
    beat = GaugeMetricFamily("dynabench_rq_worker_heartbeat_age_seconds", "Seconds since the least recent heartbeat "
                             "of a registered worker of the queue.", labels=["queue"])
    connection = None
    for name in settings.RQ_QUEUES:
        queue = django_rq.get_queue(name)
        connection = queue.connection
        jobs.add_metric([name, "queued"], queue.count)
        jobs.add_metric([name, "started"], queue.started_job_registry.count)
        jobs.add_metric([name, "failed"], queue.failed_job_registry.count)
        age = 0.0
        head = queue.get_job_ids(0, 1)
        if head:
            enqueued = connection.hget(queue.job_class.key_for(head[0]), "enqueued_at")
            if enqueued:
                age = max(0.0, (now - utcparse(enqueued.decode()).replace(tzinfo=timezone.utc)).total_seconds())
        oldest.add_metric([name], age)
    registered = Worker.all(connection=connection) if connection is not None else []
    for name in settings.RQ_QUEUES:
        taking = [w for w in registered if name in w.queue_names()]
        workers.add_metric([name], len(taking))
        beats = [w.last_heartbeat for w in taking if w.last_heartbeat]
        if beats:
            beat.add_metric([name], max(0.0, (now - min(beats).replace(tzinfo=timezone.utc)).total_seconds()))
    return [jobs, oldest, workers, beat]


def database_server():
    """On PostgreSQL: the server's client connections (every database, every client) and its
    ``max_connections``: "too many clients" is the first against the second. Declared without a
    value on SQLite."""
    from django.db import connection

    used = GaugeMetricFamily("dynabench_db_server_connections", "Client connections the PostgreSQL server holds now.")
    most = GaugeMetricFamily("dynabench_db_server_max_connections", "The PostgreSQL server's max_connections.")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'")
            used.add_metric([], cursor.fetchone()[0])
            cursor.execute("SELECT setting::int FROM pg_settings WHERE name = 'max_connections'")
            most.add_metric([], cursor.fetchone()[0])
    return [used, most]


def disk():
    """Free and total bytes of the file systems holding the platform's folders (var, media, models)."""
    free = GaugeMetricFamily("dynabench_disk_free_bytes", "Bytes free on the file system of the folder.", labels=["folder"])
    size = GaugeMetricFamily("dynabench_disk_size_bytes", "Bytes in all on the file system of the folder.", labels=["folder"])
    for name, path in (("var", settings.VAR_DIR), ("media", settings.MEDIA_ROOT), ("models", settings.MODELS_DIR)):
        try:
            usage = shutil.disk_usage(path)
        except OSError:  # not created yet
            continue
        free.add_metric([name], usage.free)
        size.add_metric([name], usage.total)
    return [free, size]
