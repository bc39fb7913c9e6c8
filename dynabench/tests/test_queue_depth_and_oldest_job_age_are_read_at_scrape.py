"""``/metrics`` reads each RQ queue's depth and the age of its oldest waiting job from Redis, and
the workers registered per queue."""

import uuid
from datetime import datetime, timedelta, timezone

from django_rq import get_connection
from rq import Queue, Worker
from rq.utils import utcformat

from dynabench.tests.metrics_support import scrape, value


def test_it_reports_the_jobs_waiting_and_how_long_the_oldest_has_waited(client, db, training_queue):
    queue = Queue("training", connection=training_queue.connection)  # at once, not on the test transaction's commit
    first = queue.enqueue("math.floor", 1.5)
    queue.enqueue("math.floor", 2.5)
    two_minutes_ago = datetime.now(timezone.utc) - timedelta(minutes=2)
    training_queue.connection.hset(first.key, "enqueued_at", utcformat(two_minutes_ago))

    text = scrape(client)

    assert value(text, "dynabench_rq_jobs", queue="training", state="queued") == 2
    assert value(text, "dynabench_rq_queue_oldest_job_age_seconds", queue="training") >= 120


def test_an_empty_queue_reports_zero_and_no_age(client, db, training_queue):
    text = scrape(client)

    assert value(text, "dynabench_rq_jobs", queue="training", state="queued") == 0
    assert value(text, "dynabench_rq_queue_oldest_job_age_seconds", queue="training") == 0


def test_it_counts_the_workers_registered_for_each_queue(client, db):
    before = value(scrape(client), "dynabench_rq_workers", queue="evaluation")
    worker = Worker(["evaluation"], connection=get_connection("default"), name=f"test-{uuid.uuid4().hex}")
    worker.register_birth()
    try:
        text = scrape(client)
    finally:
        worker.register_death()

    assert value(text, "dynabench_rq_workers", queue="evaluation") == before + 1
    assert value(text, "dynabench_source_up", source="rq") == 1
