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
    return 0;
}
