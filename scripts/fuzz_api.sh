#!/usr/bin/env bash
# Fuzz the REST API of a running instance with schemathesis, as an admin, for a bounded time.
#
#   scripts/fuzz_api.sh URL [SECONDS]
#
# URL is the instance's base URL (http://127.0.0.1:8000); SECONDS bounds the fuzzing (default 150,
# the whole call is killed at SECONDS + 60). It creates (or reuses) an API token for the `admin`
# user of `manage.py seed --demo` in the database the environment points at (DATABASE_URL or
# DYNABENCH_VAR_DIR, as for the instance), then runs every operation of /api/schema/ through
# schemathesis' examples, coverage and fuzzing phases, checking one thing: no answer is a 5xx.
# Exits non-zero when schemathesis found a server error (or could not run). Schemathesis generates
# from the schema, so it rarely sends what the schema forbids on purpose: NUL and lone surrogates in
# strings, integers of 2**100 or 4,001 digits, lists nested 70 deep. The test
# tests/api/test_schemathesis.py::test_out_of_bounds_input_on_every_operation_is_never_a_server_error
# sends those through every operation (body, query and path) against a live server.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

base=${1:?usage: scripts/fuzz_api.sh URL [SECONDS]}
seconds=${2:-150}

token=$(.venv/bin/python manage.py drf_create_token admin | awk '{print $3}')
[ -n "$token" ] || { echo "could not create an API token for admin"; exit 1; }

# The schema is fetched once beforehand: generating it can take longer than schemathesis waits.
schema=$(mktemp --suffix=.yaml)
trap 'rm -f "$schema"' EXIT
curl -sf --max-time 120 -o "$schema" "$base/api/schema/" || { echo "could not fetch $base/api/schema/"; exit 1; }

# One worker: schemathesis' workers are threads of one process, and CPython 3.11's ast.parse keeps
# its recursion depth in state the threads share, so two threads parsing at once (hypothesis reads
# the source of schemathesis' filter lambdas) can fail the run with "SystemError: AST constructor
# recursion depth mismatch" (python/cpython#106905).
timeout $((seconds + 60)) .venv/bin/schemathesis run "$schema" \
    --url "$base" \
    --header "Authorization: Token $token" \
    --checks not_a_server_error \
    --phases examples,coverage,fuzzing \
    --max-time "$seconds" \
    --workers 1 \
    --suppress-health-check all \
    --warnings off \
    --no-color
