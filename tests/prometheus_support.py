"""A real Prometheus (Debian's ``prometheus``) for tests: started on a free local port, scraping
one target every second with the platform's alert rules (``monitoring/alerts.yml``)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import requests

from tests.worker_stack import ROOT, _free_port

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"

#: Run in a ``WorkerStack`` (``stack.json``, with ``%(model)s`` a tiny classifier's directory): the
#: sentiment task with that model in the loop, an annotator "annie" and her API token, one job
#: waiting on a queue no worker takes. Prints ``{"token", "context", "round"}``.
CAMPAIGN_SETUP = """
import json
import django_rq
from django.contrib.auth.models import Group, User
from rest_framework.authtoken.models import Token
from dynabench.roles import ensure_role_groups
from tasks.data.seed import seed_default_tasks
from tasks.models import MLModel

ensure_role_groups()
task = {t.code: t for t in seed_default_tasks()}["sentiment"]
round_ = task.current_round()
round_.target_models.add(MLModel.objects.create(task=task, name="tiny", kind=MLModel.Kind.HF_DIRECTORY, path=%(model)r))
annie = User.objects.create_user("annie", password="pw-annie-1")
annie.groups.add(Group.objects.get(name="annotator"))
django_rq.get_queue("training").enqueue("math.floor", 1.5)  # no worker takes training here: it waits
print(json.dumps({"token": Token.objects.create(user=annie).key, "context": round_.contexts.order_by("pk").first().pk,
                  "round": round_.number}))
"""


def start_prometheus(root: Path, target: str) -> tuple[subprocess.Popen, str]:
    """Start Prometheus scraping ``target`` (host:port) every second; return the process and its base URL.
    Its data and log (``prometheus.log``) go under ``root``."""
    config = root / "prometheus.yml"
    config.write_text(json.dumps({  # JSON is YAML
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(ROOT / "monitoring" / "alerts.yml")],
        "scrape_configs": [{"job_name": "dynabench", "static_configs": [{"targets": [target]}]}],
    }))
    port = _free_port()
    log = open(root / "prometheus.log", "w")
    process = subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={root / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    return process, f"http://127.0.0.1:{port}"


def query(prometheus: str, expr: str) -> list[dict]:
    """An instant query's result list; empty while Prometheus is not up or has no such series."""
    try:
        answer = requests.get(f"{prometheus}/api/v1/query", params={"query": expr}, timeout=10).json()
    except (requests.RequestException, ValueError):
        return []
    return answer.get("data", {}).get("result", []) if answer.get("status") == "success" else []


def stop_prometheus(process: subprocess.Popen | None) -> None:
    """Stop a Prometheus started by ``start_prometheus`` (``None``: nothing was started)."""
    if process is not None:
        process.terminate()
        process.wait(timeout=60)
