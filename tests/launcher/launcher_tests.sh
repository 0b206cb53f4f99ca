#!/usr/bin/env bash
# launcher_tests.sh PROUSTRUN BOOT_CLIENT TEST — one test of proustrun and
# the boot protocol (registered one by one in tests/launcher.cmake).
# Exit 0 = pass; on failure, says what was expected and shows the output.
set -u
PR=$1
CLIENT=$2
TEST=$3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/proust-launcher.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
OUT=$TMP/out
ERR=$TMP/err

fail() {
    echo "FAIL [$TEST]: $*" >&2
    echo "--- stdout:" >&2
    cat "$OUT" >&2 2>/dev/null
    echo "--- stderr:" >&2
    cat "$ERR" >&2 2>/dev/null
    exit 1
}

# run ARGS... : proustrun with a safety timeout; sets RC and ELAPSED (ms).
run() {
    local t0 t1
    t0=$(date +%s%N)
    timeout -k 2 20 "$PR" "$@" >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    t1=$(date +%s%N)
    ELAPSED=$(((t1 - t0) / 1000000))
}

expect_rc() { [ "$RC" -eq "$1" ] || fail "exit code $RC, expected $1"; }
expect_out() { grep -qE -- "$1" "$OUT" || fail "stdout lacks /$1/"; }
expect_err() { grep -qE -- "$1" "$ERR" || fail "stderr lacks /$1/"; }
expect_count() { # FILE REGEX N
    local c
    c=$(grep -cE -- "$2" "$1")
    [ "$c" -eq "$3" ] || fail "$c lines match /$2/ in $(basename "$1"), expected $3"
}
expect_faster() { [ "$ELAPSED" -lt "$1" ] || fail "took $ELAPSED ms, expected < $1 ms"; }

case "$TEST" in
exit_code)
    run -n 3 sh -c 'if [ "$PROUST_RANK" = 1 ]; then exit 7; fi; sleep 0.2'
    expect_rc 7
    expect_err '^proustrun: rank 1 \(pid [0-9]+\) exited with code 7$'
    expect_count "$ERR" 'rank [02]' 0
    run -n 3 true
    expect_rc 0
    [ -s "$ERR" ] && fail "stderr not empty on success"
    ;;
signal)
    run -n 3 sh -c 'if [ "$PROUST_RANK" = 2 ]; then kill -9 $$; fi; sleep 0.2'
    expect_rc 137
    expect_err '^proustrun: rank 2 \(pid [0-9]+\) killed by signal 9 \(Killed\)$'
    ;;
grace)
    # The survivor is terminated once the grace period is over.
    run -n 2 --grace 0.5 sh -c 'if [ "$PROUST_RANK" = 0 ]; then exit 4; fi; exec sleep 30'
    expect_rc 4
    expect_err 'rank 0 \(pid [0-9]+\) exited with code 4'
    expect_faster 2500
    [ "$ELAPSED" -ge 400 ] || fail "took $ELAPSED ms: the grace period was not honoured"
    ;;
timeout)
    # --timeout / MPIEXEC_TIMEOUT stop a job that runs too long: status 124,
    # a message, every rank gone (a rank ignoring SIGTERM gets SIGKILL).
    run -n 2 --timeout 0.5 sh -c 'exec sleep 30'
    expect_rc 124
    expect_err 'ran past its time limit \(0.5 s\)'
    expect_faster 2500
    [ "$ELAPSED" -ge 400 ] || fail "took $ELAPSED ms: stopped before the time limit"
    MPIEXEC_TIMEOUT=0.3 run -n 2 sh -c 'if [ "$PROUST_RANK" = 1 ]; then trap "" TERM; fi
        while :; do sleep 0.1; done'
    expect_rc 124
    expect_faster 4500
    # A job that ends in time is not touched; the option wins over the variable.
    MPIEXEC_TIMEOUT=0.2 run -n 2 --timeout 5 sh -c 'sleep 0.5; exit 0'
    expect_rc 0
    MPIEXEC_TIMEOUT=soon run -n 1 true
    expect_rc 2
    expect_err 'MPIEXEC_TIMEOUT=soon is not a number of seconds'
    ;;
kill_escalation)
    # A survivor that ignores SIGTERM gets SIGKILL 2 s later.
    run -n 2 --grace=0.2 sh -c 'if [ "$PROUST_RANK" = 0 ]; then exit 5; fi
        trap "" TERM; while :; do sleep 0.1; done'
    expect_rc 5
    expect_faster 5000
    [ "$ELAPSED" -ge 2000 ] || fail "took $ELAPSED ms: SIGKILL came before 2 s"
    ;;
tag_output)
    run -n 3 --tag-output sh -c 'echo "hello $PROUST_RANK"; echo "oops $PROUST_RANK" >&2'
    expect_rc 0
    for r in 0 1 2; do
        expect_count "$OUT" "^\[$r\] hello $r\$" 1
        expect_count "$ERR" "^\[$r\] oops $r\$" 1
    done
    expect_count "$OUT" '' 3
    run -np 2 sh -c 'echo "hello $PROUST_RANK"'
    expect_count "$OUT" '^hello [01]$' 2
    ;;
partial_line)
    # Lines are whole; a partial line at exit is still written.
    run -n 1 sh -c 'printf "no newline"'
    [ "$(cat "$OUT")" = "no newline" ] || fail "partial line lost"
    run -n 2 --tag-output sh -c 'printf "part "; sleep 0.3; echo "end $PROUST_RANK"; printf tail'
    expect_count "$OUT" '^\[[01]\] part end [01]$' 2
    expect_count "$OUT" '^\[[01]\] tail$' 2
    # Many lines from several ranks never mix.
    run -n 4 --tag-output sh -c 'i=0; while [ $i -lt 300 ]; do
        echo "rank $PROUST_RANK line $i xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"; i=$((i+1)); done'
    expect_rc 0
    expect_count "$OUT" '^\[([0-3])\] rank \1 line [0-9]+ x{53}$' 1200
    ;;
stdin)
    printf 'line1\nline2\n' | timeout -k 2 20 "$PR" -n 3 --tag-output \
        sh -c 'cat; echo "done $PROUST_RANK"' >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 0
    expect_out '^\[0\] line1$'
    expect_out '^\[0\] line2$'
    expect_count "$OUT" 'line[12]' 2
    expect_count "$OUT" '^\[[0-2]\] done [0-2]$' 3
    # A larger input, and EOF reaches rank 0 (cat ends).
    seq 1 200000 >"$TMP/in"
    timeout -k 2 20 "$PR" -n 2 sh -c 'if [ "$PROUST_RANK" = 0 ]; then cksum; fi' <"$TMP/in" >"$OUT" 2>"$ERR"
    RC=$?
    [ "$(cat "$OUT")" = "$(cksum <"$TMP/in")" ] || fail "stdin of rank 0 differs"
    ;;
env)
    run -n 3 --tag-output sh -c 'echo "$PROUST_RANK $PROUST_SIZE $PROUST_LOCAL_RANK $PROUST_LOCAL_SIZE $PROUST_JOBID $PROUST_BOOT_FD"'
    expect_rc 0
    for r in 0 1 2; do
        expect_count "$OUT" "^\[$r\] $r 3 $r 3 [0-9]+-[0-9a-f]+ [0-9]+\$" 1
    done
    [ "$(awk '{print $6}' "$OUT" | sort -u | wc -l)" -eq 1 ] || fail "ranks got different job ids"
    run -n 1 sh -c 'echo $PROUST_JOBID'
    first=$(cat "$OUT")
    run -n 1 sh -c 'echo $PROUST_JOBID'
    [ "$first" != "$(cat "$OUT")" ] || fail "two jobs got the same job id $first"
    ;;
cloexec)
    # A rank holds only what proustrun inherited, plus its boot socket.
    "$CLIENT" fdlist | sort >"$TMP/base"
    run -n 3 "$CLIENT" fdcheck
    expect_rc 0
    sort -u "$OUT" >"$TMP/ranks"
    cmp -s "$TMP/base" "$TMP/ranks" || fail "ranks hold descriptors $(tr '\n' ' ' <"$TMP/ranks") instead of $(tr '\n' ' ' <"$TMP/base")"
    ;;
kv)
    run -n 4 "$CLIENT" kv
    expect_rc 0
    expect_count "$OUT" '^rank [0-3]: kv ok$' 4
    ;;
failnotice)
    run -n 4 "$CLIENT" failnotice
    expect_rc 3
    expect_err '^proustrun: rank 3 \(pid [0-9]+\) exited with code 3$'
    expect_count "$OUT" '^rank [0-2] saw rank 3 fail$' 3
    expect_faster 2900 # the survivors exit by themselves, before the grace ends
    ;;
abort)
    run -n 3 "$CLIENT" abort
    expect_rc 5
    expect_err '^proustrun: rank 1 called abort \(code 5\): test abort reason$'
    expect_faster 2000 # everyone killed at once
    ;;
missing_program)
    run -n 2 proust-no-such-program-xyz
    [ "$RC" -ne 0 ] || fail "exit code 0 for a missing program"
    expect_err "cannot run 'proust-no-such-program-xyz'"
    run -n 2 "$TMP/nothing/here"
    [ "$RC" -ne 0 ] || fail "exit code 0 for a missing path"
    expect_err "cannot run '.*nothing/here'"
    echo "not a program" >"$TMP/text"
    run -n 2 "$TMP/text"
    [ "$RC" -ne 0 ] || fail "exit code 0 for a non-executable file"
    expect_err "cannot run"
    ;;
usage)
    run --bogus -n 2 true
    expect_rc 2
    expect_err "unknown option '--bogus'"
    run -n 0 true
    expect_rc 2
    run -n 2
    expect_rc 2
    expect_err 'no program'
    run true
    expect_rc 2
    run --grace -1 -n 1 true
    expect_rc 2
    run --help
    expect_rc 0
    expect_out 'Usage: proustrun -n N'
    run --version
    expect_rc 0
    expect_out '^proustrun \(Proust\) [0-9]+\.[0-9]+'
    run -n2 true
    expect_rc 0
    ;;
forward_signal)
    # SIGTERM to proustrun reaches every rank; exit status 128+15.
    mkdir "$TMP/ready"
    "$PR" -n 2 --tag-output sh -c 'trap "echo got TERM; exit 0" TERM
        touch "$0/$PROUST_RANK"; while :; do sleep 0.05; done' "$TMP/ready" >"$OUT" 2>"$ERR" </dev/null &
    pid=$!
    for _ in $(seq 100); do
        [ -e "$TMP/ready/0" ] && [ -e "$TMP/ready/1" ] && break
        sleep 0.05
    done
    kill -TERM $pid
    wait $pid
    RC=$?
    expect_rc 143
    expect_count "$OUT" '^\[[01]\] got TERM$' 2
    ;;
launcher_death)
    # proustrun killed outright: its ranks die with it (PR_SET_PDEATHSIG).
    mkdir "$TMP/pids"
    "$PR" -n 3 sh -c 'echo $$ >"$0/$PROUST_RANK"; exec sleep 30' "$TMP/pids" \
        >"$OUT" 2>"$ERR" </dev/null &
    pid=$!
    for _ in $(seq 100); do
        [ "$(ls "$TMP/pids" | wc -l)" -eq 3 ] && break
        sleep 0.05
    done
    sleep 0.1
    kill -KILL $pid
    wait $pid 2>/dev/null
    for _ in $(seq 40); do
        alive=0
        for f in "$TMP"/pids/*; do kill -0 "$(cat "$f")" 2>/dev/null && alive=1; done
        [ $alive -eq 0 ] && break
        sleep 0.05
    done
    if [ $alive -ne 0 ]; then
        for f in "$TMP"/pids/*; do kill -KILL "$(cat "$f")" 2>/dev/null; done
        fail "ranks outlived proustrun"
    fi
    ;;
grandchild)
    # A rank's child keeps stdout open after every rank has exited:
    # proustrun must still end (bounded wait).
    run -n 2 sh -c 'sleep 5 & echo "bye $PROUST_RANK"'
    expect_rc 0
    expect_count "$OUT" '^bye [01]$' 2
    expect_faster 3000
    ;;
session)
    # Up to a rank a cpu, every rank leads its own session (hence its own
    # process group and, where the kernel has autogroups, its own share of
    # the cpus), not ours. With more ranks than cpus they stay in our
    # session (a yield must reach the other ranks: spawn.c), each in a
    # process group of its own.
    mysid=$(ps -o sid= -p $$ | tr -d ' ')
    cpus=$(nproc)
    for n in 1 2 $((cpus + 1)); do
        own=$([ "$n" -le "$cpus" ] && echo 1 || echo 0)
        run -n "$n" --tag-output sh -c 'echo "$$ $(ps -o sid= -p $$) $(ps -o pgid= -p $$)"'
        expect_rc 0
        for r in 0 $((n - 1)); do
            set -- $(sed -n "s/^\[$r\] //p" "$OUT")
            [ $# -eq 3 ] || fail "rank $r of $n printed no pid/sid/pgid"
            [ "$1" = "$3" ] || fail "rank $r of $n (pid $1) is in process group $3, expected its own"
            if [ "$own" = 1 ]; then
                [ "$1" = "$2" ] || fail "rank $r of $n on $cpus cpus (pid $1) is in session $2, expected its own"
                [ "$2" != "$mysid" ] || fail "rank $r of $n shares the launcher's session $mysid"
            else
                [ "$2" = "$mysid" ] || fail "rank $r of $n on $cpus cpus is in session $2, expected ours ($mysid)"
            fi
        done
    done
    ;;
lost)
    timeout -k 2 20 "$CLIENT" lost >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 0
    expect_out '^lost ok$'
    ;;
bind)
    # --bind-to core: rank i on the i-th core of what proustrun may use
    # (wrapping); numa/package: the whole node/package; none: unchanged.
    # The expected sets come from the launcher's own affinity, whatever
    # machine this is.
    mine=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
    ncores=$(hwloc-calc --restrict "$mine" --number-of core machine:0 2>/dev/null || nproc)
    run -n 3 --bind-to core --report-bindings --tag-output sh -c 'sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status'
    expect_rc 0
    expect_err 'rank 0 bound to cpus'
    c0=$(sed -n 's/^\[0\] //p' "$OUT"); c1=$(sed -n 's/^\[1\] //p' "$OUT"); c2=$(sed -n 's/^\[2\] //p' "$OUT")
    [ -n "$c0" ] && [ "$c0" != "$mine" -o "$ncores" -eq 1 ] || fail "rank 0 not bound to a core: '$c0' (all: $mine)"
    if [ "$ncores" -ge 2 ]; then
        [ "$c0" != "$c1" ] || fail "ranks 0 and 1 share cpus $c0 with $ncores cores"
    fi
    if [ "$ncores" -eq 2 ]; then
        [ "$c2" = "$c0" ] || fail "rank 2 should wrap to rank 0's core ($c0), got $c2"
        expect_err 'ranks share them'
    fi
    # every rank is told how many cpus the job has on this node
    run -n 2 --bind-to core sh -c 'echo "$PROUST_NODE_CPUS"'
    expect_rc 0
    expect_count "$OUT" "^$(nproc)\$" 2
    run -n 2 --bind-to=package sh -c 'sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status'
    expect_rc 0
    [ "$(sort -u "$OUT" | wc -l)" -ge 1 ] || fail "no binding printed"
    run -n 1 sh -c 'sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status'
    [ "$(cat "$OUT")" = "$mine" ] || fail "without --bind-to the rank must keep $mine, got $(cat "$OUT")"
    run -n 1 --bind-to sideways true
    expect_rc 2
    expect_err 'expected none, hwthread, core'
    ;;
singleton)
    env -u PROUST_BOOT_FD "$CLIENT" singleton >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 0
    expect_out '^singleton ok$'
    ;;
*)
    echo "unknown test $TEST" >&2
    exit 2
    ;;
esac
exit 0
