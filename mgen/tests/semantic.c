/* Semantic mistakes are recorded as-is; acesim's loader reports them. */
#include "mgen.h"

int MGEN_Main(int argc, char **argv)
{
    (void)argc; (void)argv;
    MGEN_rdma_put(99, -4, -1);
    MGEN_acp_complete(42);
    MGEN_Region_end("never opened");
    MGEN_Send(NULL, -3, MGEN_INT, 5, -7);
    MGEN_Bcast(NULL, -1, MGEN_DOUBLE, -2, MGEN_COMM_WORLD);
    return 0;
}
