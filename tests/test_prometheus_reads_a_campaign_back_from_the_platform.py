"""A real Prometheus (Debian's ``prometheus``) scrapes the platform started as ``make run`` starts it
(gunicorn with ``scripts/run.sh``'s worker class, an RQ worker, one ``PROMETHEUS_MULTIPROC_DIR``) and
loads ``monitoring/alerts.yml``. After an annotator writes examples through the API, its HTTP API
gives back a request latency histogram, a queue's depth, the examples written, and a job the worker
process ran (the web process serves what another process recorded).

The stack runs on a copy of the suite's migrated SQLite template with its own embedded Redis."""

from pathlib import Path

import pytest
import requests

from tests.prometheus_support import CAMPAIGN_SETUP, PROMETHEUS, query, start_prometheus, stop_prometheus
from tests.worker_stack import WorkerStack

pytestmark = pytest.mark.slow
HANG_S = 300  # seconds: a ceiling that only catches a hang


@pytest.mark.skipif(not Path(PROMETHEUS).exists(), reason="needs Debian's prometheus (apt-get install prometheus)")
def test_prometheus_reads_requests_queues_examples_and_jobs_back(tmp_path, stack_template, tiny_classifier_dir):
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    stack = WorkerStack(tmp_path / "stack", stack_template, PROMETHEUS_MULTIPROC_DIR=str(metrics_dir))
    prometheus = None
    try:
        setup = stack.json(CAMPAIGN_SETUP % {"model": str(tiny_classifier_dir)})
        base = stack.gunicorn(timeout=HANG_S)
        stack.worker("short", cache=tmp_path / "cache", queues=("default",))
        prometheus, api = start_prometheus(tmp_path, base.removeprefix("http://"))
        headers = {"Authorization": f"Token {setup['token']}"}

        for text in ("The soup was cold but the staff were kind.", "A fine evening, apart from the noise."):
            written = requests.post(f"{base}/api/v1/examples", headers=headers, timeout=HANG_S, json={
                "context": setup["context"], "input": {"text": text}, "target": {"label": "positive"}})
            assert written.status_code == 201, written.text[:500]
            assert written.headers["X-Request-ID"]

        def series(expr, want):
            return stack.wait_for(lambda: [r for r in query(api, expr) if want(float(r["value"][1]))],
                                  timeout=HANG_S, what=f"Prometheus to return {expr}")

        labels = f'task="sentiment",round="{setup["round"]}"'
        assert series(f"dynabench_examples_written_total{{{labels}}}", lambda v: v == 2)
        histogram = series('dynabench_http_request_duration_seconds_bucket{method="POST",status="201",le="+Inf"}',
                           lambda v: v == 2)
        assert histogram[0]["metric"]["route"].endswith("example-list")
        assert series('histogram_quantile(0.95, sum by (le) (rate(dynabench_http_request_duration_seconds_bucket[1m])))',
                      lambda v: v > 0)
        assert series('dynabench_rq_jobs{queue="training",state="queued"}', lambda v: v == 1)
        assert series('dynabench_rq_workers{queue="default"}', lambda v: v == 1)
        # recorded by the worker's process, served by the web process
        assert series('dynabench_rq_job_duration_seconds_count{function="leaderboard.reaper.reap",status="finished"}',
                      lambda v: v >= 1)
        rules = requests.get(f"{api}/api/v1/rules", timeout=10).json()["data"]["groups"]
        assert {rule["name"] for group in rules for rule in group["rules"]} >= {"DynabenchWorkerMissing", "DynabenchReaperSilent"}
    finally:
        stop_prometheus(prometheus)
        stack.stop()
