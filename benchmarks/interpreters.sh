#!/usr/bin/env bash
# The same tests under two CPython builds, side by side: why the Makefile makes the venv with the
# system's /usr/bin/python3.11 (Debian's, built with profile-guided optimisation and LTO) rather than
# the python3 first on PATH (pyenv's here, built without --enable-optimizations).
#
#   benchmarks/interpreters.sh [PYTHON_A [PYTHON_B]]    # default: python3 and /usr/bin/python3.11
#
# Makes a venv per interpreter in a temporary folder (as `make install` does: the requirements
# through uv, with this machine's find-links), runs the tests once in each to compile their bytecode,
# then runs them ROUNDS times (default 2) in each, alternating, serially, on SQLite and the embedded
# Redis. TESTS (default: validation/tests, neither browser nor slow) picks the tests. Prints each
# run's wall and CPU seconds and B/A of the median CPU seconds.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
a=$(command -v "${1:-python3}")
b=$(command -v "${2:-/usr/bin/python3.11}")
ROUNDS=${ROUNDS:-2}
TESTS=${TESTS:-validation/tests}
work=$(mktemp -d "${TMPDIR:-/tmp}/interpreters-XXXXXX")
trap 'rm -rf "$work"' EXIT
find_links=${PIP_FIND_LINKS:-$(python3 -m pip config get global.find-links 2>/dev/null || true)}
cd "$repo"
unset DATABASE_URL REDIS_URL
export PYTHONDONTWRITEBYTECODE=

for name in a b; do
    python=${!name}
    "$python" -m venv --without-pip "$work/$name"
    python3 -m pip --python "$work/$name/bin/python" install -q "uv==$(sed -n 's/^UV_VERSION := //p' Makefile)"
    "$work/$name/bin/uv" pip install -q --python "$work/$name/bin/python" ${find_links:+--find-links "$find_links"} \
        -r requirements-dev.txt -e ./dynabench_client
    echo "$name: $python, $("$work/$name/bin/python" -c 'import sys; print(sys.version.split()[0])')"
    "$work/$name/bin/python" -m pytest -q -p no:randomly -m "not browser and not slow" "$TESTS" >/dev/null 2>&1 || true
done

run() {  # run a|b: prints "wall cpu" of one pytest run (CPU: user + system of the process and its children)
    "$work/$1/bin/python" - "$TESTS" <<'PY'
import os, subprocess, sys, time
start, before = time.monotonic(), os.times()
done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-m", "not browser and not slow", sys.argv[1]],
                      capture_output=True, text=True)
after = os.times()
if done.returncode:
    sys.exit(done.stdout[-2000:])
print(f"{time.monotonic() - start:.1f} {after.children_user + after.children_system - before.children_user - before.children_system:.1f}")
PY
}

declare -A cpus
for round in $(seq "$ROUNDS"); do
    for name in a b; do
        read -r wall cpu < <(run "$name")
        printf 'round %d  %s  %6s s wall  %6s CPU-s\n' "$round" "$name" "$wall" "$cpu"
        cpus[$name]+="$cpu "
    done
done
python3 - "${cpus[a]}" "${cpus[b]}" <<'PY'
import statistics, sys
a, b = (statistics.median(map(float, s.split())) for s in sys.argv[1:3])
print(f"median CPU-s: a {a:.1f}, b {b:.1f}; b/a = {b / a:.3f}")
PY
