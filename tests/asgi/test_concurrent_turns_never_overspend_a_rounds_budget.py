"""A round's endpoint budget is reserved before each request, atomically: with k calls left, 4k chat
turns sent at once to the platform as ``make run`` serves it (``dynabench.asgi`` under uvicorn) let
exactly k requests reach the endpoint; the others are told the budget is spent. The same holds for
concurrent callers on PostgreSQL (the suite's database when ``DATABASE_URL`` names one).

The endpoint (a real local server) holds every answer until the test releases it, so the k calls are
in flight while the others ask: each step waits for its own signal, never for a clock."""

import json
import threading

import pytest
from django.db import connection

from tests.asgi.test_streams_on_one_thread_all_progress_while_pages_answer import DEFINITION, HANG_S, _csrf, _log_in, _turn
from tests.worker_stack import WorkerStack

K = 3
SETUP = """
import json
from django.contrib.auth.models import Group, User
from dynabench.roles import ensure_role_groups
from tasks.data.seed import create_task
from tasks.loop.endpoints.records import create_endpoint_model

ensure_role_groups()
task, _ = create_task(json.loads(open(DEFINITION).read()))
model = create_endpoint_model(task=task, owner=None, name="budgeted", base_url=URL, model_name="tiny-gpt2",
                              params={"temperature": 0, "max_tokens": 4}, timeout_s=HANG_S, max_concurrency=32)
round = task.current_round()
round.target_models.set([model])
round.endpoint_call_budget = K
round.save(update_fields=["endpoint_call_budget"])
User.objects.create_user(username="writer", password="a-long-password-1").groups.add(Group.objects.get(name="annotator"))
print(json.dumps({"code": task.code}))
"""


@pytest.mark.slow
def test_4k_concurrent_turns_on_the_asgi_server_send_exactly_k_requests(tmp_path, stack_template, endpoint_server):
    import re

    stack = WorkerStack(tmp_path / "stack", stack_template, DYNABENCH_ENDPOINT_ALLOWLIST=f"127.0.0.1/32:{endpoint_server.port}",
                        ANNOTATION_SUBMISSIONS_PER_MINUTE="0")
    try:
        code = stack.json(f"DEFINITION = {str(DEFINITION)!r}\nURL = {endpoint_server.url!r}\nHANG_S = {HANG_S}\nK = {K}\n" + SETUP)["code"]
        base = stack.asgi(threads=4, timeout=HANG_S)
        session = _log_in(base, code)
        conversations = []
        for _ in range(4 * K):
            page = session.get(f"{base}/tasks/{code}/chat/?mode=conversation").text
            conversations.append((re.search(r'name="state" value="([^"]+)"', page).group(1), _csrf(page)))
        endpoint_server.stall()
        bodies: list = []
        threads = [threading.Thread(target=_turn, args=(base, session, code, state, csrf, bodies)) for state, csrf in conversations]
        for thread in threads:
            thread.start()
        # The refused turns answer while the k admitted ones wait on the endpoint.
        stack.wait_for(lambda: len(bodies) >= 3 * K, timeout=HANG_S, what="the turns past the budget to be refused")
        assert len(endpoint_server.requests) == K
        endpoint_server.release()
        for thread in threads:
            thread.join(HANG_S)
        finished = [b for status, b in bodies if status == 200 and "event: done" in b]
        refused = [b for status, b in bodies if "budget" in b and "event: done" not in b]
        assert (len(finished), len(refused)) == (K, 3 * K), [b[-300:] for _, b in bodies]
        assert len(endpoint_server.requests) == K
        spent = stack.query("SELECT calls FROM tasks_roundspend")
        assert spent == [(K,)]
    finally:
        endpoint_server.release()
        stack.stop()


@pytest.mark.django_db(transaction=True)
def test_4k_concurrent_callers_on_postgresql_send_exactly_k_requests(sentiment_task, make_endpoint_model, endpoint_server):
    if connection.vendor != "postgresql":
        pytest.skip("the suite's database is not PostgreSQL (DATABASE_URL); the ASGI test above covers SQLite")
    from django.db import connections

    from dynabench.errors import RuleError
    from tasks.loop import gate
    from tasks.loop.registry import get_predictor
    from tasks.models import Purpose

    model = make_endpoint_model(sentiment_task, name="budgeted")
    round = sentiment_task.current_round()
    round.endpoint_call_budget = K
    round.save(update_fields=["endpoint_call_budget"])
    outcomes, barrier = [], threading.Barrier(4 * K)

    def caller(i):
        try:
            barrier.wait()
            with gate.admit(model, Purpose.LOOP, round=round):
                get_predictor(model).predict([{"text": f"caller {i}"}])
            outcomes.append("answered")
        except RuleError as refused:
            outcomes.append(refused.code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(4 * K)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG_S)
    assert sorted(outcomes) == sorted(["answered"] * K + ["endpoint_budget_spent"] * (3 * K)), json.dumps(outcomes)
    assert len(endpoint_server.requests) == K
