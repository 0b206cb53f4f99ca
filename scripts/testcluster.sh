#!/usr/bin/env bash
# testcluster.sh — a cluster of N hosts on this one machine, for tests and
# for trying Proust across hosts: each host is a network namespace
# (proust-tc-hI) with one interface, eth0 = 198.18.77.I/24, joined by a veth
# pair to a bridge (proust-tc-br, 198.18.77.254: this machine, the head node
# where launchers run); 198.18.0.0/15 is the range set aside for such test
# networks (RFC 2544), so no traffic leaves the machine. Commands run "on" a
# host through scripts/testcluster-agent (its namespace, its host name hI).
# Needs root and iproute2.
#
#   testcluster.sh up N          build hosts h1..hN (removes an old cluster first)
#   testcluster.sh down          remove every host, its processes, the bridge
#   testcluster.sh run N CMD...  up N, run CMD with TESTCLUSTER_HOSTS (h1,...,hN),
#                                TESTCLUSTER_AGENT and TESTCLUSTER_HEAD set, then
#                                down, also when CMD fails or is interrupted;
#                                CMD's exit status (77: cannot build a cluster here)
set -u
here=$(cd "$(dirname "$0")" && pwd)
BR=proust-tc-br
NET=198.18.77
HEAD=$NET.254

down() {
  local ns link i
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^proust-tc-h'); do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
  done
  # the veth pairs first (a namespace's deletion frees its end later, in
  # the background: a cluster built at once would find the names taken)
  for link in $(ip -o link show 2>/dev/null | sed -n 's/^[0-9]*: \(pt-h[0-9]*\)@.*/\1/p'); do
    ip link del "$link" 2>/dev/null
  done
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^proust-tc-h'); do
    ip netns del "$ns" 2>/dev/null
  done
  ip link del "$BR" 2>/dev/null
  for i in $(seq 50); do # gone for good, within 5 s
    ip -o link show 2>/dev/null | grep -q -e ' pt-h[0-9]*@' -e " $BR:" || return 0
    sleep 0.1
  done
  echo "testcluster: links of the old cluster still there" >&2
  return 1
}

up() {
  local n=$1 i
  if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null || ! command -v unshare >/dev/null; then
    echo "testcluster: needs root, ip (iproute2) and unshare" >&2
    return 77
  fi
  case $n in '' | *[!0-9]*) echo "testcluster: N must be a number" >&2; return 2 ;; esac
  if [ "$n" -lt 1 ] || [ "$n" -gt 200 ]; then
    echo "testcluster: N must be 1-200" >&2
    return 2
  fi
  down || return 1
  if ! ip link add "$BR" type bridge 2>/dev/null; then
    echo "testcluster: cannot create a bridge here" >&2
    return 77
  fi
  ip addr add "$HEAD/24" dev "$BR" && ip link set "$BR" up || return 1
  for i in $(seq "$n"); do
    ip netns add "proust-tc-h$i" &&
      ip link add "pt-h$i" type veth peer name eth0 netns "proust-tc-h$i" &&
      ip link set "pt-h$i" master "$BR" up &&
      ip -n "proust-tc-h$i" addr add "$NET.$i/24" dev eth0 &&
      ip -n "proust-tc-h$i" link set eth0 up &&
      ip -n "proust-tc-h$i" link set lo up || { down; return 1; }
  done
  echo "testcluster: hosts h1..h$n at $NET.1..$NET.$n, head node $HEAD"
}

case ${1:-} in
  up) up "${2:-}" ;;
  down) down ;;
  run)
    n=${2:-}
    shift 2 || { echo "usage: testcluster.sh run N CMD..." >&2; exit 2; }
    trap down EXIT
    trap 'exit 130' INT TERM
    up "$n" || exit $?
    export TESTCLUSTER_HOSTS=$(seq -s, -f 'h%g' "$n")
    export TESTCLUSTER_AGENT=$here/testcluster-agent
    export TESTCLUSTER_HEAD=$HEAD
    "$@"
    ;;
  *)
    echo "usage: testcluster.sh up N | down | run N CMD..." >&2
    exit 2
    ;;
esac
