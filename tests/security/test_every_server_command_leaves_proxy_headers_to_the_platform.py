"""Every command that starts the web server (``make run``'s script, the other scripts, the operators'
docs, the benchmarks, the test stacks) starts it with uvicorn's proxy headers off: gunicorn with
``dynabench.web_worker.WebWorker``, uvicorn on its own with ``--no-proxy-headers``. Uvicorn's
defaults would rewrite the client address from ``X-Forwarded-For`` before the platform's own rule
(``TRUSTED_PROXY_COUNT``) sees it."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLACES = [*ROOT.glob("scripts/*.sh"), *ROOT.glob("docs/**/*.md"), *ROOT.glob("benchmarks/*.py"), ROOT / "README.md",
          ROOT / "Makefile", ROOT / "tests" / "worker_stack.py", *ROOT.glob("cycle/*.py")]
WORKER_CLASS = re.compile(r"--worker-class[\"',\s]+([\w.]+)")
UVICORN_CLI = re.compile(r"uvicorn[\"',\s]+dynabench\.asgi:application")


def _commands():
    for path in PLACES:
        if path.exists():
            yield path.relative_to(ROOT), path.read_text(encoding="utf-8")


def test_gunicorn_serves_the_platform_with_the_worker_that_ignores_proxy_headers():
    found = {}
    for path, text in _commands():
        for match in WORKER_CLASS.finditer(text):
            if "asgi" in text[max(0, match.start() - 300):match.end() + 300]:
                found.setdefault(str(path), set()).add(match.group(1))
    assert found["scripts/run.sh"] == {"dynabench.web_worker.WebWorker"}
    # gthread serves dynabench.wsgi (gunicorn's WSGI workers never rewrite the client address); the test
    # stack's gunicorn reads run.sh's worker class (RUN_SH_WORKER_CLASS).
    allowed = {"dynabench.web_worker.WebWorker", "gthread", "RUN_SH_WORKER_CLASS"}
    assert {path for path, classes in found.items() if classes - allowed} == set()


def test_uvicorn_on_its_own_is_told_not_to_read_proxy_headers():
    for path, text in _commands():
        for match in UVICORN_CLI.finditer(text):
            assert "--no-proxy-headers" in text[match.start():match.end() + 400], f"{path}: uvicorn without --no-proxy-headers"


def test_the_worker_class_turns_proxy_headers_off():
    from dynabench.web_worker import WebWorker

    assert WebWorker.CONFIG_KWARGS["proxy_headers"] is False
