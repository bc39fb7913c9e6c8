"""``/healthz`` reports the database, Redis and RQ workers as JSON."""

import uuid

import django_rq.settings
from django_rq import get_connection
from rq import Worker


def test_it_reports_the_database_and_redis_as_ok(client, db):
    response = client.get("/healthz")

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True and body["database"]["vendor"] in {"sqlite", "postgresql"}
    assert body["redis"]["ok"] is True
    assert {"count", "busy", "queues"} <= set(body["workers"])


def test_it_counts_a_live_worker_and_its_queues(client, db):
    before = client.get("/healthz").json()["workers"]["count"]
    worker = Worker(["default", "evaluation", "training"], connection=get_connection("default"), name=f"test-{uuid.uuid4().hex}")
    worker.register_birth()
    try:
        workers = client.get("/healthz").json()["workers"]
    finally:
        worker.register_death()

    assert workers["count"] == before + 1
    assert {"default", "evaluation", "training"} <= set(workers["queues"])
    assert client.get("/healthz").json()["workers"]["count"] == before


def test_it_answers_503_when_redis_is_unreachable(client, db, monkeypatch):
    monkeypatch.setitem(django_rq.settings.QUEUES, "default", {"URL": "redis://127.0.0.1:1/0"})

    response = client.get("/healthz")

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "degraded"
    assert body["redis"]["ok"] is False and "error" in body["redis"]
    assert body["database"]["ok"] is True and body["workers"] == {"count": 0}
