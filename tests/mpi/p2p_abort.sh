#!/bin/sh
# p2p_abort.sh PROUSTRUN NPROCS PROGRAM — run the MPI_Abort test program and
# check that the job stops with the code given to MPI_Abort (7), quickly.
run=$1
n=$2
prog=$3
out=$(timeout 50 "$run" -n "$n" "$prog" 2>&1)
rc=$?
echo "$out"
if [ "$rc" -eq 124 ]; then
    echo "FAIL: the job did not stop within 50 s after MPI_Abort"
    exit 1
fi
if [ "$rc" -ne 7 ]; then
    echo "FAIL: proustrun exited with status $rc, expected 7 (the MPI_Abort code)"
    exit 1
fi
case "$out" in
*"MPI_Abort returned"* | *"completed"*)
    echo "FAIL: a rank went on after MPI_Abort"
    exit 1
    ;;
esac
echo "OK: exit status 7"
