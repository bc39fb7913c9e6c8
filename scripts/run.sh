#!/usr/bin/env bash
# `make run`: bring the whole platform up on this machine and keep it up until Ctrl-C.
#
# Migrates, collects static files, seeds the four tasks (with their seed dev and test sets) and
# the demo users, queues the training of the default target models (first run only), then
# starts the web server (gunicorn) and the RQ workers and prints the URLs and the logins. Pages
# answer within seconds: a worker trains the models in the background (the write page says
# "model in training" until the model in the loop is ready), another evaluates each as soon as it
# is trained, and each task's leaderboard fills by itself within minutes.
# Ctrl-C (or SIGTERM, or SIGHUP) stops every process it started gracefully within seconds (the web
# workers finish their requests; an RQ worker finishes its current job, or, in a training, stops it
# between two batches and queues it again for the next start), and the embedded Redis if it started
# it, prints "Stopped." and exits 0; it exits 1 if a server stopped on its own. A clean stop prints
# "Stopping the web server and the worker(s)..." then "Stopped." and nothing of its own between
# them; a process that did not stop on the first signal is named on a line of its own ("Cold
# shutdown of what did not stop ...", then "Killing what did not stop ...").
#
# Environment: HOST (127.0.0.1), PORT (8000), WEB_WORKERS (2), WEB_THREADS (4), RQ_WORKERS (1: training
# workers, and as many evaluation workers; one more worker always takes the short jobs),
# plus the platform's own settings (DATABASE_URL, REDIS_URL, ...: docs/operate/configuration.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PY=.venv/bin/python
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
WEB_WORKERS=${WEB_WORKERS:-2}
WEB_THREADS=${WEB_THREADS:-4}
RQ_WORKERS=${RQ_WORKERS:-1}
URL="http://${HOST}:${PORT}"
export DJANGO_SETTINGS_MODULE=dynabench.settings

[ -x "$PY" ] || make install

# Metrics (dynabench/metrics.py): every web process and worker writes its values under
# PROMETHEUS_MULTIPROC_DIR (var/metrics by default) and /metrics adds them up. Emptied at each
# start: the files of an earlier run's processes would otherwise count again.
PROMETHEUS_MULTIPROC_DIR=$(realpath -m "${PROMETHEUS_MULTIPROC_DIR:-${DYNABENCH_VAR_DIR:-var}/metrics}")
export PROMETHEUS_MULTIPROC_DIR
mkdir -p "$PROMETHEUS_MULTIPROC_DIR"
find "$PROMETHEUS_MULTIPROC_DIR" -maxdepth 1 -name '*.db' -delete

embedded_redis() {  # prints "up" when REDIS_URL is unset and the embedded Redis answers
    "$PY" - "$1" <<'PY'
import sys
from django.conf import settings
from dynabench import embedded_redis
if settings.EMBEDDED_REDIS:
    if sys.argv[1] == "stop":
        embedded_redis.stop(settings.EMBEDDED_REDIS_SOCKET)
    elif embedded_redis._answers(settings.EMBEDDED_REDIS_SOCKET):
        print("up")
PY
}
redis_was_up=$(embedded_redis check)

pids=()
stop_asked=""
GRACEFUL_TIMEOUT=10  # seconds gunicorn's workers have to finish the requests they are serving
# Seconds every process has after the first TERM: gunicorn's workers need GRACEFUL_TIMEOUT; an RQ
# worker finishes its job, or its training gives way at the end of the batch under way, which on a
# loaded machine can take much longer than a request.
STOP_TIMEOUT=60
alive() { local p; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && echo "$p"; done; return 0; }
wait_for_exit() {  # up to $1 seconds for every started process to be gone
    local deadline=$((SECONDS + $1))
    while [ -n "$(alive)" ] && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
}
cleanup() {
    local code=$?
    # Ignore further signals while cleaning up: on a TERM, make sends its child a second
    # TERM as it dies, and a second Ctrl-C should not cut the stop short either.
    trap '' INT TERM HUP
    trap - EXIT
    [ -n "$stop_asked" ] && code=0  # an asked-for stop (Ctrl-C, SIGTERM) is a success
    if [ ${#pids[@]} -gt 0 ]; then
        echo "Stopping the web server and the worker(s)..."
        # The servers run in sessions of their own (setsid below), so Ctrl-C reaches this script
        # alone and each server gets the one signal that stops it gracefully: on TERM gunicorn's
        # master lets its workers finish their requests (--graceful-timeout) and RQ's worker
        # finishes its current job (warm shutdown), except a training, which the worker asks to
        # give way (leaderboard/worker.py): it stops between two batches and queues itself again.
        kill -TERM $(alive) 2>/dev/null || true
        wait_for_exit "$STOP_TIMEOUT"
        # A worker still in a long job that cannot give way (an evaluation of a large dataset): a
        # second TERM is RQ's cold shutdown, which ends the job's work horse; the reaper queues that
        # evaluation again on the next start. Said on a line of its own: a clean stop never prints it.
        if [ -n "$(alive)" ]; then
            echo "Cold shutdown of what did not stop within ${STOP_TIMEOUT} s: $(alive)"
            kill -TERM $(alive) 2>/dev/null || true
            wait_for_exit 20
        fi
        if [ -n "$(alive)" ]; then
            echo "Killing what did not stop: $(alive)"
            for p in $(alive); do kill -KILL -- "-$p" 2>/dev/null || true; done
        fi
        wait 2>/dev/null || true
    fi
    if [ -z "$redis_was_up" ]; then embedded_redis stop || true; fi
    echo "Stopped."
    exit "$code"
}
trap cleanup EXIT
# HUP too: a closed terminal (or a lost session) stops the servers as Ctrl-C does, instead of killing
# this script alone and leaving the servers, which run in sessions of their own, serving.
# The handler ignores further stop signals before anything else: make forwards a second TERM as it
# dies, and when that one ran this handler again at the start of cleanup(), its `exit 0` ended the
# script there, leaving the servers running (seen in CI as "the embedded Redis was left running").
on_stop() { trap '' INT TERM HUP; stop_asked=1; exit 0; }
trap on_stop INT TERM HUP

# One Python process for the steps before the server starts: each Django process pays its
# start-up (URL checks import torch through the model registry) once, not four times.
logins_file="$(mktemp)"
"$PY" - "$logins_file" <<'PY'
import sys

import django

django.setup()
from django.core.management import call_command

print("== Migrating the database", flush=True)
call_command("migrate", interactive=False)
call_command("collectstatic", interactive=False, verbosity=0)
print("== Seeding the tasks (with their seed dev and test sets) and the demo users", flush=True)
with open(sys.argv[1], "w", encoding="utf-8") as out:
    call_command("seed", demo=True, stdout=out)
print(open(sys.argv[1], encoding="utf-8").read(), end="", flush=True)
print("== Default target models (the first run queues their training for the worker)", flush=True)
call_command("ensure_default_models")
PY
logins=$(cat "$logins_file")
rm -f "$logins_file"

echo "== Starting the web server ($WEB_WORKERS workers) and the RQ workers ($RQ_WORKERS training, $RQ_WORKERS evaluation, 1 for short jobs)"
# setsid: each server in a session (and process group) of its own, out of reach of the terminal's
# Ctrl-C, which would otherwise hit every process at once (gunicorn's workers as well as its
# master: a quick shutdown that ended in "Worker ... was sent SIGKILL!"); cleanup() stops them.
# Web processes warm the models in the loop as they start, and each model as it becomes ready or
# enters a loop (tasks/loop/warm_up.py; DYNABENCH_WARM_MODELS=0 turns it off), so the first example
# per process does not wait seconds for a model to load; workers load their own.
# ASGI under uvicorn workers (dynabench/asgi.py): async views wait on models without a thread; the
# other views run on WEB_THREADS threads per process. The worker class (dynabench/web_worker.py) turns
# uvicorn's proxy headers off: the client address is the socket's, or what TRUSTED_PROXY_COUNT says
# (dynabench/proxies.py), never an X-Forwarded-For the server believed on its own. No access log of
# gunicorn's: the platform logs one JSON line per request itself (dynabench/request_observer.py).
WEB_THREADS="$WEB_THREADS" DYNABENCH_WARM_MODELS="${DYNABENCH_WARM_MODELS:-1}" setsid .venv/bin/gunicorn \
    dynabench.asgi:application --worker-class dynabench.web_worker.WebWorker \
    --bind "$HOST:$PORT" --workers "$WEB_WORKERS" --timeout 120 \
    --graceful-timeout "$GRACEFUL_TIMEOUT" --no-control-socket &
pids+=($!)
# Three kinds of worker, so that no job waits behind a longer kind: short jobs (`default`:
# notifications, leaderboard rebuilds, the reaper) on a worker of their own that loads no model;
# trainings on RQ_WORKERS workers (which evaluate when nothing is left to train); evaluations on
# RQ_WORKERS more, so on a first run each model is evaluated as soon as it is trained while the next
# one trains, and every task's write page opens as early as it can.
rq_worker() { setsid "$PY" manage.py rqworker --with-scheduler "$@" & pids+=($!); }
rq_worker default
for _ in $(seq "$RQ_WORKERS"); do
    rq_worker training evaluation
    rq_worker evaluation
done

"$PY" - "$URL/healthz" <<'PY' || [ -n "$stop_asked" ] || echo "warning: $URL/healthz did not answer yet; see the logs above"
import signal, sys, time, urllib.request
signal.signal(signal.SIGINT, lambda *_: sys.exit(130))  # Ctrl-C while waiting: no traceback, the script stops
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    try:
        with urllib.request.urlopen(sys.argv[1], timeout=2) as response:
            if response.status == 200:
                sys.exit(0)
    except OSError:
        pass
    time.sleep(0.5)
sys.exit(1)
PY

cat <<BANNER

  Dynabench is running at $URL
  Leaderboard: $URL/tasks/sentiment/leaderboard/ (also nli, qa, hate-speech): each fills by itself
    as the workers train and evaluate the default models (a few minutes on the first run)
  Admin: $URL/admin/    Health: $URL/healthz    API docs: $URL/api/docs/

$logins

  Press Ctrl-C to stop.

BANNER
wait -n "${pids[@]}" || true
[ -n "$stop_asked" ] && exit 0
echo "A process exited on its own; stopping the others."
exit 1
