#!/usr/bin/env bash
# Proof of stability: run the whole suite (`make test`) RUNS times in a row while the machine is
# loaded by one CPU-bound process per core, and report each run's time and failures.
#
#   scripts/stress_suite.sh                       # 3 runs of the whole suite under load
#   RUNS=1 scripts/stress_suite.sh tests/test_clock_check_refuses_elapsed_time_verdicts.py
#                                                 # a quick try on a few tests (pytest arguments)
#
# Environment: RUNS (3), LOAD (CPU-bound processes: one per core, `nproc`), TEST_WORKERS (passed
# to make test), and the suite's own (DATABASE_URL, REDIS_URL). The load is `yes > /dev/null`, one
# process per core, started before the first run and stopped at the end (or on Ctrl-C).
# Each run's output is kept in $LOGS (a temporary folder, printed). Exits 1 if any run failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

RUNS=${RUNS:-3}
LOAD=${LOAD:-$(nproc)}
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/stress-suite-XXXXXX")
PYTEST_ARGS="$*"

hogs=()
stop_load() {
    [ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2>/dev/null
    wait "${hogs[@]}" 2>/dev/null
    hogs=()
}
trap 'stop_load' EXIT
trap 'echo "interrupted"; exit 130' INT TERM

echo "== Load: $LOAD CPU-bound processes (yes > /dev/null) on $(nproc) cores"
for _ in $(seq "$LOAD"); do
    yes > /dev/null &
    hogs+=($!)
done

results=()
failed_runs=0
for run in $(seq "$RUNS"); do
    log="$LOGS/run-$run.log"
    echo "== Run $run of $RUNS: make test${PYTEST_ARGS:+ PYTEST_ARGS=\"$PYTEST_ARGS\"} (log: $log)"
    started=$SECONDS
    make test PYTEST_ARGS="$PYTEST_ARGS" > "$log" 2>&1
    code=$?
    took=$((SECONDS - started))
    # pytest's last line, e.g. "1465 passed, 69 skipped in 280.12s (0:04:40)"
    summary=$(grep -E "^(=+ )?[0-9]+ (passed|failed|error)" "$log" | tail -n 1 | sed 's/=//g; s/^ *//; s/ *$//')
    failures=$(echo "$summary" | grep -oE "[0-9]+ (failed|errors?)" | awk '{s += $1} END {print s + 0}')
    if [ "$code" -ne 0 ] && [ "$failures" -eq 0 ]; then failures="?"; fi  # lint or collection stopped it
    [ "$code" -ne 0 ] && failed_runs=$((failed_runs + 1))
    line=$(printf "run %d: %4d s (%d:%02d), exit %d, failures %s — %s" "$run" "$took" $((took / 60)) $((took % 60)) "$code" "$failures" "${summary:-no pytest summary}")
    echo "$line"
    results+=("$line")
    if [ "$code" -ne 0 ]; then
        grep -E "^(FAILED|ERROR) " "$log" | head -n 20
    fi
done
stop_load

echo
echo "== Summary ($RUNS run(s) under a load of $LOAD CPU-bound processes on $(nproc) cores; logs in $LOGS)"
printf '%s\n' "${results[@]}"
if [ "$failed_runs" -gt 0 ]; then
    echo "$failed_runs run(s) failed"
    exit 1
fi
echo "all runs passed"
