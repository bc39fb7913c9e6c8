"""Benchmark of the AI validator's voting job: ``.venv/bin/python benchmarks/judge.py``.

Starts the tests' scripted stand-in judge (``tests/judge_server.py``: an OpenAI-compatible
``/v1/chat/completions`` that answers a verdict as JSON, no model) in its own process, once per answer
delay, and prints side by side, per delay:

- a bare concurrent ``httpx`` client (a thread pool of ``--concurrency``, keep-alive) posting the same
  request bodies the judge sends (the kind's ``judge_messages`` for real DynaSent round 1 sentences);
  best of a pass before and one after the job;
- the whole job ``validation.judge.judge_examples`` on as many fresh examples: the kind writes each
  request, every call passes the gate (purpose ``judge``: consent, the round's budget reserved and given
  back per call, the audit rows), the endpoint's concurrency limit (``max_concurrency`` =
  ``--concurrency``), each answer parsed and stored as an ``AIVote``.

Goal: job >= 0.9x bare. A delay of 0 measures the platform's own cost per call; a provider's latency
(``--delays``, default ``0,0.05`` seconds) is what a judge meets in practice. Runs on a throw-away test
database. Options: ``--examples N`` (default 300), ``--concurrency C`` (8), ``--delays D1,D2``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._stand_in import DYNASENT_DEV as DYNASENT, bare_chat_per_s, set_up_django, start_stand_in, stop_scratch_redis  # noqa: E402

VAR = set_up_django()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402


def sentences(n: int, offset: int) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in DYNASENT.read_text().splitlines()]
    rows = [(r["sentence"], r["gold_label"]) for r in rows if r["gold_label"] in ("positive", "negative", "neutral")]
    return rows[offset:offset + n]


def one_delay(delay: float, n: int, concurrency: int, number: int) -> tuple[float, float, float, str]:
    """``(bare before, bare after, job, job summary)`` against a judge answering after ``delay`` seconds."""
    from django.contrib.auth.models import User

    from annotation.models import Example
    from tasks.loop.endpoints.calls import request_body
    from tasks.loop.endpoints.records import create_endpoint_model
    from tasks.models import Round, Task
    from validation.judge import judge_examples
    from validation.judge_models import AIVote, RoundJudge

    process, url = start_stand_in("judge_server.py", "--delay", str(delay))
    settings.DYNABENCH_ENDPOINT_ALLOWLIST = [f"127.0.0.1/32:{urlsplit(url).port}"]
    try:
        task = Task.objects.get(code="sentiment")
        owner = User.objects.get_or_create(username="bench-owner")[0]
        task.owners.add(owner)
        round = Round.objects.create(task=task, number=number, endpoint_call_budget=10 * n)
        context = round.contexts.create(uid="c", data={})
        field = task.config["input_fields"][0]["name"]
        Example.objects.bulk_create([
            Example(round=round, context=context, author=owner, input={field: text}, target={"label": gold},
                    model_output={"label": next(label for label in task.labels if label != gold)}, model_wrong=True)
            for text, gold in sentences(n, offset=number * n)])
        model = create_endpoint_model(task=task, owner=None, name=f"judge-{number}", base_url=url, model_name="judge",
                                      params={"temperature": 0, "max_tokens": 64}, max_concurrency=concurrency,
                                      timeout_s=60)
        examples = list(Example.objects.filter(round=round).select_related("context").order_by("pk"))
        bodies = [request_body(model.endpoint, task.spec.judge_messages(
            task.config, context_data=e.context.data, example_input=e.input, target=e.target, model_output=e.model_output,
            instructions=task.instructions)) for e in examples]
        bare_chat_per_s(url, bodies[:20], concurrency)  # warm the server's first requests
        before = bare_chat_per_s(url, bodies, concurrency)
        # the record set_judge writes, without its queued job (RQ runs synchronously here): the job is timed below
        RoundJudge.objects.create(round=round, model=model, set_by=owner)
        start = time.perf_counter()
        summary = judge_examples(round.pk)
        job = n / (time.perf_counter() - start)
        after = bare_chat_per_s(url, bodies, concurrency)
        assert AIVote.objects.filter(round=round, parsed=True).count() == n, summary
        return before, after, job, summary
    finally:
        process.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--delays", default="0,0.05")
    args = parser.parse_args()
    settings.MEDIA_ROOT = Path(tempfile.mkdtemp(prefix="bench-media-"))
    settings.RQ_QUEUES = {name: {**conf, "ASYNC": False} for name, conf in settings.RQ_QUEUES.items()}
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        from django.core.cache import cache

        from dynabench.roles import ensure_role_groups
        from tasks.data.seed import seed_default_tasks

        cache.clear()
        ensure_role_groups()
        seed_default_tasks()
        print(f"judge job against a bare concurrent client, {args.examples} DynaSent sentences, concurrency "
              f"{args.concurrency}, database {connection.vendor}")
        print(f"{'answer delay':>14} {'bare before':>12} {'bare after':>11} {'judge job':>10} {'job / best bare':>16}")
        for number, delay in enumerate(float(d) for d in args.delays.split(",")):
            before, after, job, summary = one_delay(delay, args.examples, args.concurrency, 10 + number)
            best = max(before, after)
            print(f"{delay * 1000:>11.0f} ms {before:>8.1f} /s {after:>7.1f} /s {job:>6.1f} /s {job / best:>15.2f}x"
                  f"   (goal >= 0.9x)")
            print(f"{'':>14} {summary}")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    try:
        main()
    finally:
        stop_scratch_redis(VAR)
