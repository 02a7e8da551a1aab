/*
 * exchange.c - particle data exchange after a domain re-decomposition
 * (Susukita et al. 2015, NSIM-ACE section 4.3), as an MGEN program.
 *
 *   acesim run exchange.c --machine M --ranks P -- MATRIX MODE T_PACK_NS SCOPE
 *
 * MATRIX     text file: P, then P rows of P particle counts; row = sender,
 *            column = receiver (gen_matrix.py writes it). Like the paper's
 *            program, which read the record of its real run.
 * MODE       "before": barrier, pack, puts;  "after": pack, barrier, puts.
 * T_PACK_NS  pack time per particle in ns: the pack is MGEN_Comp(n * T_pack),
 *            n = particles this rank sends (in the puts it makes).
 * SCOPE      "all": every destination; "inter": inter-node puts only (the
 *            node partner of rank r is r^1: block placement, 2 ranks per
 *            node); intra-node puts are left out (as the papers' "no
 *            intra-node" variant); the pack still covers every particle.
 *
 * Each particle is 48 bytes. Puts use tag 1; a receiver polls once per put
 * it gets (it knows its column of the matrix), then completes its own puts.
 * The barrier is the RDMA (put-based) recursive doubling barrier.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgen.h"

#define BYTES_PER_PARTICLE 48
#define TAG 1

static void die(const char *msg, const char *arg)
{
    fprintf(stderr, "exchange.c: %s%s\n", msg, arg ? arg : "");
    exit(1);
}

static void barrier(void)
{
    MGEN_Region_begin("barrier");
    MGEN_Barrier_algo(MGEN_COMM_WORLD, "recursive_doubling", "rdma");
    MGEN_Region_end("barrier");
}

int MGEN_Main(int argc, char **argv)
{
    int rank, size, p, i, j;
    if (argc != 5)
        die("usage: exchange.c MATRIX before|after T_PACK_NS all|inter", NULL);
    int before = strcmp(argv[2], "before") == 0;
    if (!before && strcmp(argv[2], "after") != 0)
        die("mode must be before or after, not ", argv[2]);
    double t_pack = atof(argv[3]);
    int inter_only = strcmp(argv[4], "inter") == 0;
    if (!inter_only && strcmp(argv[4], "all") != 0)
        die("scope must be all or inter, not ", argv[4]);

    MGEN_Comm_rank(MGEN_COMM_WORLD, &rank);
    MGEN_Comm_size(MGEN_COMM_WORLD, &size);

    FILE *f = fopen(argv[1], "r");
    if (!f)
        die("cannot open ", argv[1]);
    if (fscanf(f, "%d", &p) != 1 || p != size)
        die("matrix size differs from the number of ranks: ", argv[1]);
    /* Row `rank` (what I send) and column `rank` (what I receive). */
    long *send = calloc(size, sizeof *send);
    long *recv = calloc(size, sizeof *recv);
    MGEN_acp_handle *h = calloc(size, sizeof *h);
    if (!send || !recv || !h)
        die("out of memory", NULL);
    for (i = 0; i < size; i++)
        for (j = 0; j < size; j++) {
            long c;
            if (fscanf(f, "%ld", &c) != 1 || c < 0)
                die("bad matrix entry in ", argv[1]);
            if (i == rank)
                send[j] = c;
            if (j == rank)
                recv[i] = c;
        }
    fclose(f);

    int partner = rank ^ 1;
    long n_send = 0;
    int n_in = 0;
    for (j = 0; j < size; j++) {
        if (j != rank)
            n_send += send[j]; /* everything is packed, in both scopes */
        if (j == rank || (inter_only && j == partner)) {
            send[j] = 0;
            recv[j] = 0;
        }
        if (recv[j] > 0)
            n_in++;
    }

    if (before)
        barrier();
    MGEN_Region_begin("pack");
    MGEN_Comp((double)n_send * t_pack);
    MGEN_Region_end("pack");
    if (!before)
        barrier();

    MGEN_Region_begin("exchange");
    /* Destinations in rank order, as a program walking its record would. */
    for (j = 0; j < size; j++) {
        if (send[j] > 0)
            h[j] = MGEN_rdma_put(j, (int)(send[j] * BYTES_PER_PARTICLE), TAG);
    }
    for (i = 0; i < n_in; i++)
        MGEN_rdma_poll(TAG);
    for (j = 0; j < size; j++) {
        if (send[j] > 0)
            MGEN_acp_complete(h[j]);
    }
    MGEN_Region_end("exchange");

    free(send);
    free(recv);
    free(h);
    return 0;
}
