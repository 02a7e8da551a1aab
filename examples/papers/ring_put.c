#include "mgen.h"
int MGEN_Main(int argc, char
**argv) {
    int rank, size, ms=4, r, tag=0;
    MGEN_Comm com = MGEN_COMM_WORLD;
    MGEN_acp_handle handle;
    MGEN_Comm_rank(com, &rank);
    MGEN_Comm_size(com, &size);

    r = (rank + 1) % size;

    handle = MGEN_rdma_put(r, ms,
tag);
    MGEN_rdma_poll(tag);
    MGEN_acp_complete(handle);
}
