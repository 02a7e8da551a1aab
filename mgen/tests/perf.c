/* Many ranks x many calls: recording must stay fast. */
#include "mgen.h"

int MGEN_Main(int argc, char **argv)
{
    int rank, size;
    (void)argc; (void)argv;
    MGEN_Comm_rank(MGEN_COMM_WORLD, &rank);
    MGEN_Comm_size(MGEN_COMM_WORLD, &size);
    for (int i = 0; i < 1000; i++) {
        MGEN_Comp(12.5);
        MGEN_acp_handle h = MGEN_rdma_put((rank + 1) % size, 1024, i);
        MGEN_rdma_poll(i);
        MGEN_acp_complete(h);
    }
    return 0;
}
