/* A tour of the collectives: Barrier, Bcast of 1 KiB from rank 0,
 * Allreduce of 8 doubles, Alltoall of 1 KiB per rank pair, then an
 * Allreduce within each row of a square q x q process grid.
 * The rank count must be a perfect square (1, 4, 9, 16...).
 *   ./collectives.exe --acesim-ranks 16 --acesim-out coll.sched */
#include <stdio.h>
#include <stdlib.h>
#include "mgen.h"

int MGEN_Main(int argc, char **argv)
{
    int rank, size, q = 0;
    MGEN_Init(&argc, &argv);
    MGEN_Comm_rank(MGEN_COMM_WORLD, &rank);
    MGEN_Comm_size(MGEN_COMM_WORLD, &size);
    while ((q + 1) * (q + 1) <= size)
        q++;
    if (q * q != size) {
        fprintf(stderr, "collectives: %d ranks is not a square grid\n", size);
        exit(1);
    }

    MGEN_Barrier(MGEN_COMM_WORLD);
    MGEN_Bcast(NULL, 1024, MGEN_BYTE, 0, MGEN_COMM_WORLD);
    MGEN_Allreduce(MGEN_IN_PLACE, NULL, 8, MGEN_DOUBLE, MGEN_SUM,
                   MGEN_COMM_WORLD);
    MGEN_Alltoall(NULL, 1024, MGEN_BYTE, NULL, 1024, MGEN_BYTE,
                  MGEN_COMM_WORLD);

    /* Rows of the grid: color = row, ordered by column. The recorder sees
     * one rank at a time, so the program states its place in the row. */
    int row = rank / q, col = rank % q, rrank, rsize;
    MGEN_Comm rowcomm;
    MGEN_Comm_split(MGEN_COMM_WORLD, row, col, &rowcomm);
    MGEN_Comm_split_info(rowcomm, col, q);
    MGEN_Comm_rank(rowcomm, &rrank);
    MGEN_Comm_size(rowcomm, &rsize);
    MGEN_Allreduce(MGEN_IN_PLACE, NULL, rsize, MGEN_DOUBLE, MGEN_SUM, rowcomm);
    MGEN_Comm_free(&rowcomm);

    MGEN_Finalize();
    return 0;
}
