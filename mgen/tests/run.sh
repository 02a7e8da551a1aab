#!/bin/sh
# Tests for the MGEN recorder: compiles the programs in this folder (and the
# papers' examples) with mgen_runtime.c and checks the recorded schedules,
# error reports and exit codes. Usage: mgen/tests/run.sh  (CC overrides cc)
set -u

TESTS=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$TESTS/../.." && pwd)
CC=${CC:-cc}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }

# Compile from the repo root so __FILE__ (hence @FILE:LINE) is a stable
# relative path such as mgen/tests/features.c.
build() { # name source
    if (cd "$ROOT" && $CC -std=gnu11 -O1 -I mgen "$2" mgen/mgen_runtime.c \
            -o "$TMP/$1.exe" -lm) 2>"$TMP/$1.cc"; then
        ok "compile $2"
    else
        cat "$TMP/$1.cc"
        bad "compile $2"
    fi
}

# record NAME RANKS [user args...]: run in $TESTS (files are read relative
# to the cwd), schedule to $TMP/NAME.sched, stderr to $TMP/NAME.err.
record() {
    n=$1 r=$2
    shift 2
    (cd "$TESTS" && "$TMP/$n.exe" --acesim-ranks "$r" \
        --acesim-out "$TMP/$n.sched" -- "$@") >"$TMP/$n.out" 2>"$TMP/$n.err"
}

# expect_sched NAME RANKS EXPECTED-FILE [user args...]
expect_sched() {
    n=$1 r=$2 exp=$3
    shift 3
    if record "$n" "$r" "$@" && [ ! -s "$TMP/$n.out" ] &&
        diff -u "$TESTS/expected/$exp" "$TMP/$n.sched"; then
        ok "schedule $exp"
    else
        cat "$TMP/$n.err"
        bad "schedule $exp"
    fi
}

# expect_error NAME STATUS 'stderr pattern' [user args...]
expect_error() {
    n=$1 want=$2 pat=$3
    shift 3
    record "$n" 3 "$@"
    got=$?
    if [ "$got" -eq "$want" ] && grep -q -- "$pat" "$TMP/$n.err" &&
        [ ! -e "$TMP/$n.sched" ]; then
        ok "error $* -> $pat"
    else
        echo "  status $got (want $want), stderr:"
        sed 's/^/  | /' "$TMP/$n.err"
        bad "error $* -> $pat"
    fi
}

# The runtime itself must be warning-free.
if (cd "$ROOT" && $CC -std=gnu11 -O1 -Wall -Wextra -Wpedantic -Werror \
        -I mgen -c mgen/mgen_runtime.c -o "$TMP/rt.o"); then
    ok "runtime -Wall -Wextra -Wpedantic clean"
else
    bad "runtime -Wall -Wextra -Wpedantic clean"
fi

# So must a user program using every call (the header's variadic MGEN_Send
# / MGEN_Recv macros included), in strict C99 too.
for std in gnu11 c99; do
    if (cd "$ROOT" && $CC -std=$std -O1 -Wall -Wextra -Wpedantic -Werror \
            -I mgen -c mgen/tests/mpi.c -o "$TMP/mpi-$std.o"); then
        ok "mpi.c -std=$std -Wall -Wextra -Wpedantic clean"
    else
        bad "mpi.c -std=$std -Wall -Wextra -Wpedantic clean"
    fi
done

# A wrong argument count of MGEN_Send/MGEN_Recv is a compile error that
# names the accepted counts.
for call in "MGEN_Send(0, 1, MGEN_INT, 0)|MGEN_Send_takes_5_or_6_arguments" \
    "MGEN_Recv(0, 1, MGEN_INT, 0, 0)|MGEN_Recv_takes_6_or_7_arguments" \
    "MGEN_Recv(0, 1, MGEN_INT, 0, 0, MGEN_COMM_WORLD, 0, 0)|MGEN_Recv_takes_6_or_7_arguments"; do
    printf '#include "mgen.h"\nint MGEN_Main(int c, char **v) { (void)c; (void)v; %s; return 0; }\n' \
        "${call%%|*}" >"$TMP/arity.c"
    if ! $CC -std=gnu11 -Werror=implicit-function-declaration -I "$ROOT/mgen" \
            -c "$TMP/arity.c" -o "$TMP/arity.o" 2>"$TMP/arity.err" &&
        grep -q "${call#*|}" "$TMP/arity.err"; then
        ok "arity error: ${call%%|*}"
    else
        cat "$TMP/arity.err"
        bad "arity error: ${call%%|*}"
    fi
done

build fig1 examples/papers/fig1.c
build ring examples/papers/ring_put.c
build get_put_ring examples/papers/get_put_ring.c
build pingpong examples/mpi/pingpong.c
build collectives examples/mpi/collectives.c
build time_steps examples/mpi/time_steps.c
for t in features exit_early semantic errors perf mpi; do
    build "$t" "mgen/tests/$t.c"
done

expect_sched fig1 2 fig1.sched
expect_sched ring 4 ring_put.sched
expect_sched features 3 features.sched msgsize.txt extra
expect_sched exit_early 3 exit_early.sched
expect_sched semantic 1 semantic.sched
expect_sched mpi 2 mpi.sched
expect_sched get_put_ring 3 get_put_ring.sched
expect_sched pingpong 2 pingpong.sched 64
expect_sched collectives 4 collectives.sched
expect_sched time_steps 2 time_steps.sched 3 64

# pingpong's default size is 8 bytes; 10 round trips each way.
if record pingpong 2 && [ "$(grep -c '^send 1 8 tag=0 ' "$TMP/pingpong.sched")" -eq 10 ] &&
    [ "$(grep -c '^recv 0 8 tag=0 ' "$TMP/pingpong.sched")" -eq 10 ]; then
    ok "pingpong default size"
else
    bad "pingpong default size"
fi
# collectives needs a square rank count.
if ! record collectives 3 && grep -q "not a square grid" "$TMP/collectives.err"; then
    ok "collectives rejects 3 ranks"
else
    bad "collectives rejects 3 ranks"
fi

# User output must go to stderr, never into the schedule or stdout.
if grep -q "user output from rank 2: argc=3 calls=1" "$TMP/features.err"; then
    ok "user stdout shown on stderr, globals fresh per rank"
else
    bad "user stdout shown on stderr, globals fresh per rank"
fi

# --acesim-out - writes the schedule to stdout.
if (cd "$TESTS" && "$TMP/fig1.exe" --acesim-ranks=2 --acesim-out=-) \
        2>/dev/null | diff -u "$TESTS/expected/fig1.sched" -; then
    ok "schedule to stdout"
else
    bad "schedule to stdout"
fi

E=mgen/tests/errors.c
expect_error errors 1 "^$E:17: MGEN_Comm_size: invalid communicator" comm
expect_error errors 1 "^$E:19: MGEN_acp_copy: third-party copy" copy
expect_error errors 1 "^$E:21: MGEN_Comp: negative time" negcomp
expect_error errors 1 "^$E:23: MGEN_Comp: time is NaN" nancomp
expect_error errors 1 "^$E:25: MGEN_Region_begin: region name contains a newline" region
expect_error errors 1 "^rank 1: the program exited with code 1 before MGEN_Main returned, after its last MGEN call, MGEN_Comm_size at mgen/tests/errors.c:17$" comm
expect_error errors 1 "^rank 1: the program exited with code 3 before MGEN_Main returned, after its last MGEN call, MGEN_rdma_poll at mgen/tests/errors.c:13$" exit3
expect_error errors 1 "^rank 1: program killed by signal 11 (segmentation fault) after its last MGEN call, MGEN_rdma_poll at mgen/tests/errors.c:13$" segv
expect_error errors 1 "^$E:35: MGEN_Comm_rank: rank/size of split communicator c1 is not known while recording; use world ranks, or state them with MGEN_Comm_split_info$" splitrank
expect_error errors 1 "^$E:37: MGEN_Send: invalid communicator 12345$" badcomm
expect_error errors 1 "^$E:39: MGEN_Barrier: invalid communicator MGEN_COMM_NULL$" nullcomm
expect_error errors 1 "^$E:44: MGEN_Bcast: communicator c1 has been freed$" freed
expect_error errors 1 "^$E:46: MGEN_Wait: invalid request 77$" badreq
expect_error errors 1 "^$E:48: MGEN_Allreduce: invalid datatype 0$" badtype
expect_error errors 1 "^$E:50: MGEN_Allreduce: invalid operation 0$" badop
expect_error errors 1 "^$E:52: MGEN_Irecv: tag ACP_PUT_TAG is reserved for RDMA puts" puttag
expect_error errors 1 "^$E:54: MGEN_Coll_algo: invalid algorithm name \"two words\"" badalgo
expect_error errors 1 "^$E:56: MGEN_Barrier_algo: invalid transport \"udp\" (msg or rdma)$" badtransport
expect_error errors 1 "^$E:59: MGEN_Comm_split_info: c1 was made by MGEN_Comm_dup" splitinfo
expect_error errors 1 "^$E:62: MGEN_Comm_split_info: size 4 is larger than the parent communicator's size 3$" splitrange
expect_error errors 1 "^$E:65: MGEN_Comm_free: cannot free MGEN_COMM_WORLD$" freeworld
expect_error errors 1 "^$E:67: MGEN_Loop_begin: negative iteration count -2$" loopneg
expect_error errors 1 "^$E:69: MGEN_Loop_end: no loop is open (MGEN_Loop_begin)$" loopend
expect_error errors 1 "^$E:71: MGEN_Loop_begin: the loop is never closed (MGEN_Loop_end) before MGEN_Main returns$" loopopen

# Bad command lines exit with status 2.
for args in "" "--acesim-ranks 2" "--acesim-out x" \
    "--acesim-ranks 0 --acesim-out x" "--acesim-ranks 2x --acesim-out x" \
    "--acesim-ranks 2 --acesim-out x stray" "--acesim-ranks"; do
    # shellcheck disable=SC2086
    (cd "$TMP" && ./fig1.exe $args) >/dev/null 2>&1
    st=$?
    if [ "$st" -eq 2 ]; then ok "usage error [$args]"; else bad "usage error [$args] (status $st)"; fi
done

# Performance: 512 ranks x 4000 calls.
start=$(date +%s%N)
if record perf 512 && [ "$(grep -c '^put ' "$TMP/perf.sched")" -eq 512000 ] &&
    [ "$(grep -c '^rank ' "$TMP/perf.sched")" -eq 512 ]; then
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    # Generous bound for slow CI machines; it takes ~0.5 s on a laptop.
    if [ "$ms" -lt 5000 ]; then ok "512 ranks x 4000 calls in ${ms} ms"; else bad "512 ranks x 4000 calls too slow: ${ms} ms"; fi
else
    cat "$TMP/perf.err"
    bad "512 ranks x 4000 calls"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
