#!/usr/bin/env bash
# tcp_stranger.sh PROUSTRUN PROGRAM — strangers on a tcp rail's listening
# port during connection set-up are refused, never taken for a rank, and
# never learn the job's secret; the job runs as if they were not there.
#
# 2 ranks over tcp; rank 0 starts 1.5 s late, so rank 1 listens alone
# meanwhile. Three strangers connect to rank 1's port (they wait in its
# backlog until the handshake): one sends garbage, one a hello with the
# right job id but no secret, one a hello for another job. The job must
# succeed, rank 1 must log the refusals, and the answer to the hello
# without the secret must carry none (16 zero bytes).
set -u
PR=$1 PROG=$2
log=$(mktemp)
trap 'rm -f "$log" "$log".*' EXIT
PROUST_RAILS=tcp timeout 60 "$PR" -n 2 sh -c \
  '[ "$PROUST_RANK" = 0 ] && sleep 1.5; exec "$0" "$@"' "$PROG" > "$log" 2>&1 &
pr=$!
rank1=""
for _ in $(seq 100); do
  for p in $(pgrep -P "$(pgrep -P $pr | head -1)"); do # timeout -> proustrun -> ranks
    tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -qx PROUST_RANK=1 && rank1=$p
  done
  port=""
  [ -n "$rank1" ] && port=$(ss -ltnpH 2>/dev/null | grep "pid=$rank1," | awk '{print $4}' | sed 's/.*://' | head -1)
  [ -n "$port" ] && break
  sleep 0.05
done
[ -n "$port" ] || { echo "FAIL: rank 1's port not found"; cat "$log"; exit 1; }
jobid=$(tr '\0' '\n' < /proc/$rank1/environ | sed -n 's/^PROUST_JOBID=//p')
python3 - "$port" "$jobid" > "$log.py" 2>&1 <<'PY' &
import socket, struct, sys, time
port, jobid = int(sys.argv[1]), sys.argv[2].encode()
MAGIC = 0x5052555354544350
def hello(job, secret=b"\0" * 16):
    return struct.pack("=QIiiI64s16s", MAGIC, 2, 0, 2, 0, job, secret)
socks = []
for payload in (b"GET / HTTP/1.0\r\n\r\n" + b"\x00" * 200, hello(jobid), hello(b"another-job")):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(payload)
    socks.append(s)
# the answer to the hello with the right job id but no secret
s = socks[1]
data = b""
try:
    while len(data) < 104:
        chunk = s.recv(104 - len(data))
        if not chunk:
            break
        data += chunk
except socket.timeout:
    pass
if len(data) == 104:
    secret = data[88:104]
    print("answer secret zero" if secret == b"\0" * 16 else "answer LEAKED the secret")
else:
    print("no answer (%d bytes)" % len(data))
PY
py=$!
wait $pr; rc=$?
wait $py
cat "$log" "$log.py"
[ $rc -eq 0 ] || { echo "FAIL: the job failed ($rc)"; exit 1; }
grep -q "does not know the job's secret" "$log" || { echo "FAIL: no refusal for the secret"; exit 1; }
grep -q "is not ours" "$log" || { echo "FAIL: no refusal for the other job"; exit 1; }
grep -q "LEAKED" "$log.py" && { echo "FAIL: the secret was sent to a stranger"; exit 1; }
echo "ok"
