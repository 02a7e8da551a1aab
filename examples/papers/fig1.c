#include "mgen.h"
int MGEN_Main(int argc, char **argv){
    int rank, t = 100000, dest = 1, data_size = 4, tag = 0;
    MGEN_acp_handle_t handle;
    MGEN_Comm_rank(MGEN_COMM_WORLD,
    &rank);

    if(rank == 0){
        MGEN_Comp(t);
        handle = MGEN_rdma_put(dest, data_size, tag);
        MGEN_acp_complete(handle);
    }else if(rank == 1)
        MGEN_rdma_poll(tag);
}
