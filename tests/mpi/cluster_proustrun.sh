#!/usr/bin/env bash
# cluster_proustrun.sh CASE PROUSTRUN PROGRAM — proustrun across the hosts
# of scripts/testcluster.sh (run inside `testcluster.sh run N`, which sets
# TESTCLUSTER_AGENT and removes the hosts afterwards), cases that need
# more than one command line:
#   stranger  a stranger connects to the front end's port and sends
#             garbage while the job starts: it is refused and logged, the
#             job (PROGRAM 2 on 2 hosts) runs to success
#   link      h2's link goes down in the middle of 64 MiB transfers
#             (PROGRAM = cluster_fail): rank 0 gets an error within 10 s,
#             the job ends with an error, not a hang
#   orphans   the front end is SIGKILLed while the job runs (PROGRAM =
#             cluster_fail link, which never ends by itself): within 10 s
#             no process is left on any host
#   missing   PROGRAM runs on h1, not on h2 (a launch agent that hides it
#             there): the job fails with a message that names h2
set -u
case_=$1 PR=$2 PROG=$3
AGENT=$TESTCLUSTER_AGENT
log=$(mktemp)
trap 'rm -f "$log" "$log.agent"' EXIT
fail() { echo "FAIL: $*"; cat "$log"; exit 1; }

case $case_ in
stranger)
  # the launch agent first knocks on the port named in the agent's command
  cat > "$log.agent" <<EOS
#!/usr/bin/env bash
port=\$(printf '%s\n' "\$@" | sed -n "s/.*--agent '[^']*:\([0-9]*\)'.*/\1/p" | head -1)
[ -n "\$port" ] && { printf 'GET / HTTP/1.0\r\n\r\n' > /dev/tcp/127.0.0.1/\$port; } 2>/dev/null
exec "$AGENT" "\$@"
EOS
  chmod +x "$log.agent"
  timeout 60 "$PR" -H h1,h2 --launch-agent "$log.agent" "$PROG" 2 > "$log" 2>&1 ||
    fail "the job failed (rc $?)"
  grep -q "refused a connection from 127.0.0.1" "$log" || fail "the stranger was not logged"
  grep -q "placement and data right" "$log" || fail "the job did not run"
  ;;
link)
  "$PR" --grace 3 -H h1,h2 --launch-agent "$AGENT" "$PROG" link > "$log" 2>&1 &
  pid=$!
  for _ in $(seq 300); do grep -q "rank 0: round 1 done" "$log" && break; sleep 0.1; done
  grep -q "rank 0: round 1 done" "$log" || { kill -9 $pid; fail "no first round"; }
  ip link set pt-h2 down
  t0=$SECONDS
  ( sleep 30; kill -9 $pid ) > /dev/null 2>&1 &
  watchdog=$!
  wait $pid; rc=$?
  kill $watchdog 2>/dev/null
  [ $rc -ne 0 ] && [ $rc -ne 137 ] || fail "rc $rc (0: no failure seen; 137: hung)"
  grep -q "survivor: error class" "$log" || fail "rank 0 saw no error"
  grep -q "lost the agent on h2" "$log" || fail "the front end did not name h2"
  echo "ended in $((SECONDS - t0)) s"; cat "$log"
  ;;
orphans)
  "$PR" -H h1,h2 --launch-agent "$AGENT" "$PROG" link > "$log" 2>&1 &
  pid=$!
  for _ in $(seq 300); do grep -q "round 1 done" "$log" && break; sleep 0.1; done
  kill -9 $pid
  for _ in $(seq 100); do
    left=$(for h in h1 h2; do ip netns pids proust-tc-$h; done | wc -l)
    [ "$left" -eq 0 ] && { echo "no process left"; exit 0; }
    sleep 0.1
  done
  for h in h1 h2; do ip netns pids proust-tc-$h | xargs -r ps -o pid,args -p; done
  fail "processes left on the hosts 10 s after the front end died"
  ;;
missing)
  # on h2 the program's directory is an empty one (a mount namespace)
  dir=$(dirname "$PROG")
  cat > "$log.agent" <<EOS
#!/usr/bin/env bash
host=\$1; shift
if [ "\$host" = h2 ]; then
  exec "$AGENT" "\$host" "unshare -m sh -c 'mount -t tmpfs none $dir && exec \$*'"
fi
exec "$AGENT" "\$host" "\$@"
EOS
  chmod +x "$log.agent"
  timeout 60 "$PR" -H h1,h2 --launch-agent "$log.agent" "$PROG" 2 > "$log" 2>&1
  rc=$?
  [ $rc -eq 127 ] || fail "rc $rc, expected 127"
  grep -q "proustrun (on h2): cannot run" "$log" || fail "no message naming h2"
  cat "$log"
  ;;
*) echo "unknown case $case_"; exit 2 ;;
esac
