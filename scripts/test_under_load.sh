#!/usr/bin/env bash
# The whole suite (scripts/test, with any arguments it takes) while two busy-loop processes hold both
# cores, as CI's shared machines and a developer's own running app do: a test that waits by time
# instead of for its event fails here. Prints pytest's counts and the wall time. HOGS=N sets how many
# busy loops (2 by default: one per core here; more for a harsher test).
set -euo pipefail
cd "$(dirname "$0")/.."
hogs=()
stop_hogs() { for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop_hogs EXIT
trap 'exit 130' INT TERM
for _ in $(seq "${HOGS:-2}"); do
    sh -c 'while :; do :; done' &
    hogs+=($!)
done
start=$(date +%s)
status=0
scripts/test "$@" || status=$?
echo "under load (${HOGS:-2} busy loops): exit $status in $(( $(date +%s) - start )) s"
exit "$status"
