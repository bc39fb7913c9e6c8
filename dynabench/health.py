"""``/healthz``: database, Redis and RQ worker state as JSON."""

import time

from django.db import connection
from django.http import JsonResponse
from django_rq import get_connection
from rq import Worker


def healthz(request):
    """Return ``{"status": "ok"|"degraded", "database": {...}, "redis": {...}, "workers": {...}}``.

    HTTP 200 when the database and Redis answer, 503 otherwise. Workers are reported
    (count and queues) but their absence does not fail the check: pages work without them.
    """
    report = {}
    ok = True
    started = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        report["database"] = {"ok": True, "vendor": connection.vendor, "ms": round((time.perf_counter() - started) * 1000, 2)}
    except Exception as exc:  # any driver error means the database is down
        ok = False
        report["database"] = {"ok": False, "error": str(exc)}
    try:
        conn = get_connection("default")
        started = time.perf_counter()
        conn.ping()
        report["redis"] = {"ok": True, "ms": round((time.perf_counter() - started) * 1000, 2)}
        workers = Worker.all(connection=conn)
        report["workers"] = {
            "count": len(workers),
            "busy": sum(1 for w in workers if w.get_state() == "busy"),
            "queues": sorted({q.name for w in workers for q in w.queues}),
        }
    except Exception as exc:  # redis-py raises several unrelated types
        ok = False
        report["redis"] = {"ok": False, "error": str(exc)}
        report["workers"] = {"count": 0}
    report["status"] = "ok" if ok else "degraded"
    return JsonResponse(report, status=200 if ok else 503)
