#!/usr/bin/env bash
# What a newcomer waits for: `make test` on a fresh clone (the install it starts included), for two
# commits side by side, so that the machine's speed, which changes from hour to hour here, cancels
# out of the ratio.
#
#   benchmarks/fresh_clone_test.sh BASE [HEAD]     # e.g. benchmarks/fresh_clone_test.sh 262ff6f
#
# For each of PAIRS pairs (default 1) it clones the checkout afresh at BASE and at HEAD (default:
# the checkout's HEAD), BASE first in odd pairs and HEAD first in even ones (so that neither side
# always runs on the machine the other just warmed or left busy), runs `make test` in each on the default platform (SQLite + embedded Redis:
# DATABASE_URL and REDIS_URL are unset) and prints each run's wall time, the suite's own time and
# its result line, then HEAD/BASE per pair and of the totals. Clones and logs go to a temporary folder, printed.
# Issue 27's target: `make test` on a fresh clone in at most 5 minutes on the 2-core machine.
# Exits 1 if any run failed.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 BASE [HEAD]" >&2; exit 2; }
base=$(git -C "$repo" rev-parse --short "$1") || exit 2
head=$(git -C "$repo" rev-parse --short "${2:-HEAD}") || exit 2
PAIRS=${PAIRS:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/fresh-clone-test-XXXXXX")
echo "== fresh clones and logs in $work; base $base, head $head, $PAIRS pair(s), $(nproc) cores"

failed=0
one_run() {  # one_run REV NAME: prints the wall seconds; fails as make test did
    local dir="$work/$2"
    git clone -q "$repo" "$dir" && git -C "$dir" checkout -q "$1" || return 1
    local started=$SECONDS
    (cd "$dir" && env -u DATABASE_URL -u REDIS_URL make test >"$work/$2.log" 2>&1)
    local rc=$? wall=$((SECONDS - started))
    printf '%-10s %-8s %4d s (%d:%02d)  rc %d  %s\n' "$2" "$1" "$wall" $((wall / 60)) $((wall % 60)) "$rc" \
        "$(grep -E '(passed|failed).* in ' "$work/$2.log" | tail -1)" >&2
    rm -rf "$dir"
    echo "$wall"
    return $rc
}

base_total=0 head_total=0
for pair in $(seq "$PAIRS"); do
    if [ $((pair % 2)) -eq 1 ]; then
        b=$(one_run "$base" "base-$pair") || failed=1
        h=$(one_run "$head" "head-$pair") || failed=1
    else
        h=$(one_run "$head" "head-$pair") || failed=1
        b=$(one_run "$base" "base-$pair") || failed=1
    fi
    [ -n "$b" ] && [ -n "$h" ] || continue
    echo "pair $pair: head/base wall = $(python3 -c "print(f'{$h / $b:.3f}')") ($h s / $b s)"
    base_total=$((base_total + b)) head_total=$((head_total + h))
done
[ "$PAIRS" -gt 1 ] && [ "$base_total" -gt 0 ] &&
    echo "all pairs: head/base wall = $(python3 -c "print(f'{$head_total / $base_total:.3f}')") ($head_total s / $base_total s)"
exit $failed
