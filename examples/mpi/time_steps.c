/* A time-stepping loop written once: each step computes, exchanges
 * argv[2] bytes with both ring neighbours and ends with an allreduce of its
 * residual. MGEN_Loop_begin(steps) records the step once and acesim runs it
 * argv[1] times (default 20000), so the schedule stays a few lines per rank.
 *   acesim run examples/mpi/time_steps.c --ranks 16 -m table1 -- 20000 8192 */
#include <stdio.h>
#include <stdlib.h>
#include "mgen.h"

int MGEN_Main(int argc, char **argv)
{
    int rank, size;
    long long steps = argc > 1 ? atoll(argv[1]) : 20000;
    int bytes = argc > 2 ? atoi(argv[2]) : 8192;
    MGEN_Init(&argc, &argv);
    MGEN_Comm_rank(MGEN_COMM_WORLD, &rank);
    MGEN_Comm_size(MGEN_COMM_WORLD, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MGEN_Loop_begin(steps); /* the body below runs once here, steps times in acesim */
    MGEN_Region_begin("step");
    MGEN_Comp(2000); /* 2 us of compute, in ns */
    MGEN_Request reqs[4];
    MGEN_Irecv(NULL, bytes, MGEN_BYTE, left, 0, MGEN_COMM_WORLD, &reqs[0]);
    MGEN_Irecv(NULL, bytes, MGEN_BYTE, right, 1, MGEN_COMM_WORLD, &reqs[1]);
    MGEN_Isend(NULL, bytes, MGEN_BYTE, right, 0, MGEN_COMM_WORLD, &reqs[2]);
    MGEN_Isend(NULL, bytes, MGEN_BYTE, left, 1, MGEN_COMM_WORLD, &reqs[3]);
    MGEN_Waitall(4, reqs, MGEN_STATUSES_IGNORE);
    double residual = 0;
    MGEN_Allreduce(&residual, &residual, 1, MGEN_DOUBLE, MGEN_SUM, MGEN_COMM_WORLD);
    MGEN_Region_end("step");
    MGEN_Loop_end();
    MGEN_Finalize();
    return 0;
}
