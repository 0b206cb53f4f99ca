#!/usr/bin/env bash
# testcluster-slurm.sh CMD... — a real Slurm on the hosts of the cluster
# that scripts/testcluster.sh built (run it inside `testcluster.sh run N`,
# which sets TESTCLUSTER_HOSTS and TESTCLUSTER_AGENT): slurmctld on this
# machine (the head node, 198.18.77.254), one slurmd per host in its
# namespace, no munge (AuthType=auth/none, CredType=cred/none), then CMD
# with SLURM_CONF set (srun, salloc, sbatch work as on a cluster), then
# every job cancelled and every daemon stopped, also when CMD fails.
# Each slurmd gets a TmpFS of its own (the same path, bound to a directory
# per host in a mount namespace): Slurm's PMIx plugin names its directories
# there by job and step only, and the hosts share this machine's file
# system. /tmp stays shared (the programs may live there). Needs Debian's slurm-wlm (exit 77
# without it). Exit status: CMD's.
set -u
here=$(cd "$(dirname "$0")" && pwd)
for b in slurmctld slurmd srun sinfo; do
  command -v $b > /dev/null || { echo "testcluster-slurm: no $b (apt-get install slurm-wlm)"; exit 77; }
done
: "${TESTCLUSTER_HOSTS:?run inside scripts/testcluster.sh run N}"
D=$(mktemp -d /var/tmp/proust-slurm.XXXXXX)
IFS=, read -r -a hosts <<< "$TESTCLUSTER_HOSTS"
n=${#hosts[@]}
ctl=0
stop() {
  [ -n "${SLURM_CONF:-}" ] && timeout 10 scancel --quiet --user=root 2>/dev/null
  [ -f "$D/slurmctld.pid" ] && kill "$(cat "$D/slurmctld.pid")" 2>/dev/null
  for h in "${hosts[@]}"; do
    [ -f "$D/slurmd.$h.pid" ] && kill "$(cat "$D/slurmd.$h.pid")" 2>/dev/null
  done
  sleep 0.5
  pkill -9 -f "slurm(ctld|d|stepd).*$D" 2>/dev/null
  [ "${KEEP_SLURM_LOGS:-0}" = 1 ] && { echo "slurm files in $D"; return; }
  rm -rf "$D"
}
trap stop EXIT
trap 'exit 130' INT TERM
cpus=$(nproc)
cat > "$D/slurm.conf.in" <<EOC
ClusterName=prousttest
SlurmctldHost=$(hostname)(${TESTCLUSTER_HEAD:-198.18.77.254})
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
SlurmctldPort=@CTLPORT@
SlurmdPort=$((10000 + RANDOM % 6000))
MessageTimeout=5
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/%n
TmpFS=$D/tmpfs
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.%n.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/linear
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=5
NodeName=h[1-$n] NodeAddr=198.18.77.[1-$n] CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOC
# slurmd loads a cgroup plugin even with proctrack/linuxproc: name the one
# this machine has (its autodetection fails on a container's tmpfs)
case $(stat -fc %T /sys/fs/cgroup 2>/dev/null) in
  cgroup2fs) cg=cgroup/v2 ;;
  tmpfs) cg=cgroup/v1 ;;
  *) cg=autodetect ;;
esac
printf 'CgroupPlugin=%s\nCgroupMountpoint=/sys/fs/cgroup\nIgnoreSystemd=yes\n' "$cg" > "$D/cgroup.conf"
mkdir -p "$D/state" "$D/tmpfs"
export SLURM_CONF=$D/slurm.conf
# A free port for slurmctld in this machine's namespace, below the
# ephemeral range (other tests' connections take ports there): one that
# another program holds makes slurmctld exit at once, and every client
# then waits on it. Slurmd's port is in each host's own namespace.
free_port() {
  local p
  for _ in $(seq 50); do
    p=$((16000 + RANDOM % 16000))
    ss -Hltn "sport = :$p" 2>/dev/null | grep -q . || { echo $p; return; }
  done
  echo $((16000 + RANDOM % 16000))
}
# Slurm's daemons failing to start here is this machine's limit (no
# cgroups it can use, a host name it cannot resolve...), not Proust's:
# say so with their logs, and skip (77). A port taken between the check
# and the bind: try another.
ctl_up=0
for try in 1 2 3; do
  sed "s/@CTLPORT@/$(free_port)/" "$D/slurm.conf.in" > "$SLURM_CONF"
  if ! slurmctld -f "$SLURM_CONF"; then
    tail -20 "$D/slurmctld.log" 2>/dev/null
    echo "testcluster-slurm: slurmctld cannot run on this machine: skipped"
    exit 77
  fi
  for _ in $(seq 50); do
    timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP' && { ctl_up=1; break; }
    [ -f "$D/slurmctld.pid" ] && ! kill -0 "$(cat "$D/slurmctld.pid")" 2>/dev/null && break
    sleep 0.2
  done
  [ $ctl_up = 1 ] && break
  [ -f "$D/slurmctld.pid" ] && kill "$(cat "$D/slurmctld.pid")" 2>/dev/null
  grep -q 'Address already in use' "$D/slurmctld.log" 2>/dev/null || break
  echo "testcluster-slurm: slurmctld's port was taken, another (try $try)"
  sleep 0.5
  rm -f "$D/slurmctld.pid"
  mv "$D/slurmctld.log" "$D/slurmctld.log.$try"
done
if [ $ctl_up != 1 ]; then
  tail -20 "$D/slurmctld.log" 2>/dev/null
  echo "testcluster-slurm: slurmctld does not answer on this machine: skipped"
  exit 77
fi
for h in "${hosts[@]}"; do
  mkdir -p "$D/spool/$h" "$D/tmp-$h"
  "$TESTCLUSTER_AGENT" "$h" "unshare -m sh -c 'mount --bind $D/tmp-$h $D/tmpfs && exec slurmd -N $h -f $SLURM_CONF'" ||
    { tail "$D"/*.log; echo "testcluster-slurm: slurmd cannot run on $h here: skipped"; exit 77; }
done
for _ in $(seq 100); do # every node idle
  [ "$(timeout 5 sinfo -h -o '%t %D' 2>/dev/null | awk '$1 == "idle" {print $2}')" = "$n" ] && break
  sleep 0.2
done
if [ "$(timeout 5 sinfo -h -o '%t %D' 2>/dev/null | awk '$1 == "idle" {print $2}')" != "$n" ]; then
  sinfo
  tail -5 "$D"/*.log
  # a daemon that could not start here (no usable cgroups in this
  # container, say) is this machine's limit, not Proust's: skip
  if ! [ -f "$D/slurmctld.pid" ] || ! kill -0 "$(cat "$D/slurmctld.pid")" 2>/dev/null; then
    echo "testcluster-slurm: slurmctld cannot run on this machine (see its log above): skipped"
    exit 77
  fi
  for h in "${hosts[@]}"; do
    if ! [ -f "$D/slurmd.$h.pid" ] || ! kill -0 "$(cat "$D/slurmd.$h.pid")" 2>/dev/null; then
      echo "testcluster-slurm: slurmd cannot run on this machine (see its log above): skipped"
      exit 77
    fi
  done
  echo "testcluster-slurm: the nodes did not come up"
  exit 1
fi
echo "testcluster-slurm: slurm up on ${hosts[*]}"
"$@"
