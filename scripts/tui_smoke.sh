#!/usr/bin/env bash
# Smoke test of the real app in a real terminal: runs `dicetable play trice --vs random` in a
# detached 80x24 tmux session, plays moves with send-keys, checks what capture-pane shows, resizes
# below 80x24 and back, leaves and quits. Exits non-zero on the first failed check; always removes
# its tmux session. Usage: scripts/tui_smoke.sh  (env NO_COLOR=1 works too)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v tmux >/dev/null || { echo "tui_smoke: tmux is not installed" >&2; exit 2; }

session="dt-smoke-$$"
work="$(mktemp -d)"
cleanup() { tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

fail() {
    echo "tui_smoke: FAILED: $1" >&2
    echo "---- screen ----" >&2
    tmux capture-pane -t "$session" -p >&2 2>/dev/null || true
    exit 1
}
screen() { tmux capture-pane -t "$session" -p; }
# wait_for TEXT [SECONDS]: until the screen shows TEXT
wait_for() {
    local deadline=$((SECONDS + ${2:-40}))
    until screen | grep -qF -- "$1"; do
        ((SECONDS < deadline)) || fail "the screen never showed \"$1\""
        sleep 0.2
    done
}
# wait_gone TEXT: until the screen no longer shows TEXT
wait_gone() {
    local deadline=$((SECONDS + 40))
    while screen | grep -qF -- "$1"; do
        ((SECONDS < deadline)) || fail "the screen kept showing \"$1\""
        sleep 0.2
    done
}
keys() { tmux send-keys -t "$session" "$@"; sleep 0.3; }

tmux new-session -d -s "$session" -x 80 -y 24 \
    "env DICETABLE_HOME='$work' ${NO_COLOR:+NO_COLOR=1} .venv/bin/dicetable play trice --vs random --seed 7 --first me --name Tess; echo \"exit=\$?\" > '$work/exit'"

# The person places first: the bot chooses a die, then it is our turn to place it.
wait_for "Your turn: place"
wait_for "Tess (you)"
wait_for "◆ chosen"   # the bot's choice is marked in the pool
keys b 2 Enter
wait_for "Tess places"
wait_for "Pool: 11 dice"
wait_for "• last"
# Our turn to choose a die for the bot: Enter takes the die under the cursor.
wait_for "Your turn: choose"
keys Enter
wait_for "Tess chooses"
# Help, then the fairness panel.
keys "?"
wait_for "Playing TRICE"
keys x
wait_gone "Playing TRICE"
keys f
wait_for "Local game: dice from this computer"
# Too small a window gets a clear message, and the table comes back when it grows again.
tmux resize-window -t "$session" -x 70 -y 20
wait_for "Please make the window larger"
wait_for "70 × 20"
tmux resize-window -t "$session" -x 80 -y 24
wait_for "Pool:"
# Leave the table for the home screen, and quit from there.
keys Escape
wait_for "Play against a bot"
keys q
deadline=$((SECONDS + 30))
until [[ -s "$work/exit" ]]; do
    ((SECONDS < deadline)) || fail "the app did not quit on q"
    sleep 0.2
done
grep -qx "exit=0" "$work/exit" || fail "the app exited with $(cat "$work/exit")"
echo "tui_smoke: ok"
