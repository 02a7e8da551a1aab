/* Semantic mistakes are recorded as-is; acesim's loader reports them. */
#include "mgen.h"

int MGEN_Main(int argc, char **argv)
{
    (void)argc; (void)argv;
    MGEN_rdma_put(99, -4, -1);
    MGEN_acp_complete(42);
    MGEN_Region_end("never opened");
    return 0;
}
