"""A stand-in OpenAI-compatible judge (``/v1/chat/completions``) that answers from a script: the request's
messages are searched for a ``[key]`` marker (``KEY``) and the verdict scripted for that key is sent back
as the JSON a judge is asked for (``tasks/kinds/judge.py``). No model runs, so thousands of verdicts take
seconds; ``delay_s`` makes every answer wait (a slow provider, for ``benchmarks/judge.py``) and
``default_verdict`` answers requests the script does not name. ``python tests/judge_server.py [--delay S]
[--default-verdict V] [--port N]`` serves in its own process and prints ``listening <url>``.

``start_judge_server()`` starts one in a daemon thread; ``server.answers = {key: "correct", ...}`` scripts
it, ``server.requests`` counts what it was sent, ``server.stop()`` ends it.
"""

from __future__ import annotations

import json
import re
import threading
import time
import sys
from http.server import ThreadingHTTPServer
from pathlib import Path

if not __package__:  # run as a script: the repository's root on the path for ``tests``
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.endpoint_server import QuietHandler  # noqa: E402

#: The marker an example's text carries so that the script knows which example a request is about.
KEY = re.compile(r"\[(k[0-9]+-[0-9]+)\]")


class _Handler(QuietHandler):
    server: "JudgeServer"

    def do_POST(self):
        server = self.server
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        text = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
        match = KEY.search(text)
        with server.lock:
            server.requests += 1
        if server.delay_s:
            time.sleep(server.delay_s)  # clock-ok: a stand-in for a slow provider, not a verdict
        verdict = server.answers.get(match.group(1)) if match else None
        verdict = verdict or server.default_verdict
        content = (json.dumps({"verdict": verdict, "reason": f"scripted {verdict}", "confidence": 0.9})
                   if verdict else "I cannot tell.")
        self._send(200, {"id": "judge", "object": "chat.completion", "created": 0, "model": body.get("model", "judge"),
                         "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
                         "usage": {"prompt_tokens": len(text) // 4, "completion_tokens": 12,
                                   "total_tokens": len(text) // 4 + 12}})


class JudgeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int = 0):
        super().__init__(("127.0.0.1", port), _Handler)
        self.lock = threading.Lock()
        self.answers: dict[str, str] = {}
        self.requests = 0
        self.delay_s = 0.0
        self.default_verdict = ""  # the verdict for a request the script does not name ("": an unreadable answer)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def stop(self):
        self.shutdown()
        self.server_close()


def start_judge_server(port: int = 0) -> JudgeServer:
    """Start a ``JudgeServer`` in a daemon thread; return it."""
    server = JudgeServer(port)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


def main() -> None:
    """Serve until killed; print ``listening <url>`` once ready."""
    import argparse

    parser = argparse.ArgumentParser(description="A scripted stand-in judge endpoint.")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--default-verdict", default="correct")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = JudgeServer(args.port)
    server.delay_s, server.default_verdict = args.delay, args.default_verdict
    print(f"listening {server.url}", flush=True)
    server.serve_forever(poll_interval=0.05)


if __name__ == "__main__":
    main()
