/* Exercises every MPI-style call: messages (both NSIM short forms,
 * wildcards, the ACP_PUT_TAG poll), requests, communicators, collectives
 * and algorithm selection. Run with 2 ranks; the recorded schedule is also
 * a consistent one (every send has its receive). Values the program gets
 * back are checked with CHECK (exit status 9 on a mismatch). */
#include <stdio.h>
#include <stdlib.h>
#include "mgen.h"

#define CHECK(c) do { if (!(c)) { \
    printf("CHECK failed at line %d: %s\n", __LINE__, #c); exit(9); } \
} while (0)

int MGEN_Main(int argc, char **argv)
{
    int rank, size, other, idx, flag, r, n;
    double buf[256];
    MGEN_Status st;
    MGEN_Status sts[3];
    MGEN_Request q[3], one, two[2];
    (void)argc; (void)argv;
    MGEN_Comm_rank(MGEN_COMM_WORLD, &rank);
    MGEN_Comm_size(MGEN_COMM_WORLD, &size);
    other = 1 - rank;

    /* Blocking messages: full forms, NSIM short forms, wildcards. */
    MGEN_Send(buf, 4, MGEN_INT, other, 5, MGEN_COMM_WORLD);
    MGEN_Recv(buf, 4, MGEN_INT, other, 5, MGEN_COMM_WORLD, &st);
    CHECK(st.MGEN_SOURCE == other && st.MGEN_TAG == 5 && st.MGEN_ERROR == 0);
    MGEN_Send(buf, 3, MGEN_DOUBLE, other, 6);
    MGEN_Recv(buf, 3, MGEN_DOUBLE, MGEN_ANY_SOURCE, MGEN_ANY_TAG,
              MGEN_STATUS_IGNORE);
    /* NSIM idiom: a receive with ACP_PUT_TAG waits for a put to land. */
    MGEN_acp_handle h1 = MGEN_acp_copy(rank, other, 16);
    MGEN_Recv(NULL, 16, MGEN_BYTE, other, ACP_PUT_TAG, &st);
    MGEN_acp_complete(h1);

    /* Non-blocking: request names rN never clash with handles. */
    MGEN_Isend(buf, 8, MGEN_BYTE, other, 1, MGEN_COMM_WORLD, &q[0]);
    MGEN_acp_handle h2 = MGEN_rdma_put(other, 32, ACP_PUT_TAG);
    MGEN_Irecv(buf, 8, MGEN_BYTE, MGEN_ANY_SOURCE, 1, MGEN_COMM_WORLD, &q[1]);
    CHECK(q[0] == 1 && q[1] == 2 && h2 == 2);
    MGEN_Recv(NULL, 32, MGEN_BYTE, other, ACP_PUT_TAG, MGEN_COMM_WORLD, &st);
    MGEN_acp_complete(h2);
    MGEN_Wait(&q[0], MGEN_STATUS_IGNORE);
    CHECK(q[0] == MGEN_REQUEST_NULL);
    MGEN_Wait(&q[0], &st); /* null request: records nothing */
    CHECK(st.MGEN_SOURCE == MGEN_ANY_SOURCE && st.MGEN_TAG == MGEN_ANY_TAG);
    MGEN_Isend(buf, 2, MGEN_INT, other, 2, MGEN_COMM_WORLD, &one);
    MGEN_Irecv(buf, 2, MGEN_INT, other, 2, MGEN_COMM_WORLD, &q[2]);
    MGEN_Waitall(3, q, sts); /* q[0] is null: waitall r2 r4 */
    CHECK(sts[1].MGEN_SOURCE == MGEN_ANY_SOURCE && sts[2].MGEN_SOURCE == other);
    CHECK(q[0] == 0 && q[1] == 0 && q[2] == 0);
    MGEN_Waitall(3, q, MGEN_STATUSES_IGNORE); /* all null: nothing */
    MGEN_Wait(&one, MGEN_STATUS_IGNORE);
    MGEN_Irecv(buf, 1, MGEN_FLOAT, other, 3, MGEN_COMM_WORLD, &q[1]);
    MGEN_Isend(buf, 1, MGEN_FLOAT, other, 3, MGEN_COMM_WORLD, &q[2]);
    MGEN_Waitany(3, q, &idx, &st); /* the first non-null one: q[1] */
    CHECK(idx == 1 && q[1] == 0 && q[2] == 6 && st.MGEN_TAG == 3);
    MGEN_Waitany(2, q, &idx, &st);
    CHECK(idx == MGEN_UNDEFINED);
    flag = 0;
    MGEN_Test(&q[2], &flag, MGEN_STATUS_IGNORE);
    CHECK(flag == 1 && q[2] == 0);
    MGEN_Sendrecv(buf, 12, MGEN_BYTE, other, 8, buf, 3, MGEN_INT,
                  MGEN_ANY_SOURCE, MGEN_ANY_TAG, MGEN_COMM_WORLD, &st);

    /* NSIM control messages: nothing recorded. */
    t_NsimRoutingInfo info = {0, 0, 0, 0};
    LMGEN_Isend_acp_put_ctrl(other, MGEN_COMM_WORLD, &one, 0, &info);
    CHECK(one == MGEN_REQUEST_NULL);
    LMGEN_Wait_ctrl(&one, &st);

    /* Communicators: half has both ranks in reverse order (key 1 - rank). */
    MGEN_Comm dup, half, solo, duphalf;
    MGEN_Comm_dup(MGEN_COMM_WORLD, &dup);
    MGEN_Comm_rank(dup, &r);
    MGEN_Comm_size(dup, &n);
    CHECK(r == rank && n == size);
    MGEN_Comm_split(dup, 0, 1 - rank, &half);
    MGEN_Comm_split(MGEN_COMM_WORLD, rank == 0 ? 3 : MGEN_UNDEFINED, 0, &solo);
    CHECK(rank == 0 ? solo != MGEN_COMM_NULL : solo == MGEN_COMM_NULL);
    MGEN_Comm_split_info(half, 1 - rank, 2);
    MGEN_Comm_dup(half, &duphalf);
    MGEN_Comm_rank(duphalf, &r);
    MGEN_Comm_size(duphalf, &n);
    CHECK(r == 1 - rank && n == 2);
    if (r == 0) {
        MGEN_Send(buf, 1, MGEN_CHAR, 1, 9, half);
        MGEN_Recv(buf, 1, MGEN_CHAR, 1, 9, half, MGEN_STATUS_IGNORE);
    } else {
        MGEN_Recv(buf, 1, MGEN_CHAR, 0, 9, half, MGEN_STATUS_IGNORE);
        MGEN_Send(buf, 1, MGEN_CHAR, 0, 9, half);
    }
    MGEN_Isend(buf, 1, MGEN_CHAR, 1 - r, 9, duphalf, &two[0]);
    MGEN_Irecv(buf, 1, MGEN_CHAR, 1 - r, 9, duphalf, &two[1]);
    MGEN_Waitall(2, two, MGEN_STATUSES_IGNORE);

    /* Collectives, with MGEN_IN_PLACE and algorithm selection. */
    MGEN_Barrier(MGEN_COMM_WORLD);
    MGEN_Barrier(dup);
    MGEN_Barrier_algo(MGEN_COMM_WORLD, "ring", "rdma");
    MGEN_Barrier_algo(dup, NULL, "msg");
    MGEN_Coll_algo("dissemination");
    MGEN_Barrier_algo(half, NULL, NULL); /* takes the pending algorithm */
    MGEN_Bcast(buf, 128, MGEN_DOUBLE, 1, MGEN_COMM_WORLD);
    MGEN_Coll_algo("binomial");
    MGEN_Reduce(buf, buf, 16, MGEN_INT, MGEN_MAX, 0, dup);
    MGEN_Reduce(buf, buf, 16, MGEN_INT, MGEN_MIN, 0, dup); /* default again */
    MGEN_Coll_algo("recursive_doubling");
    MGEN_Coll_algo("ring"); /* the later choice wins */
    MGEN_Allreduce(MGEN_IN_PLACE, buf, 5, MGEN_FLOAT, MGEN_PROD,
                   MGEN_COMM_WORLD);
    MGEN_Allreduce(buf, buf, 1, MGEN_DOUBLE, MGEN_SUM, half);
    MGEN_Alltoall(buf, 64, MGEN_BYTE, buf, 64, MGEN_BYTE, MGEN_COMM_WORLD);
    MGEN_Alltoall(MGEN_IN_PLACE, 0, 0, buf, 2, MGEN_INT, duphalf);
    MGEN_Allgather(buf, 3, MGEN_INT, buf, 3, MGEN_INT, MGEN_COMM_WORLD);
    MGEN_Allgather(MGEN_IN_PLACE, 0, 0, buf, 1, MGEN_DOUBLE, dup);
    MGEN_Gather(rank == 0 ? MGEN_IN_PLACE : buf, 7, MGEN_BYTE, buf, 7,
                MGEN_BYTE, 0, MGEN_COMM_WORLD);
    MGEN_Scatter(buf, 9, MGEN_BYTE, rank == 1 ? MGEN_IN_PLACE : buf, 9,
                 MGEN_BYTE, 1, MGEN_COMM_WORLD);
    MGEN_Coll_algo("ring");
    MGEN_Coll_algo(NULL); /* cleared: nothing pending */
    MGEN_Scatter(buf, 4, MGEN_INT, buf, 4, MGEN_INT, 0, half);
    if (rank == 0)
        MGEN_Barrier(solo);

    MGEN_Comm_free(&duphalf);
    MGEN_Comm_free(&half);
    MGEN_Comm_free(&dup);
    CHECK(dup == MGEN_COMM_NULL);
    if (rank == 0)
        MGEN_Comm_free(&solo);
    return 0;
}
