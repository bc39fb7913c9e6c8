"""Benchmark: the first example after a model becomes ready, against the next 20, on web processes
that started while the model was still training.

One command::

    .venv/bin/python benchmarks/first_example.py [--database-url URL] [--redis-url URL] [--workers N]

What it does, twice (web processes with ``DYNABENCH_WARM_MODELS=1``, as ``make run`` starts them,
then ``=0``, which loads a model only when an example asks, for comparison):

1. Prepares its own state (``benchmarks/annotation.py``'s set-up: a temporary ``DYNABENCH_VAR_DIR``,
   the database given by ``--database-url``, **flushed**, the default tasks, annotators) and a
   sentiment model record in the loop of round 1 that is still ``training``: no directory yet.
2. Starts the platform as ``make run`` serves it (``dynabench.asgi`` under ``--workers`` uvicorn
   workers), waits for ``/healthz``, then ``--settle`` seconds (20): the web processes start while
   the model trains, and a training lasts minutes, long enough for them to finish starting.
3. Makes the model ready as a training ends (``tasks.loop.training.runs.train_model_record``'s last
   step): the MiniLM directory (all-MiniLM-L6-v2 with a fresh 3-label head) moves into place, the
   record becomes ``uploaded`` with its checksum and ``leaderboard_inputs_changed`` is sent, in
   one transaction.
4. At once, an annotator logs in, opens the write page and submits the first example; then 20
   more, one after the other. Each goes to whichever web process the kernel hands the connection
   to; every process must be ready for it.

Prints, per mode, the first example's time, the p50 of the next 20, and their ratio.
"""

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.annotation import (  # noqa: E402
    TEXTS, Annotator, argument_parser, free_port, fresh_minilm_dir, setup_django, start_server, stop_server,
)

NEXT = 20


def prepare(var_dir: Path, source: Path):
    """Flush and seed the database; a sentiment record ``training`` in the loop of round 1; an annotator."""
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command

    from dynabench.roles import ensure_role_groups
    from tasks.data.seed import seed_default_tasks
    from tasks.models import MLModel

    call_command("migrate", verbosity=0)
    call_command("flush", interactive=False, verbosity=0)
    ensure_role_groups()
    task = {t.code: t for t in seed_default_tasks()}["sentiment"]
    task.config = {**task.config, "daily_example_cap": 1_000_000}
    task.save()
    target = var_dir / "models" / "sentiment" / "minilm-trained"
    shutil.rmtree(target, ignore_errors=True)
    model = MLModel.objects.create(task=task, name="minilm-trained", path=str(target), status=MLModel.Status.TRAINING)
    task.current_round().target_models.set([model])
    user = User.objects.create_user(username="bench0", password="bench-password-1")
    user.groups.add(Group.objects.get(name="annotator"))
    return task, model, target


def make_ready(task, model, source: Path, target: Path) -> None:
    """The last step of a training: the weights in place, the record ready, the change announced."""
    from django.db import transaction

    from tasks.loop.model_checks import directory_checksum
    from tasks.models import MLModel
    from tasks.signals import leaderboard_inputs_changed

    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, target)
    with transaction.atomic():
        MLModel.objects.filter(pk=model.pk).update(status=MLModel.Status.UPLOADED, progress=1.0, checksum=directory_checksum(target))
        leaderboard_inputs_changed.send(sender=MLModel, task=task, models=[model])


def one_mode(args, env: dict, var_dir: Path, source: Path, warm: bool) -> tuple[float, float, float]:
    """Return ``(seconds from ready to the first example sent, first example s, p50 of the next NEXT s)``."""
    task, model, target = prepare(var_dir, source)
    port = free_port()
    server = start_server({**env, "DYNABENCH_WARM_MODELS": "1" if warm else "0"}, port, args)
    try:
        time.sleep(args.settle)  # the rest of the training: the web processes finish starting meanwhile
        make_ready(task, model, source, target)
        ready = time.perf_counter()
        annotator = Annotator(f"http://127.0.0.1:{port}", "bench0")
        sent = time.perf_counter() - ready
        times = []
        for n in range(NEXT + 1):
            elapsed, status, example, _ = annotator.submit(f"{TEXTS[n % len(TEXTS)]} ({n})", "negative")
            if status != 200 or example is None:
                raise SystemExit(f"example {n}: HTTP {status}")
            times.append(elapsed)
        return sent, times[0], statistics.median(times[1:])
    finally:
        stop_server(server)


def main():
    parser = argument_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--settle", type=float, default=20.0, help="seconds between /healthz and the model becoming ready")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-first-example-") as tmp:
        var_dir = Path(tmp)
        env, _ = setup_django(args, var_dir)
        os.environ.pop("DYNABENCH_WARM_MODELS", None)
        source = fresh_minilm_dir(var_dir / "minilm-source")
        rows = [(warm, *one_mode(args, env, var_dir, source, warm)) for warm in (True, False)]
    print(f"\nFirst example after the model became ready ({args.workers} web processes started while it trained)")
    print(f"{'web processes':<34} {'ready->sent s':>13} {'first s':>9} {'p50 next ' + str(NEXT) + ' s':>15} {'first/p50':>10}")
    for warm, sent, first, p50 in rows:
        label = "warm on readiness (make run)" if warm else "no warm-up (load on first ask)"
        print(f"{label:<34} {sent:>13.3f} {first:>9.3f} {p50:>15.3f} {first / p50:>10.2f}")


if __name__ == "__main__":
    main()
