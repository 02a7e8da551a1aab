/* Exercises every recording call, argv passing, cwd-relative file access,
 * user stdout and per-rank isolation of globals. */
#include <stdio.h>
#include <string.h>
#include "mgen.h"

static int calls; /* must start at 0 in every rank (fresh process) */

int MGEN_Main(int argc, char **argv)
{
    int rank, size, isz;
    MGEN_Init(&argc, &argv);
    MGEN_Comm_rank(MGEN_COMM_WORLD, &rank);
    MGEN_Comm_size(MGEN_COMM_WORLD, &size);
    MGEN_Type_size(MGEN_DOUBLE, &isz);
    calls++;

    /* Read a file relative to the cwd: its first line is a message size. */
    int ms = -1;
    FILE *f = fopen(argc > 1 ? argv[1] : "missing", "r");
    if (f) {
        if (fscanf(f, "%d", &ms) != 1)
            ms = -2;
        fclose(f);
    }
    printf("user output from rank %d: argc=%d calls=%d\n", rank, argc, calls);

    MGEN_Region_begin("main phase");
    MGEN_Comp(1.5);
    MGEN_Comp(0.0004);
    MGEN_acp_handle h1 = MGEN_acp_copy(rank, (rank + 1) % size, ms);
    MGEN_acp_handle_t h2 = MGEN_acp_copy((rank + size - 1) % size, rank,
                                         isz * 2);
    MGEN_Region_begin("q\"uo\\te");
    MGEN_rdma_poll(ACP_PUT_TAG);
    MGEN_Region_end("q\"uo\\te");
    MGEN_acp_complete(h1);
    MGEN_acp_complete(
        h2);
    MGEN_Region_end("main phase");
    if (argc > 2 && strcmp(argv[2], "extra") == 0)
        MGEN_rdma_poll(7);
    MGEN_Finalize();
    return MGEN_Wtime() == 0.0 ? 0 : 1;
}
