"""Benchmark of models behind endpoints: ``/work/main/.venv/bin/python benchmarks/endpoints.py``.

Starts the tests' real OpenAI-compatible server (``tests/endpoint_server.py``: a tiny GPT-2 run with
``generate`` behind ``/v1/chat/completions``) in its own process on a free local port, and prints, side
by side in one run against it:

1. Evaluation throughput: items/s of the platform's ``EndpointPredictor`` (what an evaluation run's
   original pass measures: messages from the kind's template, concurrent calls within the endpoint's
   limit, each answer stored in the response cache, the label parsed) against a bare concurrent
   ``httpx`` client sending the same request bodies with the same concurrency (a thread pool; best of
   a pass before and one after). Goal: platform >= 0.9x bare. Then the whole ``evaluate_run`` job
   (original pass plus the robustness and fairness passes, scoring, writes) for reference.
2. The create page's overhead over the endpoint's own latency: an annotator's POST to the create page
   (HTMX, Django's test client, the endpoint model in the loop, a new text each time so nothing comes
   from the cache), minus the latency of the endpoint call the platform recorded on that example.
   Goal: p50 <= 15 ms. Split into the endpoint layer (the page's model-in-the-loop time, from its
   Server-Timing header, minus the call) and the rest, with the same page's work around a tiny local
   classifier beside it for reference.
3. The gate's cost per call (``tasks/loop/gate.py``): the same request through the whole gate (consent
   read, a budgeted round's reservation and give-back, the audit row) against the transport alone,
   interleaved. Goal: at most 2 ms added at p95.

Runs on a throw-away test database. Options: ``--items N`` (default 200), ``--concurrency C`` (4),
``--submissions N`` (60), ``--gate-calls N`` (300 each way).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from urllib.parse import urlsplit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._stand_in import DYNASENT_DEV as DYNASENT, bare_chat_per_s, set_up_django, start_stand_in, stop_scratch_redis  # noqa: E402

VAR = set_up_django()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402


def texts(n: int, offset: int = 0) -> list[str]:
    rows = [json.loads(line)["sentence"] for line in DYNASENT.read_text().splitlines()[offset:offset + n]]
    return rows or [f"the food was great number {i}" for i in range(offset, offset + n)]


def figure_1(url: str, n_items: int, concurrency: int) -> None:
    from leaderboard.jobs import evaluate_model, evaluate_run
    from leaderboard.models import EvaluationRun
    from tasks.loop.endpoints.calls import request_body
    from tasks.loop.endpoints.records import create_endpoint_model
    from tasks.loop import gate
    from tasks.loop.registry import get_predictor
    from tasks.models import Dataset, DatasetItem, Purpose, Task

    task = Task.objects.get(code="sentiment")
    params = {"temperature": 0, "max_tokens": 4, "seed": 1}

    def fresh_model(name):
        return create_endpoint_model(task=task, owner=None, name=name, base_url=url, model_name="tiny-gpt2", params=params,
                                     max_concurrency=concurrency, timeout_s=60)

    items = texts(n_items)
    inputs = [{"text": t} for t in items]
    probe = fresh_model("probe")
    predictor = get_predictor(probe)
    bodies = [request_body(predictor.endpoint, task.spec.endpoint_messages(task.config, i, {})) for i in inputs]
    bare_chat_per_s(url, bodies[:20], concurrency)  # warm both sides' first requests
    bare_before = bare_chat_per_s(url, bodies, concurrency)
    platform_model = fresh_model("platform")
    platform = get_predictor(platform_model)
    start = time.perf_counter()
    with gate.admit(platform_model, Purpose.EVALUATION):
        outputs = platform.predict(inputs)
    platform_rate = len(inputs) / (time.perf_counter() - start)
    bare_after = bare_chat_per_s(url, bodies, concurrency)
    bare = max(bare_before, bare_after)
    assert len(outputs) == len(inputs)

    dataset = Dataset.objects.create(task=task, name="dynasent-r1-dev-sample", access="scoring")
    DatasetItem.objects.bulk_create([DatasetItem(dataset=dataset, uid=f"u{i}", input={"text": t}, target={"label": "positive"})
                                     for i, t in enumerate(texts(n_items, offset=n_items))])
    job_model = fresh_model("job")
    evaluate_model(job_model.pk, enqueue=False)
    run = EvaluationRun.objects.get(model=job_model)
    start = time.perf_counter()
    summary = evaluate_run(run.pk)
    wall = time.perf_counter() - start
    run.refresh_from_db()
    print(f"1. evaluation of {len(inputs)} DynaSent sentences through the endpoint, concurrency {concurrency}")
    print(f"   bare concurrent httpx client: {bare_before:,.1f} / {bare_after:,.1f} items/s (best {bare:,.1f})")
    print(f"   platform (EndpointPredictor.predict, cache empty): {platform_rate:,.1f} items/s = {platform_rate / bare:.2f}x bare (goal >= 0.9x)")
    print(f"   evaluate_run job: {summary}")
    print(f"   job's stored throughput (original pass): {run.throughput:,.1f} items/s = {run.throughput / bare:.2f}x bare; "
          f"{run.metrics['inferences']} calls incl. robustness/fairness in {wall:.1f} s; latency p50 "
          f"{run.metrics['latency_ms_p50']:.1f} ms, p95 {run.metrics['latency_ms_p95']:.1f} ms; memory {run.memory_gib} (not measured)")


def _submit(client, task, text: str) -> tuple[float, float]:
    """POST one example on the create page; return the wall ms and the model-in-the-loop ms (Server-Timing)."""
    import re

    page = client.get(f"/tasks/{task.code}/write/")
    token = re.search(r'name="token" value="([^"]+)"', page.content.decode()).group(1)
    start = time.perf_counter()
    response = client.post(f"/tasks/{task.code}/write/submit", {"token": token, "text": text[:500], "label": "positive"},
                           HTTP_HX_REQUEST="true")
    wall_ms = (time.perf_counter() - start) * 1000
    assert response.status_code == 200, response.content.decode()[:500]
    return wall_ms, float(re.search(r"dur=([0-9.]+)", response["Server-Timing"]).group(1))


def figure_2(url: str, n: int) -> None:
    from django.contrib.auth.models import Group, User
    from django.test import Client

    from annotation.models import Example
    from tasks.loop.endpoints.records import create_endpoint_model
    from tasks.models import MLModel, Task
    from tests.tiny_models import build_tiny_classifier

    task = Task.objects.get(code="sentiment")
    model = create_endpoint_model(task=task, owner=None, name="in-loop", base_url=url, model_name="tiny-gpt2",
                                  params={"temperature": 0, "max_tokens": 4, "seed": 1}, timeout_s=60)
    round1 = task.current_round()
    user = User.objects.create_user("bench-annotator", password="x")
    user.groups.add(*Group.objects.filter(name="annotator"))
    client = Client()
    client.force_login(user)
    # Reference: the same page with a tiny local classifier in the loop (its page work without the model).
    local = MLModel.objects.create(task=task, name="tiny-local", path=str(build_tiny_classifier(
        Path(tempfile.mkdtemp(prefix="bench-tiny-")), task.labels)))
    round1.target_models.set([local])
    local_page = []
    for i, text in enumerate(texts(n + 5, offset=4000)):
        wall_ms, model_ms = _submit(client, task, text)
        if i >= 5:
            local_page.append(wall_ms - model_ms)
    round1.target_models.set([model])
    overheads, walls, calls, layer = [], [], [], []
    sentences = texts(n + 5, offset=5000)
    for i, text in enumerate(sentences):
        wall_ms, predict_ms = _submit(client, task, text)
        example = Example.objects.filter(author=user).latest("pk")
        call_ms = example.model_output["endpoint"]["latency_ms"]
        if i >= 5:  # the first few warm caches (templates, statements)
            overheads.append(wall_ms - call_ms)
            walls.append(wall_ms)
            calls.append(call_ms)
            layer.append(predict_ms - call_ms)
    print(f"2. create page with the endpoint in the loop, {len(overheads)} submissions (a new sentence each)")
    print(f"   POST wall p50 {statistics.median(walls):.1f} ms; the endpoint call the platform recorded p50 {statistics.median(calls):.1f} ms")
    print(f"   overhead (wall - call) p50 {statistics.median(overheads):.1f} ms, p90 {sorted(overheads)[int(0.9 * len(overheads))]:.1f} ms "
          f"(goal p50 <= 15 ms)")
    print(f"   of which the endpoint layer (the model-in-the-loop time in Server-Timing - the call): p50 {statistics.median(layer):.1f} ms; "
          f"the rest is the page's own work (checks, insert, tallies, rendering): p50 {statistics.median(overheads) - statistics.median(layer):.1f} ms")
    print(f"   reference: the same page with a tiny local classifier in the loop, wall - model time: p50 {statistics.median(local_page):.1f} ms")


def figure_3(url: str, n: int) -> None:
    """The gate's cost per call: the same request sent through the whole gate (consent read, the round's
    budget reserved and given back, the audit row, the round's usage) and through the transport alone
    (a bare admission: no database), interleaved, each with a new text."""
    from django.contrib.auth.models import User

    from tasks.loop import gate
    from tasks.loop.endpoints.calls import call
    from tasks.loop.endpoints.records import create_endpoint_model
    from tasks.models import Endpoint, Purpose, Task

    task = Task.objects.get(code="sentiment")
    researcher = User.objects.create_user("bench-researcher", password="x")
    model = create_endpoint_model(task=task, owner=researcher, name="gated", base_url=url, model_name="tiny-gpt2",
                                  params={"temperature": 0, "max_tokens": 1, "seed": 1}, timeout_s=60, consents=["loop"])
    endpoint = Endpoint.objects.select_related("model__task").get(model=model)
    round1 = task.current_round()
    round1.endpoint_call_budget, round1.endpoint_token_budget = 10**6, 10**9
    round1.save(update_fields=["endpoint_call_budget", "endpoint_token_budget"])
    annotator = User.objects.get(username="bench-annotator")
    gated, bare = [], []
    for i, text in enumerate(texts(2 * n + 10, offset=6000)):
        messages = task.spec.endpoint_messages(task.config, {"text": f"{i} {text}"}, {})
        start = time.perf_counter()
        if i % 2:
            with gate.admit(model, Purpose.LOOP, user=annotator, round=round1):
                call(endpoint, messages)
            gated.append((time.perf_counter() - start) * 1000)
        else:
            call(endpoint, messages, admission=gate.Admission(model, Purpose.EVALUATION))
            bare.append((time.perf_counter() - start) * 1000)
    gated, bare = sorted(gated[5:]), sorted(bare[5:])

    def p(rows, q):
        return rows[min(len(rows) - 1, int(q * len(rows)))]

    print(f"3. the gate on {len(gated)} calls against {len(bare)} without it (interleaved, max_tokens 1, a budgeted round, "
          f"database {connection.vendor})")
    print(f"   through the gate: p50 {p(gated, 0.5):.2f} ms, p95 {p(gated, 0.95):.2f} ms; transport alone: p50 {p(bare, 0.5):.2f} ms, "
          f"p95 {p(bare, 0.95):.2f} ms")
    print(f"   the gate adds p50 {p(gated, 0.5) - p(bare, 0.5):.2f} ms, p95 {p(gated, 0.95) - p(bare, 0.95):.2f} ms "
          f"(goal p95 <= 2 ms); ratio of p95s {p(gated, 0.95) / p(bare, 0.95):.2f}x")
    from tasks.loop.endpoints.base import Answer

    own = []
    for i in range(n):  # the gate's own steps, no request: consent, reservation, give-back and audit row
        start = time.perf_counter()
        with gate.admit(model, Purpose.LOOP, user=annotator, round=round1) as admission:
            admission.settle(admission.reserve([{"role": "user", "content": f"{i}"}], {"max_tokens": 1}), Answer("x", {}, 1.0, 3, 1))
        own.append((time.perf_counter() - start) * 1000)
    own.sort()
    print(f"   the gate's own steps without a request (admission, reservation, give-back, audit row): p50 {p(own, 0.5):.2f} ms, "
          f"p95 {p(own, 0.95):.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--submissions", type=int, default=60)
    parser.add_argument("--gate-calls", type=int, default=300)
    args = parser.parse_args()
    settings.MEDIA_ROOT = Path(tempfile.mkdtemp(prefix="bench-media-"))
    settings.RQ_QUEUES = {name: {**conf, "ASYNC": False} for name, conf in settings.RQ_QUEUES.items()}
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 0
    process, url = start_stand_in("endpoint_server.py")
    settings.DYNABENCH_ENDPOINT_ALLOWLIST = [f"127.0.0.1/32:{urlsplit(url).port}"]
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        from django.core.cache import cache

        from dynabench.roles import ensure_role_groups
        from tasks.data.seed import seed_default_tasks

        cache.clear()
        ensure_role_groups()
        seed_default_tasks()
        print(f"endpoint server {url} (tiny GPT-2, its own process); database {connection.vendor}")
        figure_1(url, args.items, args.concurrency)
        figure_2(url, args.submissions)
        figure_3(url, args.gate_calls)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        process.kill()


if __name__ == "__main__":
    try:
        main()
    finally:
        stop_scratch_redis(VAR)
