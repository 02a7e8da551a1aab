/* A ring: each rank sends ITERS messages of BYTES bytes to its right neighbour and receives
 * as many from its left (blocking MPI_Send/MPI_Recv; even ranks send first).
 * Usage: mpirun -np N ./ring [bytes [iters]]  (defaults: 4096 bytes, 1 iteration) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int bytes = argc > 1 ? atoi(argv[1]) : 4096;
  int iters = argc > 2 ? atoi(argv[2]) : 1;
  char *out = calloc((size_t)bytes, 1), *in = calloc((size_t)bytes, 1);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int i = 0; i < iters; ++i) {
    if (rank % 2 == 0) {
      MPI_Send(out, bytes, MPI_BYTE, right, i, MPI_COMM_WORLD);
      MPI_Recv(in, bytes, MPI_BYTE, left, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(in, bytes, MPI_BYTE, left, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(out, bytes, MPI_BYTE, right, i, MPI_COMM_WORLD);
    }
  }
  if (rank == 0)
    printf("ring: %d ranks, %d bytes, %d iterations\n", size, bytes, iters);
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
