/*
 * mgen.h - public header for MGEN programs recorded by acesim.
 *
 * An MGEN program is an MPI-like C program that moves no data: each call
 * only records one operation of an acesim schedule (docs/schedule-format.md).
 * The user defines MGEN_Main(); the recorder runtime (mgen_runtime.c)
 * defines main(), runs MGEN_Main once per rank in a fresh process and
 * writes the recorded schedule.
 *
 * Every call that records (or can fail) is a macro that passes the call
 * site's __FILE__/__LINE__ to an mgen_*_at() function, so the schedule and
 * error messages point at the user's source line.
 */
#ifndef MGEN_H
#define MGEN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Types and constants ---------------------------------------------- */

#define MGEN_SUCCESS 0

typedef int MGEN_Comm;
/* Not 0, so a zero-initialised MGEN_Comm is caught as invalid. */
#define MGEN_COMM_WORLD ((MGEN_Comm)0x44000000)

/* Handles of RDMA operations; numbered 1, 2, 3... per rank. */
typedef int64_t MGEN_acp_handle;
typedef MGEN_acp_handle MGEN_acp_handle_t;

/* Tag recorded for the put side of MGEN_acp_copy; reserved for it. */
#define ACP_PUT_TAG 0x7FFF0000

typedef int MGEN_Request;

typedef struct MGEN_Status {
    int MGEN_SOURCE;
    int MGEN_TAG;
    int MGEN_ERROR;
} MGEN_Status;

/* Datatype values are opaque; use MGEN_Type_size() for their byte size. */
typedef int MGEN_Datatype;
#define MGEN_BYTE   ((MGEN_Datatype)1)
#define MGEN_CHAR   ((MGEN_Datatype)2)
#define MGEN_INT    ((MGEN_Datatype)3)
#define MGEN_DOUBLE ((MGEN_Datatype)4)
#define MGEN_FLOAT  ((MGEN_Datatype)5)
#define MGEN_LONG   ((MGEN_Datatype)6)

/* ---- Entry point, defined by the user program -------------------------- */

/* Its return value is ignored (papers' examples fall off the end). */
int MGEN_Main(int argc, char **argv);

/* ---- Environment (records nothing) ------------------------------------ */

int MGEN_Init(int *argc, char ***argv);
int MGEN_Finalize(void);
double MGEN_Wtime(void);

int mgen_comm_rank_at(const char *file, int line, MGEN_Comm comm, int *rank);
int mgen_comm_size_at(const char *file, int line, MGEN_Comm comm, int *size);
int mgen_type_size_at(const char *file, int line, MGEN_Datatype type, int *size);

#define MGEN_Comm_rank(comm, rank) \
    mgen_comm_rank_at(__FILE__, __LINE__, (comm), (rank))
#define MGEN_Comm_size(comm, size) \
    mgen_comm_size_at(__FILE__, __LINE__, (comm), (size))
#define MGEN_Type_size(type, size) \
    mgen_type_size_at(__FILE__, __LINE__, (type), (size))

/* ---- RDMA (ACP-style) operations --------------------------------------- */

MGEN_acp_handle mgen_rdma_put_at(const char *file, int line,
                                 int dest, int size, int tag);
void mgen_rdma_poll_at(const char *file, int line, int tag);
void mgen_acp_complete_at(const char *file, int line, MGEN_acp_handle h);
MGEN_acp_handle mgen_acp_copy_at(const char *file, int line,
                                 int src, int dst, int size);

#define MGEN_rdma_put(dest, size, tag) \
    mgen_rdma_put_at(__FILE__, __LINE__, (dest), (size), (tag))
#define MGEN_rdma_poll(tag) \
    mgen_rdma_poll_at(__FILE__, __LINE__, (tag))
#define MGEN_acp_complete(h) \
    mgen_acp_complete_at(__FILE__, __LINE__, (h))
#define MGEN_acp_copy(src, dst, size) \
    mgen_acp_copy_at(__FILE__, __LINE__, (src), (dst), (size))

/* ---- Computation and regions ------------------------------------------- */

/* t_ns is in nanoseconds; recorded in picoseconds. */
void mgen_comp_at(const char *file, int line, double t_ns);
void mgen_region_begin_at(const char *file, int line, const char *name);
void mgen_region_end_at(const char *file, int line, const char *name);

#define MGEN_Comp(t_ns) \
    mgen_comp_at(__FILE__, __LINE__, (double)(t_ns))
#define MGEN_Region_begin(name) \
    mgen_region_begin_at(__FILE__, __LINE__, (name))
#define MGEN_Region_end(name) \
    mgen_region_end_at(__FILE__, __LINE__, (name))

/* ---- Point-to-point / collectives: to be added as one more block of the
 * same pattern (prototype of mgen_xxx_at + MGEN_xxx macro). ------------- */

#ifdef __cplusplus
}
#endif

#endif /* MGEN_H */
