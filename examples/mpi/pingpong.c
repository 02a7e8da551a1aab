/* Ping-pong between ranks 0 and 1: 10 round trips of argv[1] bytes
 * (default 8). Other ranks, if any, do nothing.
 *   ./pingpong.exe --acesim-ranks 2 --acesim-out pp.sched -- 4096 */
#include <stdio.h>
#include <stdlib.h>
#include "mgen.h"

#define ROUND_TRIPS 10

int MGEN_Main(int argc, char **argv)
{
    int rank, size;
    int bytes = argc > 1 ? atoi(argv[1]) : 8;
    MGEN_Init(&argc, &argv);
    MGEN_Comm_rank(MGEN_COMM_WORLD, &rank);
    MGEN_Comm_size(MGEN_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "pingpong needs at least 2 ranks\n");
        exit(1);
    }
    if (rank < 2) {
        int peer = 1 - rank;
        MGEN_Region_begin("pingpong");
        for (int i = 0; i < ROUND_TRIPS; i++) {
            if (rank == 0) {
                MGEN_Send(NULL, bytes, MGEN_BYTE, peer, 0, MGEN_COMM_WORLD);
                MGEN_Recv(NULL, bytes, MGEN_BYTE, peer, 0, MGEN_COMM_WORLD,
                          MGEN_STATUS_IGNORE);
            } else {
                MGEN_Recv(NULL, bytes, MGEN_BYTE, peer, 0, MGEN_COMM_WORLD,
                          MGEN_STATUS_IGNORE);
                MGEN_Send(NULL, bytes, MGEN_BYTE, peer, 0, MGEN_COMM_WORLD);
            }
        }
        MGEN_Region_end("pingpong");
    }
    MGEN_Finalize();
    return 0;
}
