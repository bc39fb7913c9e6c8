"""A job queued while serving a request carries the request's id in its meta; the worker binds it
while the job runs and logs one JSON line for the job, and counts it by queue, function and status."""

import json
import logging
import uuid

from django_rq import get_connection
from prometheus_client import REGISTRY

from dynabench import request_ids
from dynabench.job_observer import ObservedWorker


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(json.loads(record.getMessage()))


def test_a_job_queued_in_a_request_carries_its_id(default_queue):
    token = request_ids.bind("request-under-test-1")
    try:
        job = default_queue.enqueue("math.floor", 1.5)
    finally:
        request_ids.unbind(token)

    assert job.meta["request_id"] == "request-under-test-1"


def test_a_job_queued_outside_a_request_carries_none(default_queue):
    job = default_queue.enqueue("math.floor", 1.5)

    assert "request_id" not in job.meta


def test_the_worker_logs_one_line_per_job_with_that_id_and_counts_it(default_queue):
    token = request_ids.bind("request-under-test-2")
    try:
        job = default_queue.enqueue("math.floor", 1.5)
    finally:
        request_ids.unbind(token)
    events = logging.getLogger("dynabench.events")
    handler, level = _Lines(), events.level
    events.addHandler(handler)
    events.setLevel(logging.INFO)
    labels = {"queue": "default", "function": "math.floor", "status": "finished"}
    before = REGISTRY.get_sample_value("dynabench_rq_job_duration_seconds_count", labels) or 0.0
    try:
        worker = ObservedWorker([default_queue], connection=get_connection("default"), name=f"test-{uuid.uuid4().hex}")
        worker.work(burst=True)
    finally:
        events.removeHandler(handler)
        events.setLevel(level)

    assert job.get_status(refresh=True) == "finished"
    [line] = [line for line in handler.lines if line.get("job_id") == job.id]
    assert line["event"] == "job" and line["request_id"] == "request-under-test-2"
    assert line["function"] == "math.floor" and line["status"] == "finished" and line["queue"] == "default"
    assert REGISTRY.get_sample_value("dynabench_rq_job_duration_seconds_count", labels) == before + 1
    assert REGISTRY.get_sample_value("dynabench_rq_job_last_success_timestamp_seconds", {"function": "math.floor"}) > 0
