"""A chat turn the server accepted is stored with its prompt before the model is asked, and is finished
and stored even when its page goes away mid-answer: on the platform as ``make run`` serves it (uvicorn),
a turn whose connection is cut while the endpoint holds its answer ends ``done``, and the page reloaded
at its ``?resume=`` address shows the answer. The endpoint holds every answer until the test releases
it, so each step waits for its own signal, never for a clock."""

import html
import http.client
import json
import re
import socket
from urllib.parse import urlencode, urlsplit

import pytest

from tests.asgi.test_streams_on_one_thread_all_progress_while_pages_answer import DEFINITION, HANG_S, SETUP, _csrf, _log_in
from tests.worker_stack import WorkerStack

PROMPT = "tell me about the museum at night"


@pytest.mark.slow
def test_a_turn_cut_off_mid_answer_is_stored_and_shown_on_reload(tmp_path, stack_template, endpoint_server):
    stack = WorkerStack(tmp_path / "stack", stack_template, DYNABENCH_ENDPOINT_ALLOWLIST=f"127.0.0.1/32:{endpoint_server.port}",
                        ANNOTATION_SUBMISSIONS_PER_MINUTE="0")
    try:
        code = stack.json(f"DEFINITION = {str(DEFINITION)!r}\nURL = {endpoint_server.url!r}\nHANG_S = {HANG_S}\n" + SETUP)["code"]
        base = stack.asgi(threads=1, timeout=HANG_S)
        session = _log_in(base, code)
        page = session.get(f"{base}/tasks/{code}/chat/?mode=conversation").text
        state, csrf = re.search(r'name="state" value="([^"]+)"', page).group(1), _csrf(page)
        endpoint_server.stall()

        parts = urlsplit(base)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=HANG_S)
        connection.request("POST", f"/tasks/{code}/chat/turn", body=urlencode({"state": state, "prompt": PROMPT, "csrfmiddlewaretoken": csrf}),
                           headers={"Accept": "text/event-stream", "Content-Type": "application/x-www-form-urlencoded",
                                    "Referer": base + "/", "X-CSRFToken": csrf,
                                    "Cookie": "; ".join(f"{c.name}={c.value}" for c in session.cookies)})
        stack.wait_for(lambda: len(endpoint_server.requests) >= 1, timeout=HANG_S, what="the turn to reach the endpoint")
        assert stack.query("SELECT prompt, status FROM annotation_chatturn") == [(PROMPT, "running")]  # stored before the answer
        connection.sock.shutdown(socket.SHUT_RDWR)  # the page goes away mid-answer
        connection.close()

        endpoint_server.release()
        stack.wait_for(lambda: stack.query("SELECT status FROM annotation_chatturn") == [("done",)], timeout=HANG_S,
                       what="the turn to be stored as done")
        reloaded = session.get(f"{base}/tasks/{code}/chat/", params={"resume": state}).text
        assert PROMPT in reloaded and "got no answer" not in reloaded
        (stored,) = json.loads(stack.query("SELECT answers FROM annotation_chatturn")[0][0])
        assert html.escape(stored["content"].strip()[:12]) in reloaded
    finally:
        endpoint_server.release()
        stack.stop()
