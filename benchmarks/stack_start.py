"""Stack-process benchmark: what one process of a test's scratch platform costs to start, with and
without ``gc.freeze`` of what it inherits from the zygote (``tests.worker_stack._manage``).

Every process of a ``tests.worker_stack.WorkerStack`` is forked from one zygote per pytest process,
which imported torch, transformers and Django's modules; the process then sets Django up and runs
its ``manage.py`` command. This script starts, on two stacks over the same migrated template (one
with ``DYNABENCH_STACK_GC_FREEZE=0``), in alternation: a ``WorkerStack.python`` process (``manage.py
shell -c`` that reads its own CPU time and page faults as it ends), and an RQ worker, timed until
it listens, with its CPU time read from ``/proc`` then. It prints the medians and frozen /
unfrozen ratios, measured side by side in one run.

    .venv/bin/python benchmarks/stack_start.py          # ROUNDS=5 by default
"""

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SCRATCH = Path(tempfile.mkdtemp(prefix="bench-stack-start-"))
os.environ["DYNABENCH_VAR_DIR"] = str(SCRATCH / "var")
for name in ("DATABASE_URL", "REDIS_URL"):
    os.environ.pop(name, None)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dynabench.settings")

import django  # noqa: E402

django.setup()

from dynabench import embedded_redis  # noqa: E402
from tests.worker_stack import WorkerStack, migrated_template  # noqa: E402

ROUNDS = int(os.environ.get("ROUNDS", "5"))
TICKS = os.sysconf("SC_CLK_TCK")
CODE = """
import resource
usage = resource.getrusage(resource.RUSAGE_SELF)
print(usage.ru_utime + usage.ru_stime, usage.ru_minflt)
"""


def shell_process(stack: WorkerStack) -> tuple[float, float, float]:
    """CPU seconds and minor page faults of one ``manage.py shell -c`` process, and its wall seconds."""
    started = time.perf_counter()
    cpu, faults = stack.python(CODE).split()[-2:]
    return float(cpu), float(faults), time.perf_counter() - started


def worker_process(stack: WorkerStack, name: str) -> tuple[float, float, float]:
    """CPU seconds and minor page faults of one RQ worker until it listens, and its wall seconds."""
    started = time.perf_counter()
    process = stack.worker(name, cache=stack.root / f"cache-{name}")
    stack.wait_listening()
    wall = time.perf_counter() - started
    fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    faults, cpu = float(fields[7]), (int(fields[11]) + int(fields[12])) / TICKS
    stack.kill(name)
    del stack.workers[name]
    return cpu, faults, wall


def main():
    template_dir = SCRATCH / "template"
    template_dir.mkdir()
    template = migrated_template(template_dir)
    stacks = {
        "unfrozen": WorkerStack(SCRATCH / "unfrozen", template, DYNABENCH_STACK_GC_FREEZE="0"),
        "frozen": WorkerStack(SCRATCH / "frozen", template),
    }
    for stack in stacks.values():
        stack.python("pass")  # the embedded Redis up, the page and bytecode caches warm
    results = {(variant, process): [] for variant in stacks for process in ("shell", "worker")}
    for round_ in range(ROUNDS):
        for variant, stack in stacks.items():
            results[variant, "shell"].append(shell_process(stack))
            results[variant, "worker"].append(worker_process(stack, f"w{round_}"))

    print(f"{ROUNDS} processes each, medians")
    print(f"{'':20} {'CPU s':>7} {'page faults':>12} {'wall s':>7}")
    medians = {}
    for key, rows in results.items():
        medians[key] = [statistics.median(column) for column in zip(*rows)]
        print(f"{key[1] + ', ' + key[0]:20} {medians[key][0]:7.2f} {medians[key][1]:12.0f} {medians[key][2]:7.2f}")
    for process in ("shell", "worker"):
        (cpu_u, faults_u, wall_u), (cpu_f, faults_f, wall_f) = medians["unfrozen", process], medians["frozen", process]
        print(f"{process}: frozen / unfrozen: CPU {cpu_f / cpu_u:.3f}, page faults {faults_f / faults_u:.3f}, wall {wall_f / wall_u:.3f}")


if __name__ == "__main__":
    try:
        main()
    finally:
        for var in [SCRATCH / "var", *SCRATCH.glob("*/var")]:  # this process's and each stack's
            embedded_redis.stop(var / "redis.sock")
        shutil.rmtree(SCRATCH, ignore_errors=True)
