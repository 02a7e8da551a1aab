/* A 2D halo exchange on a periodic PX x PY grid of ranks (PX*PY = size, PX as close to the
 * square root as divides): each step every rank posts MPI_Irecv from and MPI_Isend to its four
 * neighbours (N edge doubles each), then MPI_Waitall.
 * Usage: mpirun -np N ./halo2d [n [steps]]  (defaults: 256 doubles, 3 steps) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = argc > 1 ? atoi(argv[1]) : 256;
  int steps = argc > 2 ? atoi(argv[2]) : 3;
  int px = 1;
  for (int d = 1; d * d <= size; ++d)
    if (size % d == 0)
      px = d;
  int py = size / px;
  int x = rank % px, y = rank / px;
  int nb[4] = {
      ((x + px - 1) % px) + y * px, /* west */
      ((x + 1) % px) + y * px,      /* east */
      x + ((y + py - 1) % py) * px, /* south */
      x + ((y + 1) % py) * px,      /* north */
  };
  double *send = calloc((size_t)(4 * n), sizeof(double));
  double *recv = calloc((size_t)(4 * n), sizeof(double));
  MPI_Request req[8];
  for (int s = 0; s < steps; ++s) {
    for (int d = 0; d < 4; ++d)
      MPI_Irecv(recv + d * n, n, MPI_DOUBLE, nb[d], d ^ 1, MPI_COMM_WORLD, &req[d]);
    for (int d = 0; d < 4; ++d)
      MPI_Isend(send + d * n, n, MPI_DOUBLE, nb[d], d, MPI_COMM_WORLD, &req[4 + d]);
    MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 4 * n; ++i) /* a little compute */
      send[i] = 0.5 * (send[i] + recv[i]) + 1.0;
  }
  if (rank == 0)
    printf("halo2d: %d x %d ranks, %d doubles per edge, %d steps\n", px, py, n, steps);
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
