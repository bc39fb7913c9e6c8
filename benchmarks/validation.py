"""Benchmark the review queue and consensus on PostgreSQL.

    /work/main/.venv/bin/python benchmarks/validation.py [--database-url URL] [--examples 1000000] [--seconds 20]

1. ``next_example_for`` with ``--examples`` examples in one round (bulk-loaded with COPY):
   p50/p95 over repeated claim → validate → claim cycles of one validator, and the first
   claim of fresh validators; side by side, the same queue query with index scans turned
   off, to show what the ``example_review_queue`` index buys. Target: p50 ≤ 5 ms.
   Gold items are mixed in: ``--gold`` (1000) examples of the round are gold items (settled
   verified correct) and the task's ``gold_rate`` is ``--gold-rate`` (0.1), so about one
   hand-out in ten is a gold item and its answer a gold check; p50/p95 are also given for
   the two kinds apart.
   The loaded round is kept in the database and reused by the next run with the same
   ``--examples`` (its validations are reset), so only the first run pays the load.
2. ``--validators`` (16) threads, each with its own database connection, validate a round
   of ``--concurrent-examples`` examples for ``--seconds`` seconds. Checked afterwards:
   no example handed to two validators at once, no validation lost or duplicated
   (counted in the database), every example's state and counters equal to a recomputation
   from scratch with ``calculations.derive_state``, and the round's tallies equal to a recount.
"""

import argparse
import json
import os
import random
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/h_validation")
parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/5")
parser.add_argument("--examples", type=int, default=1_000_000)
parser.add_argument("--samples", type=int, default=400)
parser.add_argument("--validators", type=int, default=16)
parser.add_argument("--seconds", type=float, default=20.0)
parser.add_argument("--concurrent-examples", type=int, default=450)
parser.add_argument("--gold", type=int, default=1000)
parser.add_argument("--gold-rate", type=float, default=0.1)
args = parser.parse_args()

from benchmarks._postgres import create_database  # noqa: E402

create_database(args.database_url)
os.environ["DATABASE_URL"] = args.database_url
os.environ["REDIS_URL"] = args.redis_url
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dynabench.settings")
os.environ.setdefault("DB_CONN_MAX_AGE", "0")

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import Group, User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, connections, transaction  # noqa: E402
from django.utils import timezone  # noqa: E402

from annotation import counters  # noqa: E402
from annotation.models import Example  # noqa: E402
from dynabench.errors import RuleError  # noqa: E402
from tasks.models import Context, Round, Task  # noqa: E402
from tasks.data.seed import load_task_definition  # noqa: E402
from validation.calculations import ConsensusPolicy, derive_state, tally  # noqa: E402
from validation.models import GoldAssignment, GoldItem, Validation, ValidatorStanding  # noqa: E402
from validation.queue import next_example_for, review_queue  # noqa: E402
from validation.services import record_validation  # noqa: E402

BENCH_TASK = "bench-validation"


def ms(seconds):
    return seconds * 1000


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def setup_task():
    if not connection.vendor == "postgresql":
        sys.exit("This benchmark needs PostgreSQL (--database-url postgres://...).")
    call_command("migrate", verbosity=0)
    Group.objects.get_or_create(name="validator")
    spec = load_task_definition("sentiment")
    task, _ = Task.objects.get_or_create(code=BENCH_TASK, defaults={"name": "Benchmark", "kind": spec["kind"], "config": spec["config"]})
    task.config = {**task.config, "gold_rate": args.gold_rate, "gold_accuracy_threshold": 0.7, "gold_min_answers": 5}
    task.save()
    return task


def add_gold(round, n):
    """Make ``n`` examples spread over ``round`` gold items with the verdict ``correct``
    (settled verified correct, as if an owner had decided them)."""
    step = max(1, args.examples // max(n, 1))
    ids = list(Example.objects.filter(round=round).order_by("pk").values_list("pk", flat=True)[::step][:n])
    Example.objects.filter(pk__in=ids).update(validation_state="verified_correct")
    GoldItem.objects.bulk_create([GoldItem(round=round, example_id=pk, verdict="correct") for pk in ids], batch_size=1000)
    with connection.cursor() as cur:
        cur.execute("ANALYZE validation_golditem")
    return len(ids)


def wipe_gold(round):
    GoldAssignment.objects.filter(gold_item__round=round).delete()
    GoldItem.objects.filter(round=round).delete()
    ValidatorStanding.objects.filter(task=round.task).delete()


def wipe_round(round):
    wipe_gold(round)
    with connection.cursor() as cur:
        cur.execute("DELETE FROM validation_validation v USING annotation_example e WHERE v.example_id = e.id AND e.round_id = %s", [round.pk])
        cur.execute("DELETE FROM annotation_example WHERE round_id = %s", [round.pk])


def users(prefix, n, group=None):
    names = [f"{prefix}{i:05d}" for i in range(n)]
    existing = set(User.objects.filter(username__in=names).values_list("username", flat=True))
    User.objects.bulk_create([User(username=u, password="!") for u in names if u not in existing], batch_size=2000)
    people = list(User.objects.filter(username__in=names).order_by("username"))
    if group:
        Group.objects.get(name=group).user_set.add(*people)
    return people


def load_examples(round, n, authors, *, fooling_share=0.35, seed=1):
    """COPY ``n`` examples into ``round``: 35% fooling, created over the last 30 days."""
    context = Context.objects.get_or_create(round=round, uid="bench", defaults={"data": {"prompt": "A prompt."}})[0]
    rng = random.Random(seed)
    start = timezone.now() - timezone.timedelta(days=30)
    cols = ("round_id, context_id, author_id, input, target, model_output, model_wrong, metadata, tag, retracted, flagged, "
            "split, created_at, validation_state, validation_count, correct_count, incorrect_count, flagged_count, submission_key")
    output_wrong = json.dumps({"label": "negative", "probs": {"positive": 0.2, "negative": 0.7, "neutral": 0.1}})
    output_right = json.dumps({"label": "positive", "probs": {"positive": 0.7, "negative": 0.2, "neutral": 0.1}})
    target = json.dumps({"label": "positive"})
    t0 = time.perf_counter()
    with connection.cursor() as cur:
        with cur.connection.cursor().copy(f"COPY annotation_example ({cols}) FROM STDIN") as copy:
            for i in range(n):
                wrong = rng.random() < fooling_share
                created = start + timezone.timedelta(seconds=i * 30 * 86400 / max(n, 1))
                copy.write_row((
                    round.pk, context.pk, authors[i % len(authors)].pk,
                    json.dumps({"prompt": "A prompt.", "text": f"Example sentence number {i}, written to fool the model."}),
                    target, output_wrong if wrong else output_right, wrong, "{}", "", False, False, "", created,
                    "pending", 0, 0, 0, 0, "",
                ))
        cur.execute("ANALYZE annotation_example")
    counters.recount_rounds([round.pk])  # COPY bypassed the per-example counting
    return time.perf_counter() - t0


def part_one(task):
    print(f"== 1. next example with {args.examples:,} examples in the round ==")
    round = Round.objects.get_or_create(task=task, number=1)[0]
    authors = users("bench-author-", 1000)
    have = Example.objects.filter(round=round).count()
    if have != args.examples:
        wipe_round(round)
        print(f"loading {args.examples:,} examples with COPY ...", flush=True)
        took = load_examples(round, args.examples, authors)
        print(f"loaded in {took:.1f} s ({args.examples / took:,.0f} rows/s)")
    else:
        print(f"reusing the {have:,} examples already loaded")
    wipe_gold(round)
    Validation.objects.filter(example__round=round).delete()
    Example.objects.filter(round=round).exclude(validation_count=0, validation_state="pending", leased_to=None).update(
        validation_count=0, correct_count=0, incorrect_count=0, flagged_count=0, validation_state="pending", leased_to=None, leased_until=None
    )
    gold = set()
    if args.gold:
        print(f"gold items: {add_gold(round, args.gold):,} in the round, gold_rate {args.gold_rate:g}")
        gold = set(GoldItem.objects.filter(round=round).values_list("example_id", flat=True))
    [me] = users("bench-solo-", 1, group="validator")
    times, record_times, kinds = [], [], []
    for _ in range(args.samples):
        t0 = time.perf_counter()
        example = next_example_for(validator=me, round=round)
        times.append(time.perf_counter() - t0)
        kinds.append(example.pk in gold)
        t0 = time.perf_counter()
        record_validation(example=example, validator=me, label="correct")
        record_times.append(time.perf_counter() - t0)
    fresh = users("bench-fresh-", 50, group="validator")
    first_claims = []
    for person in fresh:
        t0 = time.perf_counter()
        next_example_for(validator=person, round=round)
        first_claims.append(time.perf_counter() - t0)
    Example.objects.filter(round=round, leased_to__in=fresh).update(leased_to=None, leased_until=None)

    queue = review_queue(validator=me, round=round, model_wrong=True)
    sql, params = queue[:1].query.sql_with_params()
    indexed, unindexed = [], []
    with connection.cursor() as cur:
        for _ in range(20):
            t0 = time.perf_counter(); cur.execute(sql, params); cur.fetchall(); indexed.append(time.perf_counter() - t0)
        cur.execute("EXPLAIN " + sql, params)
        plan = [row[0] for row in cur.fetchall()]
        with transaction.atomic():
            cur.execute("SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off")
            for _ in range(3):
                t0 = time.perf_counter(); cur.execute(sql, params); cur.fetchall(); unindexed.append(time.perf_counter() - t0)
    p50, p95 = ms(statistics.median(times)), ms(pct(times, 95))
    print(f"next_example_for (claim after each validation, {args.samples} samples): p50 {p50:.2f} ms, p95 {p95:.2f} ms "
          f"-> p50 / 5 ms target = {p50 / 5:.2f}  {'PASS' if p50 <= 5 else 'FAIL'}")
    gold_times = [t for t, g in zip(times, kinds) if g]
    plain_times = [t for t, g in zip(times, kinds) if not g]
    checks = Validation.objects.filter(validator=me, gold_check=True).count()
    if gold_times:
        print(f"  of which gold items served: {len(gold_times)} (p50 {ms(statistics.median(gold_times)):.2f} ms, p95 {ms(pct(gold_times, 95)):.2f} ms); "
              f"ordinary examples: {len(plain_times)} (p50 {ms(statistics.median(plain_times)):.2f} ms); gold checks recorded: {checks}")
    print(f"first claim of {len(fresh)} fresh validators: p50 {ms(statistics.median(first_claims)):.2f} ms, p95 {ms(pct(first_claims, 95)):.2f} ms")
    print(f"record_validation: p50 {ms(statistics.median(record_times)):.2f} ms, p95 {ms(pct(record_times, 95)):.2f} ms")
    print(f"queue query alone: with index p50 {ms(statistics.median(indexed)):.3f} ms; index scans off p50 "
          f"{ms(statistics.median(unindexed)):.1f} ms; ratio {statistics.median(unindexed) / statistics.median(indexed):,.0f}x")
    print("plan: " + " | ".join(line.strip() for line in plan[:4]))


def part_two(task):
    print(f"\n== 2. {args.validators} concurrent validators for {args.seconds:g} s ==")
    round = Round.objects.get_or_create(task=task, number=2)[0]
    wipe_round(round)
    crowd = users("bench-crowd-", args.validators, group="validator")
    others = users("bench-writer-", 20)
    load_examples(round, args.concurrent_examples, others + crowd, fooling_share=1.0, seed=2)
    needed = ConsensusPolicy.from_config(task.config)

    in_hand, lock = {}, threading.Lock()
    double_handed, recorded, refused, errors = [], [], [], []
    stop = time.monotonic() + args.seconds

    def work(person, seed):
        rng = random.Random(seed)
        try:
            while time.monotonic() < stop:
                example = next_example_for(validator=person, round=round)
                if example is None:
                    break
                with lock:
                    holder = in_hand.get(example.pk)
                    if holder is not None and holder != person.pk:
                        double_handed.append((example.pk, holder, person.pk))
                    in_hand[example.pk] = person.pk
                label = rng.choices(["correct", "incorrect", "flagged"], [0.75, 0.18, 0.07])[0]
                try:
                    record_validation(example=example, validator=person, label=label, expected_state="pending",
                                      metadata={"flag_reason": "benchmark"} if label == "flagged" else None)
                    with lock:
                        recorded.append((example.pk, person.pk, label))
                except RuleError as exc:
                    with lock:
                        refused.append(exc.code)
                finally:
                    with lock:
                        if in_hand.get(example.pk) == person.pk:
                            del in_hand[example.pk]
        except Exception as exc:  # report, do not hide
            errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(p, i)) for i, p in enumerate(crowd)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0

    stored = set(Validation.objects.filter(example__round=round).values_list("example_id", "validator_id"))
    mine = {(e, v) for e, v, _ in recorded}
    lost = len(mine - stored)
    extra = len(stored - mine)
    duplicates = len(recorded) - len(mine)
    mismatched = 0
    votes = {}
    for example_id, label, mode in Validation.objects.filter(example__round=round, counts=True).order_by("example_id", "id").values_list("example_id", "label", "mode"):
        votes.setdefault(example_id, []).append((label, mode))
    columns = ("validation_state", "validation_count", "correct_count", "incorrect_count", "flagged_count")
    for pk, *stored_cols in Example.objects.filter(round=round).values_list("pk", *columns):
        found = votes.get(pk, [])
        counts = tally(label for label, _ in found)
        if list(stored_cols) != [derive_state(found, needed), *(counts[c] for c in columns[1:])]:
            mismatched += 1
    own = Validation.objects.filter(example__round=round, example__author=django.db.models.F("validator")).count()
    settled = Example.objects.filter(round=round).exclude(validation_state="pending").count()
    print(f"{len(recorded)} validations in {elapsed:.1f} s ({len(recorded) / elapsed:.0f}/s), {settled} examples settled, "
          f"{len(refused)} refused ({', '.join(sorted(set(refused))) or 'none'}), thread errors: {len(errors)} {errors[:2]}")
    print(f"handed to two validators at once: {len(double_handed)}")
    print(f"validations recorded {len(recorded)} / in the database {len(stored)}: lost {lost}, unexpected {extra}, duplicated {duplicates}")
    print(f"own examples validated: {own}")
    print(f"examples whose state or counters differ from a recomputation: {mismatched} of {args.concurrent_examples}")
    print(f"round tally rows that differ from a recount (round, authors, hours, vote buckets): {counters.recount_rounds([round.pk], fix=False)}")
    ok = not (double_handed or lost or extra or duplicates or mismatched or errors or own)
    print("PASS" if ok else "FAIL")
    return ok


if __name__ == "__main__":
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    task = setup_task()
    part_one(task)
    ok = part_two(task)
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    sys.exit(0 if ok else 1)
