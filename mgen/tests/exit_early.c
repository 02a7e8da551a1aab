/* exit() inside MGEN_Main must still record what came before it. */
#include <stdlib.h>
#include "mgen.h"

int MGEN_Main(int argc, char **argv)
{
    int rank;
    (void)argc; (void)argv;
    MGEN_Comm_rank(MGEN_COMM_WORLD, &rank);
    MGEN_rdma_poll(rank);
    if (rank == 1)
        exit(0);
    MGEN_rdma_poll(100 + rank);
    return 0;
}
