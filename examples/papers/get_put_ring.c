/* Get/put ring, the MGEN sample of the 2012 NSIM paper. Two typos of the
 * paper's listing are corrected here:
 *   MGEN_Comm_size(com, &rank)  ->  MGEN_Comm_size(com, &size)
 *   r = (size + 1) % size       ->  r = (rank + 1) % size            */
#include "mgen.h"
#include <string.h>
int MGEN_Main(int argc, char **argv){
    int rank, size, ms=4, tag = ACP_PUT_TAG, r, l;
    MGEN_Request rq;
    MGEN_Status st;
    MGEN_Datatype dt = MGEN_BYTE;
    MGEN_Comm com = MGEN_COMM_WORLD;
    t_NsimRoutingInfo info;
    MGEN_acp_handle handle;
    bzero(&info, sizeof(t_NsimRoutingInfo));
    MGEN_Comm_rank(com, &rank);
    MGEN_Comm_size(com, &size);

    r = (rank + 1) % size;
    l = (rank - 1 + size) % size;

    handle = MGEN_acp_copy(l, rank, ms);
    MGEN_acp_complete(handle);

    handle = MGEN_acp_copy(rank, r, ms);
    MGEN_Recv(NULL, ms, dt, l, tag, &st);
    LMGEN_Isend_acp_put_ctrl(l, com, &rq, 0, &info);
    MGEN_acp_complete(handle);
    LMGEN_Wait_ctrl(&rq, &st);
}
