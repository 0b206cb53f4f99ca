#!/usr/bin/env bash
# small_dev_shm.sh SIZE COMMAND... — run COMMAND with a /dev/shm of its own
# holding SIZE bytes (tmpfs, e.g. 112k), in a private mount namespace, so
# that a test can fill shared memory without touching the machine's.
# Exit 77 (skipped) where mount namespaces or mounts are refused.
size=$1
shift
if ! unshare --mount --propagation private true 2> /dev/null; then
  echo "skipped: no mount namespace here (unshare --mount needs CAP_SYS_ADMIN)"
  exit 77
fi
exec unshare --mount --propagation private bash -c '
  if ! mount -t tmpfs -o size="$0",mode=1777 tmpfs /dev/shm; then
    echo "skipped: cannot mount a tmpfs on /dev/shm"
    exit 77
  fi
  exec "$@"' "$size" "$@"
