#!/usr/bin/env bash
# Two homes behind NAT and a relay on the "internet", all in network namespaces on this machine:
#
#   PFX-wan   the internet: a bridge, and the relay at 203.0.113.1:7070
#   PFX-r1/2  each home's router: 203.0.113.K0 on the internet side, 192.168.1.1 at home (both homes
#             use the same private network, as real ones do); it masquerades its players behind its
#             public address and lets in nothing from outside but answers (no port forwarding)
#   PFX-h1a/b, PFX-h2a/b   two players in each home, 192.168.1.10/.11, routed through their router
#
# It shows a direct join from one home to a table in the other failing, then a 4-seat Dice Breaker
# game (two seats per home) and a fair dice roll joined by short codes through the relay; every
# transcript is verified. Everything it made is removed at the end (also on failure or Ctrl-C), and
# the last line it prints is one summary. Needs root and `ip`; the routers' NAT needs `nft` or
# `iptables` (nftables is installed with apt-get when neither is there). Touches no real interface.
#
#   sudo scripts/internet_demo.sh            NAT as above (exit 77 when it cannot: no nft or iptables
#                                            and none to install, or a kernel without NAT)
#   sudo scripts/internet_demo.sh --routed   for a kernel without NAT: each home gets its own private
#                                            network (192.168.K.0/24), routed without translation and
#                                            without a firewall; the relay path is the same, the
#                                            "direct join blocked" check is skipped (the summary says so)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DT="$ROOT/.venv/bin/dicetable"
PFX="dtnet$$"
WORK=$(mktemp -d)
RELAY_IP=203.0.113.1

MODE=nat
[ "${1:-}" = "--routed" ] && MODE=routed
if [ "$(id -u)" -ne 0 ]; then echo "internet demo: needs root (network namespaces)" >&2; exit 2; fi
command -v ip >/dev/null || { echo "internet demo: needs ip (iproute2)" >&2; exit 2; }
NAT_TOOL=""
if [ "$MODE" = nat ]; then
    if ! command -v nft >/dev/null && ! command -v iptables >/dev/null && command -v apt-get >/dev/null; then
        echo "internet demo: installing nftables for the routers' NAT (apt-get)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nftables >/dev/null 2>&1 \
            || { apt-get update -qq >/dev/null 2>&1 \
                 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nftables >/dev/null 2>&1; } \
            || true
    fi
    if command -v nft >/dev/null; then NAT_TOOL=nft
    elif command -v iptables >/dev/null; then NAT_TOOL=iptables
    else echo "internet demo: the routers' NAT needs nft or iptables, and none could be installed (or run it with --routed)" >&2; exit 77; fi
fi
[ -x "$DT" ] || { echo "internet demo: run scripts/play once first (it makes .venv)" >&2; exit 2; }

cleanup() {
    for ns in $(ip netns list | awk '{print $1}' | grep -E "^$PFX-" || true); do
        for pid in $(ip netns pids "$ns" 2>/dev/null || true); do kill "$pid" 2>/dev/null || true; done
    done
    sleep 0.3
    for ns in $(ip netns list | awk '{print $1}' | grep -E "^$PFX-" || true); do
        for pid in $(ip netns pids "$ns" 2>/dev/null || true); do kill -9 "$pid" 2>/dev/null || true; done
        ip netns del "$ns" 2>/dev/null || true
    done
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

in_ns() { local ns=$1; shift; ip netns exec "$PFX-$ns" env DICETABLE_HOME="$WORK/$ns" "$@"; }

# -- the internet -------------------------------------------------------------------------------
ip netns add "$PFX-wan"
ip -n "$PFX-wan" link set lo up
ip -n "$PFX-wan" link add br0 type bridge
ip -n "$PFX-wan" addr add "$RELAY_IP/24" dev br0
ip -n "$PFX-wan" link set br0 up

nat() {  # masquerade router $1's home behind its public address; let in only answers
    local r=$1
    if [ "$NAT_TOOL" = nft ]; then
        # Chain names that are no nft keywords (`fwd` is one: a chain so named is a syntax error).
        ip netns exec "$r" nft -f - <<'NFT'
table ip demo {
    chain postrouting { type nat hook postrouting priority 100; oifname "wan0" masquerade; }
    chain forward { type filter hook forward priority 0; policy accept;
                iifname "wan0" ct state established,related accept; iifname "wan0" drop; }
}
NFT
    else
        ip netns exec "$r" iptables -t nat -A POSTROUTING -o wan0 -j MASQUERADE
        ip netns exec "$r" iptables -A FORWARD -i wan0 -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT
        ip netns exec "$r" iptables -A FORWARD -i wan0 -j DROP
    fi
}

home() {  # home K: router PFX-rK at 203.0.113.K0, players PFX-hKa and PFX-hKb at home
    local k=$1 r="$PFX-r$1" i=0 who net="192.168.1"
    [ "$MODE" = routed ] && net="192.168.$k"
    ip netns add "$r"
    ip -n "$r" link set lo up
    ip netns exec "$r" sysctl -qw net.ipv4.ip_forward=1
    ip -n "$PFX-wan" link add "w$k" type veth peer name wan0 netns "$r"
    ip -n "$PFX-wan" link set "w$k" master br0
    ip -n "$PFX-wan" link set "w$k" up
    ip -n "$r" addr add "203.0.113.$((k * 10))/24" dev wan0
    ip -n "$r" link set wan0 up
    ip -n "$r" link add lan0 type bridge
    ip -n "$r" addr add "$net.1/24" dev lan0
    ip -n "$r" link set lan0 up
    for who in a b; do
        i=$((i + 1))
        local ns="$PFX-h$k$who"
        ip netns add "$ns"
        ip -n "$ns" link set lo up
        ip -n "$r" link add "l$who" type veth peer name eth0 netns "$ns"
        ip -n "$r" link set "l$who" master lan0
        ip -n "$r" link set "l$who" up
        ip -n "$ns" addr add "$net.$((9 + i))/24" dev eth0
        ip -n "$ns" link set eth0 up
        ip -n "$ns" route add default via "$net.1"
    done
    if [ "$MODE" = nat ]; then
        nat "$r"
    else
        ip -n "$PFX-wan" route add "$net.0/24" via "203.0.113.$((k * 10))"
    fi
}
home 1
home 2

# -- the relay ----------------------------------------------------------------------------------
in_ns wan "$DT" relay --bind "$RELAY_IP" --port 7070 > "$WORK/relay.out" 2>&1 &
for _ in $(seq 50); do grep -q '^relay:' "$WORK/relay.out" 2>/dev/null && break; sleep 0.1; done
RELAY=$(awk '/^relay:/{print $2}' "$WORK/relay.out")
[ -n "$RELAY" ] || { echo "internet demo: the relay did not start: $(cat "$WORK/relay.out")" >&2; exit 1; }
echo "relay: $RELAY"

# -- no way in from outside -----------------------------------------------------------------------
H1A=192.168.1.10
in_ns h1a "$DT" host trice --bind "$H1A" --advertise 203.0.113.10 --port 7000 --bot greedy > "$WORK/direct.out" 2>&1 &
DIRECT=$!
for _ in $(seq 50); do grep -q '^invite:' "$WORK/direct.out" 2>/dev/null && break; sleep 0.1; done
blocked="no"
if ! in_ns h2a "$DT" join "$(awk '/^invite:/{print $2}' "$WORK/direct.out")" --bot greedy --timeout 3 \
        > "$WORK/direct-join.out" 2>&1; then
    blocked="yes"
fi
kill "$DIRECT" 2>/dev/null || true
if [ "$MODE" = routed ]; then
    blocked="skipped (routed, no NAT)"
    echo "direct join from home 2 to home 1: not checked (--routed: no NAT, no firewall)"
else
    echo "direct join from home 2 to a table in home 1 (no port forwarding): blocked=$blocked ($(tail -1 "$WORK/direct-join.out"))"
fi

# -- a 4-seat game through the relay, joined by code ---------------------------------------------------
in_ns h1a "$DT" host dicebreaker --seats 4 --relay "$RELAY" --bot greedy --seed 1 --name ann > "$WORK/h1a.out" 2>&1 &
HOST=$!
for _ in $(seq 100); do grep -q '^code:' "$WORK/h1a.out" 2>/dev/null && break; sleep 0.1; done
CODE=$(awk '/^code:/{print $2}' "$WORK/h1a.out" | tail -1)
[ -n "$CODE" ] || { echo "internet demo: no code from the host: $(cat "$WORK/h1a.out")" >&2; exit 1; }
echo "game code: $CODE"
pids=()
for who in h1b h2a h2b; do
    in_ns "$who" "$DT" join "$CODE" --relay "$RELAY" --bot greedy --seed 2 --name "$who" --timeout 20 > "$WORK/$who.out" 2>&1 &
    pids+=($!)
    sleep 1  # one joiner at a time keeps seat order readable; the code serves them all
done
game_ok=yes
wait "$HOST" || game_ok=no
for pid in "${pids[@]}"; do wait "$pid" || game_ok=no; done
valid=0
results=()
for who in h1a h1b h2a h2b; do
    transcript=$(awk '/^transcript:/{print $2}' "$WORK/$who.out" | tail -1)
    results+=("$(awk -F'result: ' '/^result:/{print $2}' "$WORK/$who.out" | tail -1)")
    if [ -n "$transcript" ] && in_ns "$who" "$DT" verify "$transcript" > "$WORK/$who.verify" 2>&1; then
        valid=$((valid + 1))
    fi
    echo "$who: $(tail -1 "$WORK/$who.verify" 2>/dev/null || echo 'no transcript')"
done
same=$([ "$(printf '%s\n' "${results[@]}" | sort -u | wc -l)" -eq 1 ] && echo yes || echo no)

# -- a fair roll by code ---------------------------------------------------------------------------
in_ns h2a "$DT" roll 3d6 --host --seats 2 --relay "$RELAY" --name bea > "$WORK/roll-host.out" 2>&1 &
ROLL=$!
for _ in $(seq 100); do grep -q '^code:' "$WORK/roll-host.out" 2>/dev/null && break; sleep 0.1; done
ROLL_CODE=$(awk '/^code:/{print $2}' "$WORK/roll-host.out" | tail -1)
roll_ok=no
if in_ns h1b "$DT" roll --join "$ROLL_CODE" --relay "$RELAY" --name cid --timeout 20 > "$WORK/roll-join.out" 2>&1 \
        && wait "$ROLL"; then
    a=$(awk -F'result: ' '/^result:/{print $2}' "$WORK/roll-host.out")
    b=$(awk -F'result: ' '/^result:/{print $2}' "$WORK/roll-join.out")
    ta=$(awk '/^transcript:/{print $2}' "$WORK/roll-host.out")
    tb=$(awk '/^transcript:/{print $2}' "$WORK/roll-join.out")
    if [ -n "$a" ] && [ "$a" = "$b" ] && in_ns h2a "$DT" verify "$ta" >/dev/null && in_ns h1b "$DT" verify "$tb" >/dev/null; then
        roll_ok=yes
    fi
    echo "roll by code $ROLL_CODE: $a (both transcripts verified: $roll_ok)"
fi

status=0
[ "$blocked" != no ] && [ "$game_ok" = yes ] && [ "$valid" -eq 4 ] && [ "$same" = yes ] && [ "$roll_ok" = yes ] || status=1
cleanup
trap - EXIT INT TERM
left=$(ip netns list | grep -c "^$PFX-" || true)
echo "internet demo ($MODE): $([ $status -eq 0 ] && echo passed || echo FAILED): direct join blocked=$blocked; 4-seat game by code through the relay: $valid/4 transcripts valid, same result=$same; fair roll by code: $roll_ok; namespaces left: $left"
exit $status
