"""Waiting on a model holds no web thread: on the platform as ``make run`` serves it (``dynabench.asgi``
under uvicorn), with one process and ONE thread for the sync views, twenty chat turns stream at
once, all twenty reach the endpoint while a page request answers, and all twenty finish.

A threaded WSGI server with one thread would hold one turn at a time: the endpoint would see one
request, and the page would wait behind it. The endpoint (a real local server) stalls every answer
until the test releases it, so each step waits for its own signal, never for a clock."""

import http.client
import json
import re
import threading
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest
import requests

from tests.worker_stack import WorkerStack

pytestmark = pytest.mark.slow
TURNS = 20
HANG_S = 300  # ceilings that only catch a hang
DEFINITION = Path(__file__).resolve().parents[2] / "tasks" / "data" / "task_definitions" / "adversarial-safety-chat.json"
SETUP = """
import json
from django.contrib.auth.models import Group, User
from dynabench.roles import ensure_role_groups
from tasks.data.seed import create_task
from tasks.loop.endpoints.records import create_endpoint_model

ensure_role_groups()
task, _ = create_task(json.loads(open(DEFINITION).read()))
model = create_endpoint_model(task=task, owner=None, name="stalled", base_url=URL, model_name="tiny-gpt2",
                              params={"temperature": 0, "max_tokens": 4}, timeout_s=HANG_S, max_concurrency=32)
task.current_round().target_models.set([model])
User.objects.create_user(username="writer", password="a-long-password-1").groups.add(Group.objects.get(name="annotator"))
print(json.dumps({"code": task.code}))
"""


def _csrf(html: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)


def _log_in(base: str, code: str) -> requests.Session:
    session = requests.Session()
    page = session.get(f"{base}/accounts/login/")
    done = session.post(f"{base}/accounts/login/", data={"username": "writer", "password": "a-long-password-1",
                                                          "csrfmiddlewaretoken": _csrf(page.text)},
                        headers={"Referer": f"{base}/accounts/login/"}, allow_redirects=False)
    assert done.status_code == 302, done.text[:300]
    page = session.get(f"{base}/tasks/{code}/chat/?mode=conversation")
    session.post(f"{base}/tasks/{code}/write/warning", data={"csrfmiddlewaretoken": _csrf(page.text)},
                 headers={"Referer": base + "/"})
    return session


def _turn(base: str, session: requests.Session, code: str, state: str, csrf: str, bodies: list) -> None:
    parts = urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=HANG_S)
    body = urlencode({"state": state, "prompt": "tell me about the museum", "csrfmiddlewaretoken": csrf})
    connection.request("POST", f"/tasks/{code}/chat/turn", body=body, headers={
        "Accept": "text/event-stream", "Content-Type": "application/x-www-form-urlencoded", "Referer": base + "/",
        "X-CSRFToken": csrf, "Cookie": "; ".join(f"{c.name}={c.value}" for c in session.cookies)})
    response = connection.getresponse()
    bodies.append((response.status, response.read().decode()))
    connection.close()


def _problems(bodies: list) -> list:
    """What the turns that did not reach the model said: each one's status and its ``problem`` events."""
    return [(status, re.findall(r'^data: (\{"message".*?)(?:, "html"|$)', body, re.M)[:2] or body[:300])
            for status, body in bodies if status != 200 or "event: problem" in body]


def test_twenty_streams_on_one_thread_all_reach_the_model_while_a_page_answers(tmp_path, stack_template, endpoint_server):
    stack = WorkerStack(tmp_path / "stack", stack_template, DYNABENCH_ENDPOINT_ALLOWLIST=f"127.0.0.1/32:{endpoint_server.port}",
                        ANNOTATION_SUBMISSIONS_PER_MINUTE="0")
    try:
        code = stack.json(f"DEFINITION = {str(DEFINITION)!r}\nURL = {endpoint_server.url!r}\nHANG_S = {HANG_S}\n" + SETUP)["code"]
        base = stack.asgi(threads=1, timeout=HANG_S)
        session = _log_in(base, code)
        conversations = []
        for _ in range(TURNS):
            page = session.get(f"{base}/tasks/{code}/chat/?mode=conversation").text
            conversations.append((re.search(r'name="state" value="([^"]+)"', page).group(1), _csrf(page)))
        endpoint_server.stall()
        bodies: list = []
        threads = [threading.Thread(target=_turn, args=(base, session, code, state, csrf, bodies)) for state, csrf in conversations]
        for thread in threads:
            thread.start()
        # Every turn is waiting on the model at once (one sync thread would let one through)...
        stack.wait_for(lambda: len(endpoint_server.requests) >= TURNS or len(bodies) == TURNS, timeout=HANG_S,
                       what="all turns to reach the endpoint")
        assert len(endpoint_server.requests) >= TURNS, _problems(bodies)  # turns that ended early say why
        # ...and a page on the one sync thread answers meanwhile.
        home = requests.get(base + "/", timeout=HANG_S)
        assert home.status_code == 200 and len(endpoint_server.answered) == 0
        endpoint_server.release()
        for thread in threads:
            thread.join(HANG_S)
        assert len(bodies) == TURNS
        for status, body in bodies:
            events = [line[len("event: "):] for line in body.splitlines() if line.startswith("event: ")]
            assert status == 200 and events[0] == "token" and events[-1] == "done", body[:300]
            done = json.loads(body.strip().split("\n")[-1][len("data: "):])
            assert 'name="state"' in done["html"]
        assert len(endpoint_server.answered) == TURNS
    finally:
        endpoint_server.release()
        stack.stop()
