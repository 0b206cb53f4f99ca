#!/usr/bin/env bash
# bench/placement/run.sh — NUIOA-aware placement (issue 5): 8-byte latency
# and 1 MiB / 4 MiB bandwidth (bench/mpi/pingpong.c, 2 ranks) of Proust MPI,
# MPICH and Open MPI with the ranks placed three ways:
#
#   good   every rank bound (hwloc-bind, CPU and memory) to the NUMA node(s)
#          nearest the NIC; Proust with PROUST_PLACEMENT=off
#   bad    every rank bound to the NUMA node farthest from the NIC (largest
#          hwloc distance, else another package, else another node);
#          Proust with PROUST_PLACEMENT=off
#   auto   nobody binds by hand (Open MPI --bind-to none, MPICH's hydra and
#          Proust's launcher bind nothing); Proust with PROUST_PLACEMENT=auto
#
#   bash bench/placement/run.sh [prefix]          (default prefix: build/install)
#
# One host (BENCH_HOSTS unset): both ranks here, transports "shm" (each
# MPI's shared memory: the NIC plays no part) and "tcp" (Proust
# PROUST_RAILS=tcp, the peers forced onto TCP, all pinned to the NIC's
# interface when it has an IPv4 address; between two ranks of one host TCP
# goes through the kernel's loopback path, not the NIC's driver). Two hosts
# (BENCH_HOSTS="h1 h2"): one rank on each, transport "net" (each MPI's
# default between hosts); the NUMA nodes are chosen from this host's
# topology, so the hosts should be alike, and the results directory (which
# holds the binaries) must be on a file system both hosts see.
# Every job runs BENCH_REPS times, interleaved (rep 1 of everything, then
# rep 2, ...), so that a change in load hits every cell alike; then
# bench/placement/report.py prints medians and ratios (summary.txt).
#
# Environment:
#   BENCH_REPS=5           process-level repetitions (1 with BENCH_QUICK)
#   BENCH_QUICK=1          smoke run: few iterations
#   BENCH_HOSTS            two hostnames (space or comma separated): cross-node
#   BENCH_NIC              hwloc OS device of the NIC (eth0, ib0, mlx5_0, ...);
#                          default: the interface of the default route
#   BENCH_CONFIGS          "good bad auto"
#   BENCH_TRANSPORTS       "shm tcp" (one host) or "net" (two hosts)
#   BENCH_IMPLS            only these implementations (names below)
#   BENCH_PLACEMENT_HINT   PROUST_PLACEMENT_HINT for auto (latency|bandwidth|cores)
#   BENCH_LAT_ARGS, BENCH_BW_ARGS   extra pingpong options, appended
#   BENCH_TIMEOUT=300      seconds allowed for one job
#   BENCH_RESULTS          results root (default bench/results)
#   BENCH_PLAN_ONLY=1      print the placement plan (nodes, reasons) and stop
#   BENCH_TOPOLOGY=x.xml   plan from this hwloc XML instead of this machine
#                          (to check the choice of nodes; implies PLAN_ONLY)
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=$(cd "$HERE/.." && pwd)
PREFIX=${1:-$BENCH/../build/install}
PREFIX=$(realpath -m "$PREFIX")

QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then
  REPS=${BENCH_REPS:-1}
  SCALE_LAT="-i 0.02" SCALE_BW="-i 0.05"
else
  REPS=${BENCH_REPS:-5}
  SCALE_LAT="" SCALE_BW=""
fi
# pingpong sizes go by powers of two: bw also measures 2 MiB (not reported)
declare -A ARGS=(
  [lat]="-t lat -m 8 -M 8 $SCALE_LAT ${BENCH_LAT_ARGS:-}"
  [bw]="-t bw -m 1M -M 4M $SCALE_BW ${BENCH_BW_ARGS:-}"
)
JOBS="lat bw"
HOSTS=$(echo "${BENCH_HOSTS:-}" | tr ',' ' ' | xargs)
if [ -n "$HOSTS" ]; then
  MODE=cross-node
  TRANSPORTS=${BENCH_TRANSPORTS:-net}
else
  MODE=one-host
  TRANSPORTS=${BENCH_TRANSPORTS:-shm tcp}
fi
CONFIGS=${BENCH_CONFIGS:-good bad auto}
ONLY=${BENCH_IMPLS:-}
HINT=${BENCH_PLACEMENT_HINT:-}
TIMEOUT=${BENCH_TIMEOUT:-300}
RESULTS=${BENCH_RESULTS:-$BENCH/results}
TOPOLOGY=${BENCH_TOPOLOGY:-}
PLAN_ONLY=${BENCH_PLAN_ONLY:-0}
[ -n "$TOPOLOGY" ] && PLAN_ONLY=1
NP=2

note() { echo "placement: $*" >&2; }

for c in $CONFIGS; do
  case $c in good | bad | auto) ;; *) note "unknown config '$c' (good bad auto)"; exit 2 ;; esac
done
if [ -n "$HOSTS" ] && [ "$(echo "$HOSTS" | wc -w)" != 2 ]; then
  note "BENCH_HOSTS needs two hostnames (got '$HOSTS')"; exit 2
fi
for tool in hwloc-calc hwloc-bind lstopo-no-graphics; do
  command -v $tool > /dev/null || { note "$tool not found (hwloc tools)"; exit 1; }
done

# ---- The implementations: one line each ---------------------------------
# name | kind | compiler wrapper | launcher | shm | tcp | net | host option
#   launcher: without the number of ranks ("-n 2" follows); settings:
#   NAME=value words go into the environment, others to the launcher; in
#   tcp settings @IP@ / @NIC@ become the NIC's IPv4 address / interface
#   (words with them are dropped when it has none). host option: the
#   launcher words that precede "h1,h2" for a cross-node run.
# Open MPI binds each of 2 ranks to a core by default: --bind-to none leaves
# placement to the configuration (hwloc-bind, or nothing for auto), as for
# MPICH's hydra and Proust's launcher, which bind nothing.
PM="$PREFIX/bin/mpiexec"
OMPI="mpiexec.openmpi --allow-run-as-root --oversubscribe --bind-to none"
IMPLS=(
  "proust-mpi|proust|$PREFIX/bin/mpicc|$PM|PROUST_RAILS=self,shm|PROUST_RAILS=tcp PROUST_TCP_ADDR=@IP@|PROUST_RAILS=self,shm,tcp|-host"
  "mpich|peer|mpicc.mpich|mpiexec.mpich||MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self UCX_NET_DEVICES=@NIC@||-hosts"
  "openmpi|peer|mpicc.openmpi|$OMPI||--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include @NIC@||--map-by node --host"
)

unset PROUST_PLACEMENT PROUST_PLACEMENT_HINT

# ---- The placement plan -----------------------------------------------------
TOPO=()
[ -n "$TOPOLOGY" ] && TOPO=(-i "$TOPOLOGY")
hw() { hwloc-calc "${TOPO[@]}" "$@" 2> /dev/null; }

NIC=${BENCH_NIC:-}
NIC_SOURCE=BENCH_NIC
if [ -z "$NIC" ]; then
  NIC=$(awk '$2 == "00000000" { print $1; exit }' /proc/net/route 2> /dev/null)
  NIC_SOURCE="default route"
fi
NUMA_NODES=$(hw --number-of numanode machine:0)
[[ $NUMA_NODES =~ ^[0-9]+$ ]] && [ "$NUMA_NODES" -ge 1 ] || NUMA_NODES=1
ALL_NODES=$(seq -s, 0 $((NUMA_NODES - 1)))

# The NIC's locality: hwloc-calc says "invalid OS device" (and 0x0) when
# hwloc does not see it (a virtual interface, a typo).
NIC_FOUND=no NIC_CPUSET="" NEAR=""
if [ -n "$NIC" ]; then
  NIC_CPUSET=$(hwloc-calc "${TOPO[@]}" "os=$NIC" 2>&1)
  if [[ $NIC_CPUSET != *invalid* ]] && [ "$NIC_CPUSET" != 0x0 ]; then
    NIC_FOUND=yes
    NEAR=$(hw --local-memory "os=$NIC")
    [ -n "$NEAR" ] || NEAR=$(hw --intersect numanode "os=$NIC")
  else
    NIC_CPUSET=""
  fi
fi
[ -n "$NEAR" ] || NEAR=0
GOOD=$NEAR
GOOD_FIRST=${GOOD%%,*}

in_list() { [[ ",$2," == *",$1,"* ]]; }

# Distances from node $1 (logical indexes) as "node distance" lines, from
# the first relative latency matrix between NUMA nodes that lstopo prints.
latency_row() {
  lstopo-no-graphics "${TOPO[@]}" --distances 2> /dev/null | awk -v row="$1" '
    /^Relative latency matrix/ && /NUMANodes/ && /logical/ { if (!done) inm = 1; next }
    inm && $1 == "index" { for (i = 2; i <= NF; i++) col[i] = $i; next }
    inm && $1 == row { for (i = 2; i <= NF; i++) print col[i], $i; done = 1; inm = 0; next }
    inm && $1 !~ /^[0-9]+$/ { inm = 0 }'
}

BAD="" BAD_WHY="" DIST_ROW=""
if [ "$NUMA_NODES" -gt 1 ]; then
  DIST_ROW=$(latency_row "$GOOD_FIRST" | paste -sd' ')
  best=-1
  while read -r node dist; do
    [ -n "$node" ] || continue
    in_list "$node" "$GOOD" && continue
    if [ "$dist" -gt "$best" ]; then best=$dist BAD=$node; fi
  done <<< "$(latency_row "$GOOD_FIRST")"
  [ -n "$BAD" ] && BAD_WHY="largest hwloc distance from node $GOOD_FIRST ($best)"
  if [ -z "$BAD" ]; then # no distances: a node of another package
    locs=""
    for p in $(hw --intersect package "node:$GOOD_FIRST" | tr ',' ' '); do locs+=" ~package:$p"; done
    # shellcheck disable=SC2086
    for node in $(hw --intersect numanode machine:0 $locs | tr ',' ' '); do
      in_list "$node" "$GOOD" || { BAD=$node; BAD_WHY="no distances: a node of another package"; break; }
    done
  fi
  if [ -z "$BAD" ]; then
    for node in ${ALL_NODES//,/ }; do
      in_list "$node" "$GOOD" || { BAD=$node; BAD_WHY="no distances: another node"; break; }
    done
  fi
fi
if [ -z "$BAD" ]; then
  BAD=$GOOD
  if [ "$NUMA_NODES" = 1 ]; then BAD_WHY="one NUMA node: bad = good"
  else BAD_WHY="the NIC is near every NUMA node: bad = good"; fi
fi
if [ "$NUMA_NODES" = 1 ]; then
  EFFECT="none: one NUMA node, good = bad = auto; the run only checks that everything works"
elif [ "$NIC_FOUND" = no ]; then
  EFFECT="unknown: hwloc does not see NIC '$NIC'; good = node(s) $GOOD, bad = node $BAD, neither relative to the NIC"
elif [ "$BAD" = "$GOOD" ]; then
  EFFECT="none: the NIC is near every NUMA node"
else
  EFFECT="expected: NIC $NIC near node(s) $GOOD, far from node $BAD"
fi

# The NIC's IPv4 address pins the tcp transports to its interface.
NIC_IP=""
if [ -n "$NIC" ] && command -v ip > /dev/null; then
  NIC_IP=$(ip -4 -o addr show dev "$NIC" 2> /dev/null | awk '{ split($4, a, "/"); print a[1]; exit }')
fi

# hwloc-bind arguments binding CPU and memory to a node list "1,2"
bind_words() {
  local locs="" n
  for n in ${1//,/ }; do locs+=" node:$n"; done
  echo "hwloc-bind --cpubind$locs --membind$locs --"
}
declare -A WRAP=([good]=$(bind_words "$GOOD") [bad]=$(bind_words "$BAD") [auto]="")
declare -A PPLACE=([good]=off [bad]=off [auto]=auto)

plan() {
  echo "mode: $MODE"
  echo "hosts: ${HOSTS:-$(uname -n)}"
  echo "numa_nodes: $NUMA_NODES"
  echo "nic: ${NIC:-(none)}"
  echo "nic_source: $NIC_SOURCE"
  echo "nic_found: $NIC_FOUND"
  echo "nic_cpuset: ${NIC_CPUSET:-}"
  echo "nic_ipv4: ${NIC_IP:-}"
  echo "near_nodes: $NEAR"
  echo "good_nodes: $GOOD"
  echo "bad_nodes: $BAD"
  echo "bad_reason: $BAD_WHY"
  echo "distances_from_good: ${DIST_ROW:-(none)}"
  echo "effect: $EFFECT"
  echo "topology: ${TOPOLOGY:-this machine}"
  for c in $CONFIGS; do
    echo "config_$c: PROUST_PLACEMENT=${PPLACE[$c]}${WRAP[$c]:+ + ${WRAP[$c]}}"
  done
}
PINFO=$PREFIX/bin/proust-info
if [ "$PLAN_ONLY" = 1 ]; then
  plan
  if [ -x "$PINFO" ]; then # Proust's own decision, for comparison
    echo "proust-info --placement${TOPOLOGY:+ --topology $TOPOLOGY}:"
    env PROUST_PLACEMENT=auto ${HINT:+PROUST_PLACEMENT_HINT=$HINT} \
      "$PINFO" --placement ${TOPOLOGY:+--topology "$TOPOLOGY"} 2>&1 | sed 's/^/  /'
  fi
  exit 0
fi

# ---- Build and check every implementation ---------------------------------
stamp=placement-$(date +%Y%m%d-%H%M%S)
OUT=$RESULTS/$stamp
mkdir -p "$OUT/raw" "$OUT/bin" || { note "cannot create $OUT"; exit 1; }
: > "$OUT/impls.tsv"
: > "$OUT/notes.txt"
skip() { note "$*"; echo "$*" >> "$OUT/notes.txt"; }

declare -A LAUNCH SET_shm SET_tcp SET_net HOSTOPT KIND
ACTIVE=()
for line in "${IMPLS[@]}"; do
  IFS='|' read -r name kind cc launcher shm tcp net hostopt <<< "$line"
  if [ -n "$ONLY" ] && ! [[ " $ONLY " == *" $name "* ]]; then continue; fi
  if ! command -v "${launcher%% *}" > /dev/null 2>&1; then
    skip "skipping $name: launcher ${launcher%% *} not found"; continue
  fi
  if ! command -v "$cc" > /dev/null 2>&1; then
    skip "skipping $name: compiler wrapper $cc not found"; continue
  fi
  bin=$OUT/bin/$name.pingpong
  if ! "$cc" -std=c11 -O2 -g -Wall -Wextra -o "$bin" "$BENCH/mpi/pingpong.c" > "$bin.log" 2>&1; then
    skip "skipping $name: $cc failed on bench/mpi/pingpong.c:"; cat "$bin.log" >&2; continue
  fi
  [ -s "$bin.log" ] && { note "$cc warnings on bench/mpi/pingpong.c:"; cat "$bin.log" >&2; }
  rm -f "$bin.log"
  if [ -n "$HOSTS" ]; then # can this launcher start one rank on each host?
    hl=${HOSTS// /,}
    # shellcheck disable=SC2086
    if ! timeout -k 5 60 $launcher $hostopt "$hl" -n 2 hostname > "$OUT/bin/$name.probe" 2>&1; then
      skip "skipping $name: its launcher cannot start ranks on $hl: $(tail -1 "$OUT/bin/$name.probe")"
      continue
    fi
  fi
  KIND[$name]=$kind; LAUNCH[$name]=$launcher; HOSTOPT[$name]=$hostopt
  SET_shm[$name]=$shm; SET_tcp[$name]=$tcp; SET_net[$name]=$net
  ACTIVE+=("$name")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$kind" "$launcher" "$shm" "$tcp" "$net" "$cc" >> "$OUT/impls.tsv"
done
if [ ${#ACTIVE[@]} -eq 0 ]; then note "nothing to run"; rm -rf "$OUT"; exit 1; fi

# Does this Proust know PROUST_PLACEMENT? (proust-info lists every variable)
KNOWN=unknown
if [ -x "$PINFO" ]; then
  if "$PINFO" 2> /dev/null | grep -q '^ *PROUST_PLACEMENT='; then KNOWN=yes; else KNOWN=no; fi
  { echo "\$ PROUST_PLACEMENT=auto${HINT:+ PROUST_PLACEMENT_HINT=$HINT} proust-info --placement"
    env PROUST_PLACEMENT=auto ${HINT:+PROUST_PLACEMENT_HINT=$HINT} "$PINFO" --placement 2>&1
    echo "(exit status $?)"; } > "$OUT/proust-placement.txt"
fi
if [ "$KNOWN" = no ] && [[ " ${ACTIVE[*]} " == *" proust-mpi "* ]]; then
  skip "this Proust build does not know PROUST_PLACEMENT (proust-info does not list it):" \
       "its auto config binds nothing, like off; rerun with a build that has it"
fi

{ plan; echo "proust_placement_known: $KNOWN"; echo "hint: ${HINT:-(default)}"; } > "$OUT/placement.txt"
{
  echo "date: $(date -Is)"
  echo "host: $(uname -n) $(uname -sr)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') x $(nproc)"
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "git: $(git -C "$BENCH/.." describe --always --dirty 2> /dev/null || echo unknown)"
  echo "prefix: $PREFIX"
  echo "reps: $REPS quick: $QUICK ranks: $NP mode: $MODE transports: $TRANSPORTS configs: $CONFIGS"
  for j in $JOBS; do echo "args $j: ${ARGS[$j]}"; done
  echo "hwloc: $(hwloc-calc --version 2> /dev/null)"
  command -v mpichversion > /dev/null && echo "mpich: $(mpichversion 2> /dev/null | head -3 | tr -s '\t ' ' ' | paste -sd';')"
  command -v ompi_info > /dev/null && echo "openmpi: $(ompi_info --version 2> /dev/null | head -1)"
} > "$OUT/meta.txt"
echo "results: $OUT"
echo "implementations: ${ACTIVE[*]}"
sed 's/^/  /' "$OUT/placement.txt"

# ---- Run ------------------------------------------------------------------
# settings impl transport: the words, placeholders filled in (or dropped)
settings() {
  local var="SET_$2[$1]" w out=()
  for w in ${!var}; do
    if [[ $w == *@IP@* || $w == *@NIC@* ]]; then
      [ -n "$NIC_IP" ] || continue
      w=${w//@IP@/$NIC_IP}; w=${w//@NIC@/$NIC}
    fi
    out+=("$w")
  done
  echo "${out[*]}"
}

# run_one impl transport config job rep
run_one() {
  local impl=$1 tr=$2 cfg=$3 job=$4 rep=$5
  local envs=() largs=() hargs=() w
  for w in $(settings "$impl" "$tr"); do
    if [[ $w =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; then envs+=("$w"); else largs+=("$w"); fi
  done
  if [ "${KIND[$impl]}" = proust ]; then
    envs+=("PROUST_PLACEMENT=${PPLACE[$cfg]}")
    [ "$cfg" = auto ] && [ -n "$HINT" ] && envs+=("PROUST_PLACEMENT_HINT=$HINT")
  fi
  # shellcheck disable=SC2206
  [ -n "$HOSTS" ] && hargs=(${HOSTOPT[$impl]} "${HOSTS// /,}")
  local dir=$OUT/raw/$tr/$cfg/$impl
  mkdir -p "$dir"
  local out=$dir/$job.$rep.txt err=$dir/$job.$rep.err
  # shellcheck disable=SC2086
  local cmd=(env "${envs[@]}" timeout -k 10 "$TIMEOUT" ${LAUNCH[$impl]} "${hargs[@]}" -n "$NP"
             "${largs[@]}" ${WRAP[$cfg]} "$OUT/bin/$impl.pingpong" ${ARGS[$job]})
  echo "# cmd: ${cmd[*]}" | sed "s|$OUT/bin/|<bin>/|" > "$out"
  echo "# impl=$impl transport=$tr config=$cfg job=$job rep=$rep ranks=$NP" >> "$out"
  local t0=$SECONDS rc
  "${cmd[@]}" >> "$out" 2> "$err" < /dev/null
  rc=$?
  [ -s "$err" ] || rm -f "$err"
  if [ $rc -ne 0 ]; then
    mv "$out" "$out.failed"
    local why="rc=$rc"
    { [ $rc = 124 ] || [ $rc = 137 ]; } && why="timed out after ${TIMEOUT}s"
    skip "FAILED ($why): $impl $tr $cfg $job rep $rep — see raw/$tr/$cfg/$impl/$job.$rep.txt.failed$([ -f "$err" ] && echo " and .err")"
    return 1
  fi
  printf '  %-4s %-5s %-4s %-11s rep %d/%d  %3ds\n' "$tr" "$cfg" "$job" "$impl" "$rep" "$REPS" $((SECONDS - t0))
}

for ((rep = 1; rep <= REPS; rep++)); do
  for tr in $TRANSPORTS; do
    for job in $JOBS; do
      for cfg in $CONFIGS; do
        for impl in "${ACTIVE[@]}"; do
          run_one "$impl" "$tr" "$cfg" "$job" "$rep"
        done
      done
    done
  done
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/meta.txt"
if grep -rqs 'unknown variable PROUST_PLACEMENT' "$OUT/raw" --include='*.err'; then
  skip "Proust warned 'unknown variable PROUST_PLACEMENT' (see raw/*/*/proust-mpi/*.err)"
fi

# ---- Report ---------------------------------------------------------------
ln -sfn "$stamp" "$RESULTS/placement-latest"
PY=$(command -v python3 || true)
if [ -z "$PY" ]; then note "python3 not found: raw results only, in $OUT"; exit 0; fi
"$PY" "$HERE/report.py" "$OUT" | tee "$OUT/summary.txt"
rc=${PIPESTATUS[0]}
if [ -s "$OUT/notes.txt" ]; then echo; echo "notes:"; sed 's/^/  /' "$OUT/notes.txt"; fi
echo "results in $OUT"
exit "$rc"
