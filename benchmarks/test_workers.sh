#!/usr/bin/env bash
# How many pytest workers `make test` should run: the suite with A workers, then with B, in turn,
# so that the machine's speed, which changes from hour to hour here, cancels out of each ratio.
#
#   benchmarks/test_workers.sh [A [B]]          # default: 2 against 3 (the default on 2 cores)
#   PAIRS=3 benchmarks/test_workers.sh 2 3      # issue 27's figures: 0.92, 0.99 and 0.94 (B/A)
#
# Runs `make test TEST_WORKERS=A`, then `=B`, PAIRS times (default 1), on this checkout's installed
# .venv and the default platform (SQLite + embedded Redis: DATABASE_URL and REDIS_URL are unset);
# PYTEST_ARGS pass through (e.g. PYTEST_ARGS=tests/test_layers.py for a quick try). While each run
# lasts it samples /proc/stat every half second and prints how busy the cores were on average:
# what a further worker can fill. Logs go to a temporary folder, printed. Exits 1 if a run failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
A=${1:-2}
B=${2:-3}
PAIRS=${PAIRS:-1}
logs=$(mktemp -d "${TMPDIR:-/tmp}/test-workers-XXXXXX")
echo "== $A against $B workers, $PAIRS pair(s), $(nproc) cores; logs in $logs"

busy() {  # busy SECONDS_FILE: prints the cores' busy share (%) between now and when the file appears
    local a b
    read -ra a < <(head -1 /proc/stat)
    while [ ! -e "$1" ]; do sleep 0.5; done
    read -ra b < <(head -1 /proc/stat)
    local total=0 idle=$(( (b[4] + b[5]) - (a[4] + a[5]) )) i
    for i in 1 2 3 4 5 6 7 8; do total=$((total + b[i] - a[i])); done
    echo $(( 100 * (total - idle) / total ))
}

failed=0
one_run() {  # one_run WORKERS NAME: prints the wall seconds
    local log="$logs/$2.log" done="$logs/$2.done"
    busy "$done" > "$logs/$2.busy" &
    local sampler=$! started=$SECONDS
    env -u DATABASE_URL -u REDIS_URL make test TEST_WORKERS="$1" >"$log" 2>&1
    local rc=$? wall=$((SECONDS - started))
    touch "$done"; wait "$sampler"
    printf '%-8s %d workers %4d s  cores %s %% busy  rc %d  %s\n' "$2" "$1" "$wall" "$(cat "$logs/$2.busy")" "$rc" \
        "$(grep -E '(passed|failed).* in ' "$log" | tail -1)" > "$logs/$2.row"
    echo "$wall"
    return $rc
}

for pair in $(seq "$PAIRS"); do
    a=$(one_run "$A" "a-$pair") || failed=1
    b=$(one_run "$B" "b-$pair") || failed=1
    cat "$logs/a-$pair.row" "$logs/b-$pair.row"
    echo "pair $pair: $B workers / $A workers, wall = $(python3 -c "print(f'{$b / $a:.3f}')") ($b s / $a s)"
done
exit $failed
