#!/usr/bin/env bash
# A private LAN made of network namespaces, for the LAN demo and tests; touches no real interface.
#
#   scripts/lan_netns.sh up PREFIX N     namespaces PREFIX-br (a bridge) and PREFIX-1..N, each with
#                                        eth0 = 10.231.0.<k>/24 on the bridge; PREFIX-1 also has a
#                                        second interface side0 = 10.231.99.1/24 that no peer can
#                                        reach (a multi-homed host)
#   scripts/lan_netns.sh down PREFIX     deletes every namespace named PREFIX-* (and with them their
#                                        veth pairs and the bridge)
#
# Run a command in one: ip netns exec PREFIX-2 COMMAND. Needs root (or CAP_NET_ADMIN + CAP_SYS_ADMIN).
set -euo pipefail

up() {
    local prefix=$1 count=$2 k
    ip netns add "$prefix-br"
    ip -n "$prefix-br" link set lo up
    ip -n "$prefix-br" link add br0 type bridge
    ip -n "$prefix-br" link set br0 up
    for k in $(seq 1 "$count"); do
        ip netns add "$prefix-$k"
        ip -n "$prefix-$k" link set lo up
        # The veth pair is made inside the bridge's namespace: nothing appears in the machine's own.
        ip -n "$prefix-br" link add "v$k" type veth peer name eth0 netns "$prefix-$k"
        ip -n "$prefix-br" link set "v$k" master br0
        ip -n "$prefix-br" link set "v$k" up
        ip -n "$prefix-$k" addr add "10.231.0.$k/24" dev eth0
        ip -n "$prefix-$k" link set eth0 up
    done
    # side0's other end stays up but off the bridge: a network of its own that no peer is on.
    ip -n "$prefix-br" link add side1 type veth peer name side0 netns "$prefix-1"
    ip -n "$prefix-br" link set side1 up
    ip -n "$prefix-1" addr add 10.231.99.1/24 dev side0
    ip -n "$prefix-1" link set side0 up
}

down() {
    local prefix=$1 ns
    for ns in $(ip netns list | awk '{print $1}' | grep -E "^${prefix}-(br|[0-9]+)\$" || true); do
        # Processes still inside would keep the namespace alive: end them first (only these).
        for pid in $(ip netns pids "$ns" 2>/dev/null || true); do kill "$pid" 2>/dev/null || true; done
        ip netns del "$ns" 2>/dev/null || true
    done
}

case "${1:-}" in
    up) up "$2" "$3" ;;
    down) down "$2" ;;
    *) echo "usage: $0 up PREFIX N | down PREFIX" >&2; exit 2 ;;
esac
