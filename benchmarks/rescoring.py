"""Benchmark of the living leaderboard: ``/work/main/.venv/bin/python benchmarks/rescoring.py``.

20 published models, a round with 3,000 validated examples closed into three new datasets of
1,000 items each (ratios 1/3 each): the time from ``close_round`` to a complete leaderboard (every
model scored on every new dataset, the leaderboard cache rebuilt, nothing pending) with one real
RQ worker process (``manage.py rqworker``), against the same evaluations done by calling the
evaluation function directly in this process (the jobs run inline), measured side by side in one
run and printed as a ratio (direct time / worker time; goal >= 0.8).

Everything runs on a scratch SQLite file, its own embedded Redis and MEDIA_ROOT under a temporary
folder. Models are tiny 2-layer BERTs built on the fly (``tests/tiny_models.py``).
Options: ``--models N`` (20), ``--items N`` per dataset (1000).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRATCH = Path(tempfile.mkdtemp(prefix="bench-rescoring-"))
sys.path.insert(0, str(ROOT))
ENV = {
    "DJANGO_SETTINGS_MODULE": "dynabench.settings", "DATABASE_URL": f"sqlite:///{SCRATCH / 'db.sqlite3'}",
    "DYNABENCH_VAR_DIR": str(SCRATCH / "var"), "MEDIA_ROOT": str(SCRATCH / "media"),
    "DYNABENCH_MODELS_DIR": str(SCRATCH / "models"),
}
os.environ.pop("REDIS_URL", None)
os.environ.update(ENV)

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402


def _world(n_models: int, n_items: int):
    from annotation.models import Example, ValidationState
    from tasks.models import MLModel
    from tasks.data.seed import seed_default_tasks
    from tests.tiny_models import build_tiny_classifier

    task = {t.code: t for t in seed_default_tasks()}["sentiment"]
    owner = User.objects.create_superuser("bench-owner", "o@example.org", "pw")
    labels = task.labels
    models = []
    for i in range(n_models):
        directory = build_tiny_classifier(SCRATCH / "tiny" / f"m{i}", labels, seed=i)
        models.append(MLModel.objects.create(task=task, owner=owner, name=f"tiny-{i}", path=str(directory), published=True,
                                             status=MLModel.Status.EVALUATED))
    round1 = task.rounds.get(number=1)
    context = round1.contexts.first()
    words = ["great", "awful", "fine", "slow", "friendly", "cold", "lovely", "rude", "quiet", "dirty"]
    Example.objects.bulk_create(
        Example(round=round1, context=context, author=owner, model=None,
                input={"text": f"the {words[i % 10]} staff and the {words[(i * 7) % 10]} room number {i}"},
                target={"label": labels[i % len(labels)]}, model_output={"label": labels[(i + 1) % len(labels)]},
                model_wrong=True, validation_state=ValidationState.VERIFIED_CORRECT)
        for i in range(3 * n_items)
    )
    return task, owner, round1, models


def _complete(task, n_models: int, datasets: list) -> bool:
    from leaderboard.models import EvaluationRun, LeaderboardCache

    done = EvaluationRun.objects.filter(dataset__in=datasets, status=EvaluationRun.Status.DONE).count()
    if done < n_models * len(datasets):
        return False
    cache = LeaderboardCache.objects.filter(task=task).first()
    scoring = {str(d.pk) for d in datasets if d.access == "scoring"}
    return cache is not None and sum(1 for row in cache.rows if scoring <= set(row["scores"])) == n_models


def with_worker(task, owner, round1, n_models: int) -> tuple[float, list, float]:
    """Seconds from close_round to a complete leaderboard, one ``rqworker`` process doing the jobs;
    the new datasets; and the seconds close_round itself took (building the datasets)."""
    from validation.round_close import close_round

    env = {**os.environ, **ENV}
    worker = subprocess.Popen([sys.executable, "manage.py", "rqworker", "evaluation", "default"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=open(SCRATCH / "worker.log", "w"))
    try:
        time.sleep(5)  # the worker is up and listening before the clock starts
        started = time.perf_counter()
        datasets = close_round(round=round1, acting_user=owner, ratios={"train": 1 / 3, "dev": 1 / 3, "test": 1 / 3})
        closed = time.perf_counter() - started
        while not _complete(task, n_models, datasets):
            if worker.poll() is not None:
                raise RuntimeError("the worker stopped")
            time.sleep(0.2)
        return time.perf_counter() - started, datasets, closed
    finally:
        worker.terminate()
        worker.wait(timeout=30)


def direct(task, datasets) -> float:
    """Seconds for the same runs done by calling the evaluation function in this process (jobs inline)."""
    from leaderboard.evaluation import _RESET, rebuild_leaderboard
    from leaderboard.jobs import evaluate_run
    from leaderboard.models import EvaluationRun

    settings.RQ_QUEUES = {name: {**conf, "ASYNC": False} for name, conf in settings.RQ_QUEUES.items()}
    runs = list(EvaluationRun.objects.filter(dataset__in=datasets).order_by("pk").values_list("pk", flat=True))
    EvaluationRun.objects.filter(pk__in=runs).update(**_RESET)
    started = time.perf_counter()
    for pk in runs:
        evaluate_run(pk)
    rebuild_leaderboard(task.pk)
    elapsed = time.perf_counter() - started
    assert EvaluationRun.objects.filter(pk__in=runs, status=EvaluationRun.Status.DONE).count() == len(runs)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--items", type=int, default=1000)
    args = parser.parse_args()
    from dynabench import embedded_redis

    call_command("migrate", verbosity=0)
    try:
        task, owner, round1, _ = _world(args.models, args.items)
        worker_s, datasets, close_s = with_worker(task, owner, round1, args.models)
        direct_s = direct(task, datasets)
        runs = args.models * len(datasets)
        print(f"{args.models} published models x {len(datasets)} new datasets of {args.items} items ({runs} runs)")
        print(f"close_round -> complete leaderboard, one RQ worker: {worker_s:.1f} s (close_round itself: {close_s:.1f} s)")
        print(f"same runs by calling the evaluation function directly: {direct_s:.1f} s")
        print(f"ratio direct/worker: {direct_s / worker_s:.2f}x (goal >= 0.8x); the evaluations alone, after close_round "
              f"returned: {direct_s / (worker_s - close_s):.2f}x; worker log: {SCRATCH / 'worker.log'}")
    finally:
        embedded_redis.stop(SCRATCH / "var" / "redis.sock")


if __name__ == "__main__":
    main()
