/* An allreduce loop: ITERS MPI_Allreduce (MPI_SUM) of N doubles on MPI_COMM_WORLD, with a
 * barrier before and after.
 * Usage: mpirun -np N ./allreduce [n [iters]]  (defaults: 1024 doubles, 10 iterations) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = argc > 1 ? atoi(argv[1]) : 1024;
  int iters = argc > 2 ? atoi(argv[2]) : 10;
  double *a = calloc((size_t)n, sizeof(double)), *b = calloc((size_t)n, sizeof(double));
  for (int i = 0; i < n; ++i)
    a[i] = rank + i;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int it = 0; it < iters; ++it)
    MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("allreduce: %d ranks, %d doubles, %d iterations, b[0] = %g\n", size, n, iters, b[0]);
  free(a);
  free(b);
  MPI_Finalize();
  return 0;
}
