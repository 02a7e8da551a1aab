/* Errors the runtime reports itself; argv[1] picks which one (on rank 1). */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "mgen.h"

int MGEN_Main(int argc, char **argv)
{
    int rank, dummy;
    const char *what = argc > 1 ? argv[1] : "";
    MGEN_Comm_rank(MGEN_COMM_WORLD, &rank);
    MGEN_rdma_poll(0);
    if (rank != 1)
        return 0;
    if (strcmp(what, "comm") == 0)
        MGEN_Comm_size(3, &dummy);
    else if (strcmp(what, "copy") == 0)
        MGEN_acp_copy(0, 2, 8);
    else if (strcmp(what, "negcomp") == 0)
        MGEN_Comp(-1);
    else if (strcmp(what, "nancomp") == 0)
        MGEN_Comp(NAN);
    else if (strcmp(what, "region") == 0)
        MGEN_Region_begin("two\nlines");
    else if (strcmp(what, "exit3") == 0)
        exit(3);
    else if (strcmp(what, "segv") == 0)
        raise(SIGSEGV);
    /* MPI-style calls (new cases go below, keeping the lines above). */
    MGEN_Comm sub = MGEN_COMM_NULL;
    MGEN_Request rq = 77;
    if (strcmp(what, "splitrank") == 0) {
        MGEN_Comm_split(MGEN_COMM_WORLD, rank % 2, 0, &sub);
        MGEN_Comm_rank(sub, &dummy);
    } else if (strcmp(what, "badcomm") == 0) {
        MGEN_Send(NULL, 1, MGEN_INT, 0, 0, 12345);
    } else if (strcmp(what, "nullcomm") == 0) {
        MGEN_Barrier(sub);
    } else if (strcmp(what, "freed") == 0) {
        MGEN_Comm_dup(MGEN_COMM_WORLD, &sub);
        MGEN_Comm keep = sub;
        MGEN_Comm_free(&sub);
        MGEN_Bcast(NULL, 1, MGEN_INT, 0, keep);
    } else if (strcmp(what, "badreq") == 0) {
        MGEN_Wait(&rq, MGEN_STATUS_IGNORE);
    } else if (strcmp(what, "badtype") == 0) {
        MGEN_Allreduce(NULL, NULL, 1, 0, MGEN_SUM, MGEN_COMM_WORLD);
    } else if (strcmp(what, "badop") == 0) {
        MGEN_Allreduce(NULL, NULL, 1, MGEN_INT, 0, MGEN_COMM_WORLD);
    } else if (strcmp(what, "puttag") == 0) {
        MGEN_Irecv(NULL, 1, MGEN_INT, 0, ACP_PUT_TAG, MGEN_COMM_WORLD, &rq);
    } else if (strcmp(what, "badalgo") == 0) {
        MGEN_Coll_algo("two words");
    } else if (strcmp(what, "badtransport") == 0) {
        MGEN_Barrier_algo(MGEN_COMM_WORLD, "ring", "udp");
    } else if (strcmp(what, "splitinfo") == 0) {
        MGEN_Comm_dup(MGEN_COMM_WORLD, &sub);
        MGEN_Comm_split_info(sub, 0, 1);
    } else if (strcmp(what, "splitrange") == 0) {
        MGEN_Comm_split(MGEN_COMM_WORLD, 0, 0, &sub);
        MGEN_Comm_split_info(sub, 0, 4);
    } else if (strcmp(what, "freeworld") == 0) {
        sub = MGEN_COMM_WORLD;
        MGEN_Comm_free(&sub);
    } else if (strcmp(what, "loopneg") == 0) {
        MGEN_Loop_begin(-2);
    } else if (strcmp(what, "loopend") == 0) {
        MGEN_Loop_end();
    } else if (strcmp(what, "loopopen") == 0) {
        MGEN_Loop_begin(3);
    }
    return 0;
}
