"""Benchmark: a round of a million examples on PostgreSQL, each figure beside its goal (issue 16).

One command::

    /work/main/.venv/bin/python benchmarks/scale.py [--database-url URL] [--examples 1000000]

1. Builds (or reuses, when the same size is already loaded) one round of ``--examples``
   examples with ``--votes`` validations each (1M and 3M by default) in the database of
   ``--database-url`` (default PostgreSQL ``h_scale_bench``; created and migrated if needed),
   written with ``COPY``: 2,000 annotators, 600 validators, 35 % of the examples fooling the
   model, each example's state and counters derived by ``validation.calculations`` from its
   validations. Then the round's tallies are counted once (``annotation.counters.
   recount_rounds``, as after any bulk write) and its agreement computed once by the job
   (``validation.jobs.compute_round_agreement``); both times are printed.
2. Measures, in this process through Django's test client with the owner logged in (the
   whole middleware and template stack, no network): the round page, the owner's queue
   page and the owner's round dashboard (console), ``--samples`` GETs each: p50 and p95.
3. The round export streamed to the end in a fresh process (``--export-only``): lines/s and
   that process's peak RSS; first with no example placed by a diversity report, then with every
   example placed (a cluster and a near-duplicate group of four, as ``ExampleDiversity`` rows)
   beside it, as a ratio, and the deduplicated view (``?view=deduplicated``, a quarter of the lines).
4. ``next_example_for`` (the review queue's claim) for validators with no validation yet,
   with the 3M validations in place: p50 and p95.
5. The submit-example overhead over the bare predictor (HTTP, MiniLM) is measured by
   ``benchmarks/annotation.py`` (a gunicorn server and its own database); with
   ``--with-submit`` it is run here and its overhead line printed.
6. The first-start figure (``make run`` until the home page answers) is measured by the fast
   first start work (issue 16 item 4), not here; evaluation sharding has its own benchmark.

Nothing here is simulated: the pages, selectors and jobs are the application's own.
"""

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/h_scale_bench")
parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/7")
parser.add_argument("--examples", type=int, default=1_000_000)
parser.add_argument("--votes", type=int, default=3, help="validations per example")
parser.add_argument("--samples", type=int, default=30, help="GETs per page")
parser.add_argument("--claims", type=int, default=200, help="next_example_for calls")
parser.add_argument("--with-submit", action="store_true", help="also run benchmarks/annotation.py for the submit overhead")
parser.add_argument("--export-only", action="store_true", help=argparse.SUPPRESS)
parser.add_argument("--view", default="all", help=argparse.SUPPRESS)
args = parser.parse_args()

os.environ["DATABASE_URL"] = args.database_url
os.environ["REDIS_URL"] = args.redis_url
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dynabench.settings")
os.environ.setdefault("DB_CONN_MAX_AGE", "600")

from benchmarks._postgres import create_database  # noqa: E402

create_database(args.database_url)

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from annotation import counters  # noqa: E402
from annotation.diversity_models import ExampleDiversity  # noqa: E402
from annotation.models import Example  # noqa: E402
from tasks.models import Context, Round, Task  # noqa: E402
from tasks.data.seed import load_task_definition  # noqa: E402
from validation.calculations import ConsensusPolicy, derive_state, tally  # noqa: E402
from validation.jobs import compute_round_agreement  # noqa: E402
from validation.models import Validation  # noqa: E402
from validation.queue import next_example_for, release_lease  # noqa: E402

TASK = "scale-bench"
LABELS = ("correct", "incorrect", "flagged")
GOALS = {
    "round page": 200.0, "owner queue page": 100.0, "owner dashboard": 200.0, "next example": 5.0,
}


def ms(seconds: float) -> float:
    return seconds * 1000


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def verdict(value, goal, *, higher_is_better=False) -> str:
    met = value >= goal if higher_is_better else value <= goal
    return "MEETS" if met else "MISSES"


def people(prefix: str, n: int) -> list[int]:
    names = [f"{prefix}{i:05d}" for i in range(n)]
    have = set(User.objects.filter(username__in=names).values_list("username", flat=True))
    User.objects.bulk_create([User(username=u, password="!") for u in names if u not in have], batch_size=2000)
    return list(User.objects.filter(username__in=names).order_by("username").values_list("pk", flat=True))


def setup():
    if connection.vendor != "postgresql":
        sys.exit("This benchmark needs PostgreSQL (--database-url postgres://...).")
    call_command("migrate", verbosity=0)
    spec = load_task_definition("sentiment")
    task, _ = Task.objects.get_or_create(code=TASK, defaults={"name": "Scale benchmark", "kind": spec["kind"], "config": spec["config"]})
    owner, _ = User.objects.get_or_create(username="scale-owner")
    task.owners.add(owner)
    round, _ = Round.objects.get_or_create(task=task, number=1)
    return task, round, owner


def _copy(table: str, columns: list[str], rows) -> None:
    with connection.cursor() as cursor:
        with cursor.connection.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)


def build(task, round) -> None:
    """COPY ``--examples`` examples and ``--votes`` validations each into ``round``."""
    authors, validators = people("scale-author-", 2000), people("scale-validator-", 600)
    policy = ConsensusPolicy.from_config(task.config)
    contexts = [Context(round=round, uid=f"scale-{i}", data={"prompt": f"Prompt {i}."}, times_used=0) for i in range(1000)]
    Context.objects.bulk_create(contexts, batch_size=1000)
    context_ids = list(Context.objects.filter(round=round).order_by("pk").values_list("pk", flat=True))
    rng = random.Random(16)
    start = timezone.now() - timezone.timedelta(days=30)
    # Each example's validations: mostly agreeing, some split, a few flags.
    patterns = [("correct",) * args.votes, ("incorrect",) * args.votes, ("correct", "incorrect", "correct")[: args.votes],
                ("incorrect", "correct", "flagged")[: args.votes], ("flagged",) * args.votes]
    weights = [0.5, 0.25, 0.12, 0.08, 0.05]
    settled = [(derive_state([(label, "user") for label in p], policy), tally(p)) for p in patterns]
    chosen = bytearray(rng.choices(range(len(patterns)), weights, k=args.examples))
    target = json.dumps({"label": "positive"})
    wrong_out = json.dumps({"label": "negative", "probs": {"positive": 0.2, "negative": 0.7, "neutral": 0.1}})
    right_out = json.dumps({"label": "positive", "probs": {"positive": 0.7, "negative": 0.2, "neutral": 0.1}})
    columns = ["round_id", "context_id", "author_id", "input", "target", "model_output", "model_wrong", "metadata", "tag",
               "retracted", "flagged", "split", "created_at", "validation_state", "validation_count", "correct_count",
               "incorrect_count", "flagged_count", "submission_key", "origin"]
    step = timezone.timedelta(seconds=30 * 86400 / args.examples)

    def example_rows():
        for i in range(args.examples):
            wrong = rng.random() < 0.35
            state, counts = settled[chosen[i]]
            yield (round.pk, context_ids[i % 1000], authors[i % len(authors)],
                   json.dumps({"prompt": f"Prompt {i % 1000}.", "text": f"Example sentence number {i}, written to fool the model."}),
                   target, wrong_out if wrong else right_out, wrong, "{}", "", False, False, "", start + i * step,
                   state, counts["validation_count"], counts["correct_count"], counts["incorrect_count"], counts["flagged_count"], "", "written")

    t0 = time.perf_counter()
    _copy(Example._meta.db_table, columns, example_rows())
    t1 = time.perf_counter()
    print(f"  examples: {args.examples:,} in {t1 - t0:.0f} s (COPY)", flush=True)
    ids = list(Example.objects.filter(round=round).order_by("pk").values_list("pk", flat=True))

    def validation_rows():
        for i, example_id in enumerate(ids):
            created = start + i * step + timezone.timedelta(minutes=5)
            for k, label in enumerate(patterns[chosen[i]]):
                validator = validators[(i * 7 + k * 131) % len(validators)]
                yield example_id, validator, label, "user", "{}" if label != "flagged" else '{"flag_reason": "unclear"}', True, False, created, ""

    _copy(Validation._meta.db_table, ["example_id", "validator_id", "label", "mode", "metadata", "counts", "gold_check", "created_at", "submission_key"],
          validation_rows())
    t2 = time.perf_counter()
    print(f"  validations: {len(ids) * args.votes:,} in {t2 - t1:.0f} s (COPY)", flush=True)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {Context._meta.db_table} SET times_used = %s WHERE round_id = %s", [args.examples // 1000, round.pk])
        cursor.execute("VACUUM ANALYZE")


def sample_get(client, url: str, n: int) -> tuple[list[float], int]:
    client.get(url)  # warm: templates, session
    executed = []
    with connection.execute_wrapper(lambda execute, sql, params, many, context: executed.append(sql) or execute(sql, params, many, context)):
        response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    times, cpu = [], []
    for _ in range(n):
        t0, c0 = time.perf_counter(), time.process_time()
        response = client.get(url)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        assert response.status_code == 200
    return times, cpu, len(executed)


def peak_rss_mb() -> float:
    """This process's peak resident memory in MB (``VmHWM``). Not ``ru_maxrss``: Linux carries that
    over ``exec`` from the forking parent, which holds the benchmark's million ids."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def place_examples(round, *, placed: bool) -> None:
    """Remove every ``ExampleDiversity`` row of ``round``, then with ``placed`` give each example one as a
    diversity report would: consecutive examples in near-duplicate groups of four (the first leads),
    clusters 0 to 6 and -1 in turn. One INSERT ... SELECT."""
    ExampleDiversity.objects.filter(round=round).delete()
    if not placed:
        return
    t0 = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(f"""
            INSERT INTO {ExampleDiversity._meta.db_table} (example_id, round_id, cluster, representative_id, group_size)
            SELECT id, round_id, (n %% 8) - 1, first_value(id) OVER (PARTITION BY n / 4 ORDER BY id), 4
            FROM (SELECT id, round_id, row_number() OVER (ORDER BY id) - 1 AS n FROM {Example._meta.db_table}
                  WHERE round_id = %s) numbered""", [round.pk])
        cursor.execute(f"ANALYZE {ExampleDiversity._meta.db_table}")
    print(f"  placed {ExampleDiversity.objects.filter(round=round).count():,} examples in {time.perf_counter() - t0:.0f} s", flush=True)


def export_in_child(what: str, *, view: str = "all", goal: str = ">= 50k lines/s, RSS <= 300 MB", met=None) -> dict:
    """Stream the export (``view``) in a fresh process, print its row of the table beside ``goal`` (``met``:
    whether it is met; by default 50,000 lines/s and 300 MB); return the child's figures with ``rate``."""
    child = subprocess.run(
        [sys.executable, __file__, "--export-only", "--view", view, "--database-url", args.database_url, "--redis-url", args.redis_url],
        capture_output=True, text=True, check=True,
    )
    export = json.loads(child.stdout.strip().splitlines()[-1])
    export["rate"] = rate = export["lines"] / export["seconds"]
    met = met or (lambda e: e["rate"] >= 50_000 and e["rss_mb"] <= 300)
    print(f"| {what}, {export['lines']:,} JSONL lines ({export['bytes'] / 1e6:.0f} MB) | {rate:,.0f} lines/s "
          f"({export['seconds']:.1f} s) | peak RSS {export['rss_mb']:.0f} MB ({export['rss_before_mb']:.0f} MB before the first line) | | {goal} | "
          f"{'MEETS' if met(export) else 'MISSES'} |", flush=True)
    return export


def export_only() -> None:
    """Child process: stream the round export to the end; print lines, seconds, peak RSS."""
    task = Task.objects.get(code=TASK)
    owner = User.objects.get(username="scale-owner")
    client = Client()
    client.force_login(owner)
    last = Example.objects.filter(round__task=task).order_by("-pk").values_list("pk", flat=True).first()
    b"".join(client.get(f"/tasks/{task.code}/rounds/1/export.jsonl?after={last}&view={args.view}").streaming_content)  # imports, URLs
    before_mb = peak_rss_mb()
    t0 = time.perf_counter()
    response = client.get(f"/tasks/{task.code}/rounds/1/export.jsonl?view={args.view}")
    lines = size = 0
    for block in response.streaming_content:
        lines += block.count(b"\n")
        size += len(block)
    took = time.perf_counter() - t0
    rss_mb = peak_rss_mb()
    print(json.dumps({"lines": lines, "seconds": took, "bytes": size, "rss_mb": rss_mb, "rss_before_mb": before_mb}))


def main() -> None:
    if args.export_only:
        export_only()
        return
    print(f"== scale benchmark: {args.examples:,} examples x {args.votes} validations, PostgreSQL "
          f"{connection.cursor().connection.info.server_version} ==", flush=True)
    task, round, owner = setup()
    have = Example.objects.filter(round=round).count()
    if have != args.examples or Validation.objects.filter(example__round=round).count() != args.examples * args.votes:
        if have:
            place_examples(round, placed=False)
            with connection.cursor() as cursor:
                cursor.execute("DELETE FROM validation_validation v USING annotation_example e WHERE v.example_id = e.id AND e.round_id = %s", [round.pk])
                cursor.execute("DELETE FROM annotation_example WHERE round_id = %s", [round.pk])
        Context.objects.filter(round=round).delete()  # also what a build that stopped half-way left
        print("building the round ...", flush=True)
        t0 = time.perf_counter()
        build(task, round)
        print(f"  built in {time.perf_counter() - t0:.0f} s", flush=True)
        t0 = time.perf_counter()
        counters.recount_rounds([round.pk])
        print(f"  tallies counted once after the bulk load: {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        print(f"  {compute_round_agreement(round.pk)} (job, once; pages read its result)")
        print(f"  agreement job: {time.perf_counter() - t0:.1f} s")
    else:
        print(f"reusing the {have:,} examples already loaded (tallies and agreement as computed then)")
    print(f"machine load average before measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")

    client = Client()
    client.force_login(owner)
    print("\n| what | p50 | p95 | queries | goal | |\n|---|---|---|---|---|---|")
    pages = {
        "round page": f"/tasks/{task.code}/rounds/1/",
        "owner queue page": f"/tasks/{task.code}/rounds/1/owner/",
        "owner dashboard": f"/tasks/{task.code}/console/rounds/1/dashboard",
    }
    for name, url in pages.items():
        times, cpu, queries = sample_get(client, url, args.samples)
        p50 = ms(statistics.median(times))
        print(f"| {name} | {p50:.1f} ms (web process CPU {ms(statistics.median(cpu)):.1f} ms) | {ms(pct(times, 95)):.1f} ms | {queries} | "
              f"p50 <= {GOALS[name]:.0f} ms | {verdict(p50, GOALS[name])} |", flush=True)

    validators = people("scale-fresh-validator-", 20)
    claims = []
    for i in range(args.claims):
        who = User(pk=validators[i % len(validators)])
        t0 = time.perf_counter()
        example = next_example_for(validator=who, round=round)
        claims.append(time.perf_counter() - t0)
        if example is not None:
            release_lease(example=example, validator=who)
    p50 = ms(statistics.median(claims))
    print(f"| next example to validate ({Validation.objects.filter(example__round=round).count():,} validations) | {p50:.2f} ms | "
          f"{ms(pct(claims, 95)):.2f} ms | | p50 <= 5 ms | {verdict(p50, 5.0)} |", flush=True)

    place_examples(round, placed=False)
    unplaced = export_in_child("round export")
    place_examples(round, placed=True)
    placed = export_in_child("round export, every example placed by a diversity report")
    rate = placed["rate"] / unplaced["rate"]
    print(f"| the placed export against the unplaced, lines/s | {rate:.2f}x | | | >= 0.9x | {verdict(rate, 0.9, higher_is_better=True)} |")
    view = export_in_child("its deduplicated view (one example per near-duplicate group of four)", view="deduplicated",
                           goal=f"<= the whole export's {placed['seconds']:.1f} s", met=lambda e: e["seconds"] <= placed["seconds"])
    print(f"| the deduplicated view's time against the whole export's | {view['seconds'] / placed['seconds']:.2f}x | | | <= 1x | "
          f"{verdict(view['seconds'] / placed['seconds'], 1.0)} |")

    if args.with_submit:
        run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "annotation.py"), "--requests", "200", "--duration", "5",
                              "--annotators", "2"], capture_output=True, text=True)
        lines = [line for line in run.stdout.splitlines() if "overhead" in line or "p50" in line]
        print("| submit-example overhead (benchmarks/annotation.py) | see below | | | p50 <= 10 ms | |")
        for line in lines:
            print(f"    {line.strip()}")
    else:
        print("| submit-example overhead over the bare predictor | run benchmarks/annotation.py (or --with-submit) | | | p50 <= 10 ms | |")
    print("| first `make run` until the home page answers | measured by the fast-first-start work (issue 16 item 4) | | | <= 60 s | |")
    print(f"\n(settings: DEBUG={settings.DEBUG}, CONN_MAX_AGE={connection.settings_dict['CONN_MAX_AGE']})")


if __name__ == "__main__":
    main()
