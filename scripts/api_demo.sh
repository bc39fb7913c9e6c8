#!/usr/bin/env bash
# The API's done-when check in one command: a fresh server (own var dir, embedded Redis),
# one RQ worker, then benchmarks/api_client_demo.py in a fresh Python process with only the
# client and a token. Stops what it started. Env: PY (.venv/bin/python), PORT (8765),
# DEMO_VAR_DIR (a new temporary folder), DEMO_SETUP_ARGS (e.g. --tiny).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=${PY:-.venv/bin/python}
PORT=${PORT:-8765}
created_var=""
if [ -z "${DEMO_VAR_DIR:-}" ]; then DEMO_VAR_DIR=$(mktemp -d /tmp/dynabench-api-demo.XXXXXX); created_var=1; fi
export DYNABENCH_VAR_DIR=$DEMO_VAR_DIR
export DJANGO_SETTINGS_MODULE=dynabench.settings DEBUG=0 ALLOWED_HOSTS=127.0.0.1
unset REDIS_URL DATABASE_URL

pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    # The embedded Redis that Django started for this var dir, then the var dir itself if we made it.
    "$PY" -c "from dynabench.embedded_redis import stop; from django.conf import settings; stop(settings.EMBEDDED_REDIS_SOCKET)" 2>/dev/null || true
    if [ -n "$created_var" ]; then rm -rf "$DYNABENCH_VAR_DIR"; fi
}
trap cleanup EXIT
echo "== setting up a server in $DYNABENCH_VAR_DIR"
setup=$("$PY" scripts/api_demo_setup.py ${DEMO_SETUP_ARGS:-})
eval "$setup"
"$PY" manage.py collectstatic --noinput -v0
WEB_THREADS=4 "$(dirname "$PY")/gunicorn" dynabench.asgi:application --worker-class dynabench.web_worker.WebWorker \
    --bind "127.0.0.1:$PORT" --workers 1 --timeout 300 --no-control-socket --log-level warning &
pids+=($!)
"$PY" manage.py rqworker default evaluation training >"$DYNABENCH_VAR_DIR/worker.log" 2>&1 &
pids+=($!)
for _ in $(seq 120); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.5; done

echo "== the client demo (fresh process, client + token only)"
DYNABENCH_URL="http://127.0.0.1:$PORT" DYNABENCH_API_KEY="$DYNABENCH_API_KEY" DEMO_MODEL_DIR="$DEMO_MODEL_DIR" \
    "$PY" benchmarks/api_client_demo.py
