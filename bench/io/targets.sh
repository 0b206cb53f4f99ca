# bench/io/targets.sh — sourced by bench/io/run.sh and bench/io/ior.sh:
# the implementations' list of a run and the target directories.
# shellcheck shell=bash

# io_write_impls OUT IMPL... — impls.tsv (name, kind, wrapper, launcher)
# from the CC and RUN arrays of bench/common/three_mpis.sh.
io_write_impls() {
  local out=$1 i
  shift
  for i in "$@"; do
    printf '%s\t%s\t%s\t%s\n' "$i" "$([ "$i" = proust ] && echo proust || echo peer)" \
      "${CC[$i]}" "${RUN[$i]}"
  done > "$out/impls.tsv"
}

# io_targets NAME WORD... — TDIR[label]=directory and LABELS for each word:
# "local" = a fresh directory under /var/tmp, "shm" = one under /dev/shm
# (both removed when the script exits), any other = that directory.
# Uses note() of the caller.
declare -A TDIR
LABELS=() FRESH=()
io_cleanup() { local d; for d in "${FRESH[@]}"; do rm -rf -- "$d"; done; }
io_targets() {
  local name=$1 w d
  shift
  trap io_cleanup EXIT
  trap 'exit 130' INT TERM
  for w in "$@"; do
    case $w in
      local) d=$(mktemp -d "/var/tmp/$name.XXXXXX") || { note "no dir under /var/tmp"; continue; }; FRESH+=("$d") ;;
      shm) d=$(mktemp -d "/dev/shm/$name.XXXXXX") || { note "no dir under /dev/shm"; continue; }; FRESH+=("$d") ;;
      *) d=$w; [ -d "$d" ] && [ -w "$d" ] || { note "target $d is not a writable directory, left out"; continue; }
         w=$(echo "$d" | sed 's|^/||; s|/*$||; s|[^A-Za-z0-9._-]|_|g') ;;
    esac
    TDIR[$w]=$d; LABELS+=("$w")
  done
  [ ${#LABELS[@]} -gt 0 ]
}
