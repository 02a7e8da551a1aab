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

#include <stddef.h> /* NULL, for the buffers MGEN programs pass */
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

/* Returns 0 on success; any other value fails the recording, as exit() with
 * that code does. The papers' examples fall off the end of MGEN_Main: the
 * program's MGEN_Main is therefore compiled as a `main` (for which C says that
 * reaching the closing brace returns 0) that keeps the link name MGEN_Main;
 * the recorder runtime defines the real main(). */
#ifdef MGEN_RUNTIME_INTERNAL
int MGEN_Main(int argc, char **argv);
#else
#define MGEN_STR2_(x) #x
#define MGEN_STR_(x) MGEN_STR2_(x)
int main(int argc, char **argv)
    __asm__(MGEN_STR_(__USER_LABEL_PREFIX__) "MGEN_Main");
#define MGEN_Main main
#endif

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

/* ---- Loops --------------------------------------------------------------
 * MGEN_Loop_begin(n) ... MGEN_Loop_end() records the calls between them once
 * as the body of `repeat n { ... }` (docs/schedule-format.md#loops): acesim
 * runs the body n times, so a 20,000-iteration program stays small. Your
 * code runs the body once (do not loop around it yourself), and the body
 * must complete what it starts: wait for its requests, close its regions,
 * create no communicator. Loops nest, up to 64 deep. */
void mgen_loop_begin_at(const char *file, int line, long long n);
void mgen_loop_end_at(const char *file, int line);

#define MGEN_Loop_begin(n) \
    mgen_loop_begin_at(__FILE__, __LINE__, (long long)(n))
#define MGEN_Loop_end() \
    mgen_loop_end_at(__FILE__, __LINE__)

/* ---- Messages (MPI semantics) ------------------------------------------
 * Recorded as send/recv/isend/irecv/sendrecv/wait/waitall statements;
 * sizes are count * MGEN_Type_size(type) bytes. Ranks are ranks of the
 * communicator; the world communicator is recorded by omitting comm=. */

#define MGEN_ANY_SOURCE (-1)    /* recorded as `any` */
#define MGEN_ANY_TAG    (-1)    /* recorded as `any` */
#define MGEN_UNDEFINED  (-32766) /* comm_split color `undefined`; Waitany index */

/* Requests are named rN in the schedule, N = 1, 2, 3... per rank; the
 * MGEN_Request value is N. Wait/Test set it back to MGEN_REQUEST_NULL. */
#define MGEN_REQUEST_NULL ((MGEN_Request)0)
#define MGEN_STATUS_IGNORE ((MGEN_Status *)0)
#define MGEN_STATUSES_IGNORE ((MGEN_Status *)0)
/* Send-buffer sentinel of Reduce/Allreduce/Gather/Allgather/Alltoall, and
 * the root's receive buffer of Scatter: its size is taken from the other
 * count/type, as MPI defines. */
#define MGEN_IN_PLACE ((void *)-1)

int mgen_send_at(const char *file, int line, const void *buf, int count,
                 MGEN_Datatype type, int dest, int tag, MGEN_Comm comm);
int mgen_recv_at(const char *file, int line, void *buf, int count,
                 MGEN_Datatype type, int source, int tag, MGEN_Comm comm,
                 MGEN_Status *status);
int mgen_isend_at(const char *file, int line, const void *buf, int count,
                  MGEN_Datatype type, int dest, int tag, MGEN_Comm comm,
                  MGEN_Request *req);
int mgen_irecv_at(const char *file, int line, void *buf, int count,
                  MGEN_Datatype type, int source, int tag, MGEN_Comm comm,
                  MGEN_Request *req);
int mgen_sendrecv_at(const char *file, int line,
                     const void *sbuf, int scount, MGEN_Datatype stype,
                     int dest, int sendtag,
                     void *rbuf, int rcount, MGEN_Datatype rtype,
                     int source, int recvtag,
                     MGEN_Comm comm, MGEN_Status *status);
int mgen_wait_at(const char *file, int line, MGEN_Request *req,
                 MGEN_Status *status);
int mgen_waitall_at(const char *file, int line, int n, MGEN_Request *reqs,
                    MGEN_Status *statuses);
int mgen_waitany_at(const char *file, int line, int n, MGEN_Request *reqs,
                    int *index, MGEN_Status *status);
int mgen_test_at(const char *file, int line, MGEN_Request *req, int *flag,
                 MGEN_Status *status);

/* MGEN_Send takes 5 (NSIM form, world) or 6 arguments, MGEN_Recv 6 (NSIM
 * form: buf, count, type, source, tag, status) or 7. Any other count is a
 * compile error naming MGEN_Send_takes_5_or_6_arguments (or the Recv one). */
#define MGEN_PICK9_(a1, a2, a3, a4, a5, a6, a7, a8, a9, NAME, ...) NAME
#define mgen_send5_(f, l, buf, count, type, dest, tag) \
    mgen_send_at(f, l, (buf), (count), (type), (dest), (tag), MGEN_COMM_WORLD)
#define mgen_send6_(f, l, buf, count, type, dest, tag, comm) \
    mgen_send_at(f, l, (buf), (count), (type), (dest), (tag), (comm))
#define mgen_recv6_(f, l, buf, count, type, source, tag, status) \
    mgen_recv_at(f, l, (buf), (count), (type), (source), (tag), \
                 MGEN_COMM_WORLD, (status))
#define mgen_recv7_(f, l, buf, count, type, source, tag, comm, status) \
    mgen_recv_at(f, l, (buf), (count), (type), (source), (tag), (comm), \
                 (status))
#define MGEN_Send(...) \
    MGEN_PICK9_(__VA_ARGS__, MGEN_Send_takes_5_or_6_arguments, \
        MGEN_Send_takes_5_or_6_arguments, MGEN_Send_takes_5_or_6_arguments, \
        mgen_send6_, mgen_send5_, MGEN_Send_takes_5_or_6_arguments, \
        MGEN_Send_takes_5_or_6_arguments, MGEN_Send_takes_5_or_6_arguments, \
        MGEN_Send_takes_5_or_6_arguments, MGEN_Send_takes_5_or_6_arguments) \
    (__FILE__, __LINE__, __VA_ARGS__)
#define MGEN_Recv(...) \
    MGEN_PICK9_(__VA_ARGS__, MGEN_Recv_takes_6_or_7_arguments, \
        MGEN_Recv_takes_6_or_7_arguments, mgen_recv7_, mgen_recv6_, \
        MGEN_Recv_takes_6_or_7_arguments, MGEN_Recv_takes_6_or_7_arguments, \
        MGEN_Recv_takes_6_or_7_arguments, MGEN_Recv_takes_6_or_7_arguments, \
        MGEN_Recv_takes_6_or_7_arguments, MGEN_Recv_takes_6_or_7_arguments) \
    (__FILE__, __LINE__, __VA_ARGS__)

#define MGEN_Isend(buf, count, type, dest, tag, comm, req) \
    mgen_isend_at(__FILE__, __LINE__, (buf), (count), (type), (dest), \
                  (tag), (comm), (req))
#define MGEN_Irecv(buf, count, type, source, tag, comm, req) \
    mgen_irecv_at(__FILE__, __LINE__, (buf), (count), (type), (source), \
                  (tag), (comm), (req))
#define MGEN_Sendrecv(sbuf, scount, stype, dest, sendtag, rbuf, rcount, \
                      rtype, source, recvtag, comm, status) \
    mgen_sendrecv_at(__FILE__, __LINE__, (sbuf), (scount), (stype), (dest), \
                     (sendtag), (rbuf), (rcount), (rtype), (source), \
                     (recvtag), (comm), (status))
#define MGEN_Wait(req, status) \
    mgen_wait_at(__FILE__, __LINE__, (req), (status))
#define MGEN_Waitall(n, reqs, statuses) \
    mgen_waitall_at(__FILE__, __LINE__, (n), (reqs), (statuses))
#define MGEN_Waitany(n, reqs, index, status) \
    mgen_waitany_at(__FILE__, __LINE__, (n), (reqs), (index), (status))
#define MGEN_Test(req, flag, status) \
    mgen_test_at(__FILE__, __LINE__, (req), (flag), (status))

/* ---- Communicators -------------------------------------------------------
 * Communicators made by Comm_split/Comm_dup are named c1, c2... per rank.
 * The recorder sees one rank at a time, so it cannot know who else chose
 * the same color: MGEN_Comm_rank/size on a split communicator is an error
 * unless the program stated them with MGEN_Comm_split_info. */

#define MGEN_COMM_NULL ((MGEN_Comm)0x04000000)

int mgen_comm_split_at(const char *file, int line, MGEN_Comm comm,
                       int color, int key, MGEN_Comm *newcomm);
int mgen_comm_dup_at(const char *file, int line, MGEN_Comm comm,
                     MGEN_Comm *newcomm);
int mgen_comm_free_at(const char *file, int line, MGEN_Comm *comm);
int mgen_comm_split_info_at(const char *file, int line, MGEN_Comm comm,
                            int rank, int size);

#define MGEN_Comm_split(comm, color, key, newcomm) \
    mgen_comm_split_at(__FILE__, __LINE__, (comm), (color), (key), (newcomm))
#define MGEN_Comm_dup(comm, newcomm) \
    mgen_comm_dup_at(__FILE__, __LINE__, (comm), (newcomm))
#define MGEN_Comm_free(comm) \
    mgen_comm_free_at(__FILE__, __LINE__, (comm))
/* acesim extension: this rank is `rank` of `size` in split communicator
 * `comm` (records nothing; makes MGEN_Comm_rank/size work on it). */
#define MGEN_Comm_split_info(comm, rank, size) \
    mgen_comm_split_info_at(__FILE__, __LINE__, (comm), (rank), (size))

/* ---- Collectives ---------------------------------------------------------- */

typedef int MGEN_Op;
#define MGEN_SUM  ((MGEN_Op)1)
#define MGEN_MAX  ((MGEN_Op)2)
#define MGEN_MIN  ((MGEN_Op)3)
#define MGEN_PROD ((MGEN_Op)4)

int mgen_barrier_at(const char *file, int line, MGEN_Comm comm);
int mgen_barrier_algo_at(const char *file, int line, MGEN_Comm comm,
                         const char *algo, const char *transport);
int mgen_coll_algo_at(const char *file, int line, const char *algo);
int mgen_bcast_at(const char *file, int line, void *buf, int count,
                  MGEN_Datatype type, int root, MGEN_Comm comm);
int mgen_reduce_at(const char *file, int line, const void *sbuf, void *rbuf,
                   int count, MGEN_Datatype type, MGEN_Op op, int root,
                   MGEN_Comm comm);
int mgen_allreduce_at(const char *file, int line, const void *sbuf,
                      void *rbuf, int count, MGEN_Datatype type, MGEN_Op op,
                      MGEN_Comm comm);
int mgen_alltoall_at(const char *file, int line, const void *sbuf,
                     int scount, MGEN_Datatype stype, void *rbuf, int rcount,
                     MGEN_Datatype rtype, MGEN_Comm comm);
int mgen_allgather_at(const char *file, int line, const void *sbuf,
                      int scount, MGEN_Datatype stype, void *rbuf,
                      int rcount, MGEN_Datatype rtype, MGEN_Comm comm);
int mgen_gather_at(const char *file, int line, const void *sbuf, int scount,
                   MGEN_Datatype stype, void *rbuf, int rcount,
                   MGEN_Datatype rtype, int root, MGEN_Comm comm);
int mgen_scatter_at(const char *file, int line, const void *sbuf, int scount,
                    MGEN_Datatype stype, void *rbuf, int rcount,
                    MGEN_Datatype rtype, int root, MGEN_Comm comm);

#define MGEN_Barrier(comm) \
    mgen_barrier_at(__FILE__, __LINE__, (comm))
/* acesim extension: barrier with algorithm and transport ("msg"/"rdma");
 * either may be NULL for the default. */
#define MGEN_Barrier_algo(comm, algo, transport) \
    mgen_barrier_algo_at(__FILE__, __LINE__, (comm), (algo), (transport))
/* acesim extension: algorithm of the NEXT collective call only. */
#define MGEN_Coll_algo(algo) \
    mgen_coll_algo_at(__FILE__, __LINE__, (algo))
#define MGEN_Bcast(buf, count, type, root, comm) \
    mgen_bcast_at(__FILE__, __LINE__, (buf), (count), (type), (root), (comm))
#define MGEN_Reduce(sbuf, rbuf, count, type, op, root, comm) \
    mgen_reduce_at(__FILE__, __LINE__, (sbuf), (rbuf), (count), (type), \
                   (op), (root), (comm))
#define MGEN_Allreduce(sbuf, rbuf, count, type, op, comm) \
    mgen_allreduce_at(__FILE__, __LINE__, (sbuf), (rbuf), (count), (type), \
                      (op), (comm))
#define MGEN_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm) \
    mgen_alltoall_at(__FILE__, __LINE__, (sbuf), (scount), (stype), (rbuf), \
                     (rcount), (rtype), (comm))
#define MGEN_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm) \
    mgen_allgather_at(__FILE__, __LINE__, (sbuf), (scount), (stype), \
                      (rbuf), (rcount), (rtype), (comm))
#define MGEN_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm) \
    mgen_gather_at(__FILE__, __LINE__, (sbuf), (scount), (stype), (rbuf), \
                   (rcount), (rtype), (root), (comm))
#define MGEN_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm) \
    mgen_scatter_at(__FILE__, __LINE__, (sbuf), (scount), (stype), (rbuf), \
                    (rcount), (rtype), (root), (comm))

/* ---- NSIM (2012 paper) compatibility -------------------------------------
 * In NSIM the receiver of an acp put sent the put's control packet itself
 * (LMGEN_Isend_acp_put_ctrl) and waited for it (LMGEN_Wait_ctrl). acesim's
 * receiving NIC does that on its own, so these record nothing: the first
 * sets *rq to MGEN_REQUEST_NULL, the second is MGEN_Wait (a no-op on it). */

typedef struct t_NsimRoutingInfo {
    int routing;   /* NSIM routing algorithm id */
    int vc;        /* virtual channel */
    int nic;       /* NIC index */
    int hops;      /* hop count hint */
} t_NsimRoutingInfo;

int mgen_isend_acp_put_ctrl_at(const char *file, int line, int dest,
                               MGEN_Comm comm, MGEN_Request *rq, int flag,
                               t_NsimRoutingInfo *info);

#define LMGEN_Isend_acp_put_ctrl(dest, comm, rq, flag, info) \
    mgen_isend_acp_put_ctrl_at(__FILE__, __LINE__, (dest), (comm), (rq), \
                               (flag), (info))
#define LMGEN_Wait_ctrl(rq, status) \
    mgen_wait_at(__FILE__, __LINE__, (rq), (status))

#ifdef __cplusplus
}
#endif

#endif /* MGEN_H */
