#!/usr/bin/env bash
# The same tests under two CPython builds, side by side: why the Makefile makes the venv with the
# system's /usr/bin/python3.11 (Debian's: profile-guided optimisation and LTO, libpython linked into
# the executable) rather than the python3 first on PATH (pyenv's here: neither, a shared libpython).
#
#   benchmarks/interpreters.sh [PYTHON_A [PYTHON_B]]    # default: python3 and /usr/bin/python3.11
#   FULL=1 ROUNDS=2 benchmarks/interpreters.sh         # the whole `make test` instead
#
# Clones the checkout's HEAD twice into a temporary folder and runs `make install PY=<interpreter>`
# in each, so each clone's .venv (and every process the tests start from it, scripts/run.sh's
# included) runs on one interpreter. It compiles each clone's bytecode first (one collection), then
# runs, ROUNDS times (default 2), alternating: serially the tests TESTS names (default
# validation/tests, neither browser nor slow), or with FULL=1 `make test`; on SQLite and the
# embedded Redis. Prints each run's wall seconds and CPU seconds (user + system of the processes it
# waited for), and B/A of the medians.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
a=$(command -v "${1:-python3}")
b=$(command -v "${2:-/usr/bin/python3.11}")
ROUNDS=${ROUNDS:-2}
TESTS=${TESTS:-validation/tests}
FULL=${FULL:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/interpreters-XXXXXX")
trap 'rm -rf "$work"' EXIT
unset DATABASE_URL REDIS_URL
export PYTHONDONTWRITEBYTECODE=

for name in a b; do
    git clone -q "$repo" "$work/$name"
    make -C "$work/$name" install PY="${!name}" >/dev/null 2>&1
    (cd "$work/$name" && .venv/bin/pytest -q -n 3 -k test_hits_are_counted_per_key >/dev/null 2>&1) || true
    echo "$name: ${!name}, Python $("$work/$name/.venv/bin/python" -c 'import sys; print(sys.version.split()[0])')"
done

run() {  # run a|b: prints "wall cpu"
    python3 - "$work/$1" "$TESTS" "$FULL" <<'PY'
import os, subprocess, sys, time
clone, tests, full = sys.argv[1:4]
command = ["make", "test"] if full else [".venv/bin/python", "-m", "pytest", "-q", "-p", "no:randomly", "-m", "not browser and not slow", tests]
start, before = time.monotonic(), os.times()
done = subprocess.run(command, cwd=clone, capture_output=True, text=True)
after = os.times()
if done.returncode:
    sys.exit(done.stdout[-3000:])
print(f"{time.monotonic() - start:.1f} {after.children_user + after.children_system - before.children_user - before.children_system:.1f}")
PY
}

declare -A walls cpus
for round in $(seq "$ROUNDS"); do
    for name in a b; do
        read -r wall cpu < <(run "$name")
        printf 'round %d  %s  %6s s wall  %6s CPU-s\n' "$round" "$name" "$wall" "$cpu"
        walls[$name]+="$wall "
        cpus[$name]+="$cpu "
    done
done
python3 - "${walls[a]}" "${walls[b]}" "${cpus[a]}" "${cpus[b]}" <<'PY'
import statistics, sys
wa, wb, ca, cb = (statistics.median(map(float, s.split())) for s in sys.argv[1:5])
print(f"median wall: a {wa:.1f} s, b {wb:.1f} s, b/a = {wb / wa:.3f}; median CPU: a {ca:.1f} s, b {cb:.1f} s, b/a = {cb / ca:.3f}")
PY
