#!/usr/bin/env bash
# LAN demo on real hosts: three network namespaces on a private bridge (scripts/lan_netns.sh), a
# host in the first announcing its table by mDNS, two joiners in the others finding it by discovery
# (no typed address) and playing to the end with bots; every transcript is then verified.
#
#   sudo scripts/lan_demo.sh [GAME]     GAME: dicebreaker (3 seats; the default when it can be
#                                       played) or trice (host and one joiner)
#
# The host in namespace 1 is multi-homed (eth0 on the bridge, side0 on a network nobody else is on)
# and binds every address with `--lan --interface eth0`: it must announce its eth0 address only.
# Prints the time from the host's start to its table appearing on a joiner's list. Removes every
# namespace, process and file it made, also on failure or Ctrl-C; exits non-zero on any failure.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dicetable="${DICETABLE:-$root/.venv/bin/dicetable}"
netns="$root/scripts/lan_netns.sh"
prefix="dtlan$$"
work="$(mktemp -d /tmp/dicetable-lan.XXXXXX)"
pids=()

fail() { echo "lan demo: FAILED: $*" >&2; for f in "$work"/*.out; do [ -f "$f" ] && sed "s|^|  $(basename "$f" .out): |" "$f" >&2; done; exit 1; }

cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    "$netns" down "$prefix" || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" = 0 ] || { echo "lan demo: needs root to make network namespaces" >&2; exit 77; }
"$netns" up "$prefix" 3 || { echo "lan demo: cannot make network namespaces here" >&2; exit 77; }

game="${1:-}"
if [ -z "$game" ]; then
    if "$dicetable" selfplay dicebreaker --games 1 --seats 3 --bots random,random,random >/dev/null 2>&1; then game=dicebreaker; else game=trice; fi
fi
case "$game" in
    dicebreaker) seats=3 ;;
    trice) seats=2 ;;
    *) echo "lan demo: GAME is dicebreaker or trice, not $game" >&2; exit 2 ;;
esac
joiners=$((seats - 1))

# ns NAME K COMMAND...: run a dicetable command in namespace K with its own profile.
ns() {
    local name=$1 k=$2; shift 2
    DICETABLE_HOME="$work/$name" exec ip netns exec "$prefix-$k" "$dicetable" "$@"
}

start=$(date +%s.%N)
(ns host 1 host "$game" --seats "$seats" --port 0 --bind 0.0.0.0 --lan --interface eth0 \
    --bot random --seed 1 --name Host --transcript "$work/host.dtt" > "$work/host.out" 2>&1) &
pids+=($!)
for j in $(seq 1 "$joiners"); do
    (ns "joiner$j" $((j + 1)) join --lan --game "$game" --timeout 30 --bot random --seed $((j + 1)) \
        --name "Joiner$j" --transcript "$work/joiner$j.dtt" > "$work/joiner$j.out" 2>&1) &
    pids+=($!)
done

# Watch for the first joiner to list the table, then for every player to finish.
first=""
announcing=""
deadline=$((SECONDS + 120))
while :; do
    if [ -z "$announcing" ] && grep -qs "^lan: announcing" "$work/host.out"; then announcing=$(date +%s.%N); fi
    if [ -z "$first" ] && grep -qs "^found: " "$work"/joiner*.out; then first=$(date +%s.%N); fi
    running=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && running=1; done
    [ $running = 1 ] || break
    [ $SECONDS -lt $deadline ] || fail "the game did not end within 120 s"
    sleep 0.02
done
for pid in "${pids[@]}"; do wait "$pid" || fail "a player exited with an error"; done

# The host announced its bridge address only, and the joiners dialled it.
grep -q "^lan: announcing .* on 10.231.0.1\$" "$work/host.out" || fail "the host did not announce exactly 10.231.0.1"
for j in $(seq 1 "$joiners"); do
    line=$(grep -m1 "^found: " "$work/joiner$j.out") || fail "joiner $j did not find the table by discovery"
    case "$line" in *" at 10.231.0.1:"*) ;; *) fail "joiner $j dialled another address: $line" ;; esac
    echo "joiner $j $line"
    grep -q "^result: " "$work/joiner$j.out" || fail "joiner $j did not see the end of the game"
done
grep -q "^result: " "$work/host.out" || fail "the host did not see the end of the game"

for t in "$work"/*.dtt; do
    "$dicetable" verify "$t" >"$work/verify.txt" 2>&1 || fail "$(basename "$t"): $(cat "$work/verify.txt")"
    echo "verified $(basename "$t"): $(cat "$work/verify.txt")"
done
[ -n "$first" ] || fail "no joiner listed the table while the game ran"
result=$(grep -m1 "^result: " "$work/host.out")
seen=$(awk "BEGIN{printf \"%.2f\", $first - $start}")
ready=$(awk "BEGIN{printf \"%.2f\", ${announcing:-$first} - $start}")
echo "lan demo: ok: $game with $seats seats over the namespace LAN, $result"
echo "discovery: table on a joiner's list ${seen} s after the host started (the host began announcing after ${ready} s)"
