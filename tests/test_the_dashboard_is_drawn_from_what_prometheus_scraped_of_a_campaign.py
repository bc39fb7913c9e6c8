"""``scripts/draw_dashboard.py`` draws the Grafana dashboard (``monitoring/dashboard.json``) from a
real Prometheus that scraped the platform (started as ``make run`` starts it) while an annotator
wrote examples, some the API refused, and browsed pages: the web, campaign and job panels have
data, and the picture is a PNG.

The docs' picture of the dashboard (``docs/screenshots/monitoring-dashboard.png``) is this test's:
run it with ``DYNABENCH_DASHBOARD_PICTURE=<path>`` and the PNG is copied there."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.prometheus_support import CAMPAIGN_SETUP, PROMETHEUS, query, start_prometheus, stop_prometheus
from tests.worker_stack import ROOT, WorkerStack

pytestmark = pytest.mark.slow
HANG_S = 300  # seconds: a ceiling that only catches a hang
EXAMPLES = 40
TEXTS = ["The soup was cold but the staff were kind.", "A fine evening, apart from the noise.",
         "Never again, unless they fix the heating.", "Not bad at all, if you like waiting."]


@pytest.mark.skipif(not Path(PROMETHEUS).exists(), reason="needs Debian's prometheus (apt-get install prometheus)")
def test_the_dashboard_is_drawn_with_data_in_its_web_campaign_and_job_panels(tmp_path, stack_template, tiny_classifier_dir):
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    # one annotator writes faster than the per-person rate allows: the limit is off here
    stack = WorkerStack(tmp_path / "stack", stack_template, PROMETHEUS_MULTIPROC_DIR=str(metrics_dir),
                        ANNOTATION_SUBMISSIONS_PER_MINUTE="0")
    prometheus = None
    try:
        setup = stack.json(CAMPAIGN_SETUP % {"model": str(tiny_classifier_dir)})
        base = stack.gunicorn(timeout=HANG_S)
        stack.worker("short", cache=tmp_path / "cache", queues=("default",))
        prometheus, api = start_prometheus(tmp_path, base.removeprefix("http://"))
        stack.wait_for(lambda: query(api, "up") != [], timeout=HANG_S, what="Prometheus' first scrape")
        started = time.time()  # the picture begins here: nothing was scraped before
        headers = {"Authorization": f"Token {setup['token']}"}
        session = requests.Session()

        for n in range(EXAMPLES):
            written = session.post(f"{base}/api/v1/examples", headers=headers, timeout=HANG_S, json={
                "context": setup["context"], "input": {"text": f"{TEXTS[n % 4]} ({n})"},
                "target": {"label": ("positive", "negative")[n % 2]}})
            assert written.status_code == 201, written.text[:500]
            if n % 5 == 0:  # what the API refuses, and pages people read
                refused = session.post(f"{base}/api/v1/examples", headers=headers, timeout=HANG_S,
                                       json={"context": setup["context"], "input": {}, "target": {"label": "positive"}})
                assert refused.status_code == 400, refused.text[:500]
                assert session.get(f"{base}/tasks/sentiment/", timeout=HANG_S).status_code == 200

        labels = f'task="sentiment",round="{setup["round"]}"'
        stack.wait_for(lambda: [r for r in query(api, f"dynabench_examples_written_total{{{labels}}}")
                                if float(r["value"][1]) == EXAMPLES], timeout=HANG_S, what="Prometheus to scrape every example")

        out = tmp_path / "dashboard.png"
        drawn = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "draw_dashboard.py"), "--prometheus", api, "--out", str(out),
             "--minutes", f"{(time.time() - started) / 60 + 0.1:.2f}", "--rate-interval", "10s", "--step", "1"],
            capture_output=True, text=True, timeout=HANG_S,
        )
        assert drawn.returncode == 0, drawn.stderr[-2000:]
        summary = json.loads(drawn.stdout.strip().splitlines()[-1])
        dashboard = json.loads((ROOT / "monitoring" / "dashboard.json").read_text())
        assert summary["panels"] == sum(1 for panel in dashboard["panels"] if panel["type"] != "row")
        assert {"Requests per second by route", "p95 time to headers by route", "Examples written per minute",
                "Fooling share of examples (round so far)", "Jobs waiting by queue", "Workers by queue"} <= set(summary["with_data"])
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        if os.environ.get("DYNABENCH_DASHBOARD_PICTURE"):
            shutil.copyfile(out, os.environ["DYNABENCH_DASHBOARD_PICTURE"])
    finally:
        stop_prometheus(prometheus)
        stack.stop()
