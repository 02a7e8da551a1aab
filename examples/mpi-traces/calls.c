/* Every MPI call the acesim tracer records, once or a few times, with known arguments: the
 * trace_record test checks that the recorded trace reads back and replays to completion.
 * Needs an even number of ranks (pairs 0-1, 2-3, ...). Usage: mpirun -np 4 ./calls */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 64

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size % 2) {
    if (rank == 0)
      fprintf(stderr, "calls: needs an even number of ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int peer = rank ^ 1, even = rank % 2 == 0;
  double t0 = MPI_Wtime();
  int a[N], b[N], *all = calloc((size_t)(N * size), sizeof(int));
  int *counts = calloc((size_t)size, sizeof(int)), *displs = calloc((size_t)size, sizeof(int));
  for (int i = 0; i < N; ++i)
    a[i] = rank * N + i;
  for (int i = 0; i < size; ++i) {
    counts[i] = N;
    displs[i] = i * N;
  }
  MPI_Status st;
  MPI_Request r[4];
  int flag = 0, index = -1, outcount = 0, idx[4], count = 0;

  /* Blocking modes, probes and Get_count. */
  if (even) {
    MPI_Send(a, N, MPI_INT, peer, 1, MPI_COMM_WORLD);
    MPI_Ssend(a, N / 2, MPI_INT, peer, 2, MPI_COMM_WORLD);
    MPI_Recv(b, N, MPI_INT, peer, 3, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &count);
  } else {
    MPI_Probe(peer, 1, MPI_COMM_WORLD, &st);
    MPI_Recv(b, N, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    do
      MPI_Iprobe(peer, 2, MPI_COMM_WORLD, &flag, &st);
    while (!flag);
    MPI_Recv(b, N, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    MPI_Send(a, N, MPI_INT, peer, 3, MPI_COMM_WORLD);
  }
  /* Sendrecv and Sendrecv_replace. */
  MPI_Sendrecv(a, N, MPI_INT, peer, 4, b, N, MPI_INT, peer, 4, MPI_COMM_WORLD, &st);
  MPI_Sendrecv_replace(b, N, MPI_INT, peer, 5, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  /* Nonblocking, completed by each kind of wait and test. */
  MPI_Irecv(b, N, MPI_INT, peer, 6, MPI_COMM_WORLD, &r[0]);
  MPI_Issend(a, N, MPI_INT, peer, 6, MPI_COMM_WORLD, &r[1]);
  MPI_Wait(&r[0], &st);
  do
    MPI_Test(&r[1], &flag, MPI_STATUS_IGNORE);
  while (!flag);
  MPI_Irecv(b, N, MPI_INT, peer, 7, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(a, N, MPI_INT, peer, 7, MPI_COMM_WORLD, &r[1]);
  for (int k = 0; k < 2; ++k)
    MPI_Waitany(2, r, &index, &st);
  MPI_Irecv(b, N, MPI_INT, peer, 8, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(a, N, MPI_INT, peer, 8, MPI_COMM_WORLD, &r[1]);
  for (int done = 0; done < 2; done += outcount)
    MPI_Waitsome(2, r, &outcount, idx, MPI_STATUSES_IGNORE);
  MPI_Irecv(b, N, MPI_INT, peer, 9, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(a, N, MPI_INT, peer, 9, MPI_COMM_WORLD, &r[1]);
  do
    MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);
  while (!flag);
  MPI_Irecv(b, N, MPI_INT, peer, 10, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(a, N, MPI_INT, peer, 10, MPI_COMM_WORLD, &r[1]);
  for (int k = 0; k < 2;) {
    MPI_Testany(2, r, &index, &flag, &st);
    if (flag && index != MPI_UNDEFINED)
      ++k;
  }
  MPI_Irecv(b, N, MPI_INT, peer, 11, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(a, N, MPI_INT, peer, 11, MPI_COMM_WORLD, &r[1]);
  for (int done = 0; done < 2; done += outcount)
    MPI_Testsome(2, r, &outcount, idx, MPI_STATUSES_IGNORE);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE); /* both already null */
  /* Persistent requests, started twice. */
  MPI_Recv_init(b, N, MPI_INT, peer, 12, MPI_COMM_WORLD, &r[2]);
  MPI_Send_init(a, N, MPI_INT, peer, 12, MPI_COMM_WORLD, &r[3]);
  for (int k = 0; k < 2; ++k) {
    MPI_Startall(2, &r[2]);
    MPI_Waitall(2, &r[2], MPI_STATUSES_IGNORE);
  }
  MPI_Start(&r[2]);
  MPI_Start(&r[3]);
  MPI_Waitall(2, &r[2], MPI_STATUSES_IGNORE);
  MPI_Request_free(&r[2]);
  MPI_Request_free(&r[3]);

  /* Collectives on MPI_COMM_WORLD. */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Reduce(a, b, N, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD);
  MPI_Allreduce(a, b, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Scan(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Exscan(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Gather(a, N, MPI_INT, all, N, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Gatherv(a, N, MPI_INT, all, counts, displs, MPI_INT, 1, MPI_COMM_WORLD);
  MPI_Scatter(all, N, MPI_INT, b, N, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Scatterv(all, counts, displs, MPI_INT, b, N, MPI_INT, 1, MPI_COMM_WORLD);
  MPI_Allgather(a, N, MPI_INT, all, N, MPI_INT, MPI_COMM_WORLD);
  MPI_Allgatherv(a, N, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
  int *one = calloc((size_t)size, sizeof(int)), *ones = calloc((size_t)size, sizeof(int));
  int *rc = calloc((size_t)size, sizeof(int));
  for (int i = 0; i < size; ++i) {
    one[i] = 1;
    ones[i] = i;
    rc[i] = 2;
  }
  MPI_Alltoall(all, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Alltoallv(all, one, ones, MPI_INT, b, one, ones, MPI_INT, MPI_COMM_WORLD);
  MPI_Reduce_scatter(all, b, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

  /* Communicators: split, dup, create from a group, then collectives and p2p on them. */
  MPI_Comm half, dup, firsts;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  int hrank, hsize;
  MPI_Comm_rank(half, &hrank);
  MPI_Comm_size(half, &hsize);
  MPI_Allreduce(a, b, N, MPI_INT, MPI_SUM, half);
  MPI_Comm_dup(half, &dup);
  MPI_Bcast(a, N, MPI_INT, 0, dup);
  if (hsize > 1)
    MPI_Sendrecv(a, N, MPI_INT, (hrank + 1) % hsize, 13, b, N, MPI_INT,
                 (hrank + hsize - 1) % hsize, 13, dup, MPI_STATUS_IGNORE);
  MPI_Group world, pair;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int members[2] = {0, 1};
  MPI_Group_incl(world, 2, members, &pair);
  MPI_Comm_create(MPI_COMM_WORLD, pair, &firsts);
  if (firsts != MPI_COMM_NULL) {
    MPI_Barrier(firsts);
    MPI_Comm_free(&firsts);
  }
  MPI_Group_free(&pair);
  MPI_Group_free(&world);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&half);
  /* MPI_PROC_NULL peers: a non-periodic shift (the ends send or receive only) and calls to
   * nobody, which do nothing. */
  int down = rank == 0 ? MPI_PROC_NULL : rank - 1, up = rank == size - 1 ? MPI_PROC_NULL : rank + 1;
  MPI_Sendrecv(a, N, MPI_INT, down, 15, b, N, MPI_INT, up, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Isend(a, N, MPI_INT, MPI_PROC_NULL, 16, MPI_COMM_WORLD, &r[0]);
  MPI_Irecv(b, N, MPI_INT, MPI_PROC_NULL, 16, MPI_COMM_WORLD, &r[1]);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  MPI_Recv(b, N, MPI_INT, MPI_PROC_NULL, 17, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  /* A derived datatype: 4 ints a block. */
  MPI_Datatype quad;
  MPI_Type_contiguous(4, MPI_INT, &quad);
  MPI_Type_commit(&quad);
  if (even)
    MPI_Send(a, N / 4, quad, peer, 14, MPI_COMM_WORLD);
  else
    MPI_Recv(b, N / 4, quad, peer, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Type_free(&quad);
  double t1 = MPI_Wtime();
  if (rank == 0)
    printf("calls: %d ranks, %.6f s, count %d\n", size, t1 - t0, count);
  free(all);
  free(counts);
  free(displs);
  free(one);
  free(ones);
  free(rc);
  MPI_Finalize();
  return 0;
}
