/*
 * mgen_runtime.c - the MGEN recorder runtime.
 *
 * Linked with a user's MGEN program; defines main():
 *
 *   prog.exe --acesim-ranks N --acesim-out PATH [-- user args...]
 *
 * writes an acesim schedule (docs/schedule-format.md) to PATH ("-" means
 * stdout). For every rank the parent forks a fresh child, so C globals of
 * the user program never leak from one rank into the next. The child runs
 * MGEN_Main, buffers its lines in memory and appends its "rank R" block to
 * the output in one go at exit. The parent waits for each child before
 * forking the next one, so the blocks come out in rank order.
 */
#define _GNU_SOURCE /* strsignal */
#define MGEN_RUNTIME_INTERNAL /* the real main() is ours */
#include "mgen.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Upper bound on ranks; keeps the fork loop and rank formatting sane. */
#define MGEN_MAX_RANKS (1 << 24)

/* ---- Per-rank state (only meaningful in a child) ----------------------- */

static int g_size = 0;
static int g_out_fd = -1;
static int g_flushed = 0;
static MGEN_acp_handle g_next_handle = 1;

/* Requests: MGEN_Request value N is recorded as rN; N = 1, 2, 3... */
struct req_rec {
    int source, tag; /* what a status reports (irecv); any/any for isend */
};
static struct req_rec *g_reqs = NULL; /* index N-1 */
static int g_nreqs = 0, g_reqs_cap = 0;

/* Communicators: index 0 is world, index i >= 1 is ci, whose MGEN_Comm
 * value is MGEN_COMM_WORLD + i. */
#define MGEN_MAX_COMMS (1 << 20)
enum { COMM_DUP = 1, COMM_SPLIT = 2 };
struct comm_rec {
    int parent; /* communicator index it was made from */
    int kind;   /* COMM_DUP or COMM_SPLIT */
    int known;  /* split: MGEN_Comm_split_info was called */
    int rank, size;
    int freed;
};
static struct comm_rec *g_comms = NULL; /* index i-1 */
static int g_ncomms = 0, g_comms_cap = 0;

/* Algorithm set by MGEN_Coll_algo for the next collective call. */
static char g_next_algo[64];

/* Growable in-memory buffer of this rank's block. */
static char *g_buf = NULL;
static size_t g_len = 0, g_cap = 0;

/* What the parent learns about the running rank, in a page shared with it
 * (mapped before the fork): its last MGEN call, so that when a rank crashes,
 * exits early or stalls the parent can say where it was (the strings are
 * literals of the program, at the same addresses in parent and child); how
 * many operations it recorded (the parent watches it move: --acesim-timeout);
 * whether it stopped at the size limit; what MGEN_Main returned. */
struct last_call {
    const char *file;
    const char *func;
    int line;
    volatile unsigned long long calls; /* MGEN calls so far */
    unsigned long long ops;            /* recorded operations so far */
    unsigned long long bytes;          /* size of the rank's block so far */
    int too_big;                       /* stopped: --acesim-max-bytes */
    int returned;                      /* MGEN_Main returned ... */
    int main_rc;                       /* ... this */
};
static struct last_call *g_last = NULL;

/* Most bytes all ranks' blocks may take together (--acesim-max-bytes; 0 =
 * no limit) and what the ranks before this one took. */
static unsigned long long g_max_bytes = 0;
static unsigned long long g_bytes_before = 0;
static unsigned long long g_ops = 0;
static int g_rank = -1;

static void too_big(void)
{
    /* No stdio: this can run in the middle of a formatted write. */
    char msg[512];
    int n = snprintf(msg, sizeof msg,
                     "rank %d: the recorded schedule grew past %llu bytes "
                     "after %llu operations of this rank\n",
                     g_rank, g_max_bytes, g_ops);
    if (g_last) {
        g_last->too_big = 1;
        g_last->ops = g_ops;
        g_last->bytes = g_bytes_before + g_len;
    }
    if (n > 0) {
        ssize_t w = write(STDERR_FILENO, msg, (size_t)n);
        (void)w;
    }
    _exit(1);
}

static void oom(void)
{
    static const char msg[] = "mgen: out of memory while recording\n";
    ssize_t n = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)n;
    _exit(1);
}

/* Make room for at least `need` more bytes plus a NUL. */
static void buf_reserve(size_t need)
{
    if (g_max_bytes && g_bytes_before + g_len + need > g_max_bytes)
        too_big();
    if (g_len + need + 1 <= g_cap)
        return;
    size_t cap = g_cap ? g_cap : 4096;
    while (g_len + need + 1 > cap) {
        if (cap > SIZE_MAX / 2)
            oom();
        cap *= 2;
    }
    char *p = realloc(g_buf, cap);
    if (!p)
        oom();
    g_buf = p;
    g_cap = cap;
}

static void buf_vprintf(const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap); /* a va_list can be consumed only once */
    size_t room = g_cap - g_len;
    int n = vsnprintf(g_buf ? g_buf + g_len : NULL, room, fmt, ap);
    if (n < 0)
        oom();
    if ((size_t)n >= room) {
        /* Didn't fit (n is the full length): grow and format again. */
        buf_reserve((size_t)n);
        vsnprintf(g_buf + g_len, g_cap - g_len, fmt, again);
    }
    va_end(again);
    g_len += (size_t)n;
}

static void buf_printf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static void buf_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(fmt, ap);
    va_end(ap);
}

static void buf_putc(char c)
{
    buf_reserve(1);
    g_buf[g_len++] = c;
}

/* Append s as one schedule token: bare if it is plain, else quoted with
 * \" and \\ escapes. Control characters (only possible in odd file names;
 * region names are checked before) become '?' to keep one line per op. */
static void buf_token(const char *s)
{
    int plain = *s != '\0' && *s != '#';
    for (const char *p = s; *p && plain; p++)
        if (*p == ' ' || *p == '\t' || *p == '"' || *p == '\\' ||
            (unsigned char)*p < 0x20 || *p == 0x7f)
            plain = 0;
    if (plain) {
        size_t n = strlen(s);
        buf_reserve(n);
        memcpy(g_buf + g_len, s, n);
        g_len += n;
        return;
    }
    buf_putc('"');
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\') {
            buf_putc('\\');
            buf_putc((char)c);
        } else if (c < 0x20 || c == 0x7f) {
            buf_putc('?');
        } else {
            buf_putc((char)c);
        }
    }
    buf_putc('"');
}

/* Append the " @FILE:LINE\n" suffix every recorded operation carries. */
static void buf_location(const char *file, int line)
{
    char tok[4096];
    snprintf(tok, sizeof tok, "@%s:%d", file ? file : "?", line);
    buf_putc(' ');
    buf_token(tok);
    buf_putc('\n');
}

/* Record one operation: the formatted statement plus its call site. This
 * is the single emitter every recording call goes through. */
static void emit(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void emit(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(fmt, ap);
    va_end(ap);
    buf_location(file, line);
    g_ops++;
    if (g_last) {
        g_last->ops = g_ops;
        g_last->bytes = g_bytes_before + g_len;
    }
}

/* A user error the runtime itself must reject: report it at the call site
 * and stop this rank; the parent turns the exit status into a failure. */
static void fail(const char *file, int line, const char *func,
                 const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn));
static void fail(const char *file, int line, const char *func,
                 const char *fmt, ...)
{
    va_list ap;
    fflush(stdout); /* keep the user's output before our message */
    fprintf(stderr, "%s:%d: %s: ", file ? file : "?", line, func);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    _exit(1);
}

/* Guard for calls made outside a recorder child (cannot normally happen,
 * since main() is ours, but a constructor could call in early). Every MGEN
 * call goes through here, so it also notes the call site. */
static void check_running(const char *file, int line, const char *func)
{
    if (g_rank < 0)
        fail(file, line, func, "called outside of MGEN_Main");
    if (g_last) {
        g_last->file = file;
        g_last->func = func;
        g_last->line = line;
        g_last->calls++;
    }
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "mgen: writing the schedule of rank %d: %s\n",
                    g_rank, strerror(errno));
            fflush(stdout);
            _exit(1);
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Write this rank's block. Runs from atexit too, so exit() inside
 * MGEN_Main still records what happened before it; only once. */
static void flush_rank(void)
{
    if (g_flushed || g_rank < 0)
        return;
    g_flushed = 1;
    write_all(g_out_fd, g_buf, g_len);
    if (g_last)
        g_last->bytes = g_bytes_before + g_len;
}

/* ---- Environment -------------------------------------------------------- */

int MGEN_Init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return MGEN_SUCCESS;
}

int MGEN_Finalize(void)
{
    return MGEN_SUCCESS;
}

double MGEN_Wtime(void)
{
    return 0.0; /* recorded programs have no meaningful wall clock */
}

/* Validate a communicator and return its index (0 = world). */
static int comm_index(const char *file, int line, const char *func,
                      MGEN_Comm comm)
{
    check_running(file, line, func);
    if (comm == MGEN_COMM_WORLD)
        return 0;
    if (comm == MGEN_COMM_NULL)
        fail(file, line, func, "invalid communicator MGEN_COMM_NULL");
    long i = (long)comm - (long)MGEN_COMM_WORLD;
    if (i < 1 || i > g_ncomms)
        fail(file, line, func, "invalid communicator %d", comm);
    if (g_comms[i - 1].freed)
        fail(file, line, func, "communicator c%ld has been freed", i);
    return (int)i;
}

/* " comm=cN", or "" for world (the schedule's default). */
static const char *comm_opt(int idx)
{
    static char tok[32];
    if (idx == 0)
        return "";
    snprintf(tok, sizeof tok, " comm=c%d", idx);
    return tok;
}

/* This rank's rank and size in communicator idx, if known: world and its
 * dups always, split communicators (and their dups) after
 * MGEN_Comm_split_info. Returns 1 if known; else 0, with *rank set to the
 * index of the split communicator whose geometry is missing. */
static int comm_known(int idx, int *rank, int *size)
{
    int i = idx;
    while (i != 0 && g_comms[i - 1].kind == COMM_DUP)
        i = g_comms[i - 1].parent;
    if (i == 0) {
        *rank = g_rank;
        *size = g_size;
        return 1;
    }
    if (!g_comms[i - 1].known) {
        *rank = i;
        return 0;
    }
    *rank = g_comms[i - 1].rank;
    *size = g_comms[i - 1].size;
    return 1;
}

static void comm_geometry(const char *file, int line, const char *func,
                          int idx, int *rank, int *size)
{
    if (!comm_known(idx, rank, size))
        fail(file, line, func,
             "rank/size of split communicator c%d is not known while "
             "recording; use world ranks, or state them with "
             "MGEN_Comm_split_info", *rank);
}

int mgen_comm_rank_at(const char *file, int line, MGEN_Comm comm, int *rank)
{
    int idx = comm_index(file, line, "MGEN_Comm_rank", comm), r, n;
    if (!rank)
        fail(file, line, "MGEN_Comm_rank", "rank pointer is NULL");
    comm_geometry(file, line, "MGEN_Comm_rank", idx, &r, &n);
    *rank = r;
    return MGEN_SUCCESS;
}

int mgen_comm_size_at(const char *file, int line, MGEN_Comm comm, int *size)
{
    int idx = comm_index(file, line, "MGEN_Comm_size", comm), r, n;
    if (!size)
        fail(file, line, "MGEN_Comm_size", "size pointer is NULL");
    comm_geometry(file, line, "MGEN_Comm_size", idx, &r, &n);
    *size = n;
    return MGEN_SUCCESS;
}

/* Byte size of a datatype, or 0 if it is not one. */
static int type_size(MGEN_Datatype type)
{
    switch (type) {
    case MGEN_BYTE:   return 1;
    case MGEN_CHAR:   return (int)sizeof(char);
    case MGEN_INT:    return (int)sizeof(int);
    case MGEN_DOUBLE: return (int)sizeof(double);
    case MGEN_FLOAT:  return (int)sizeof(float);
    case MGEN_LONG:   return (int)sizeof(long);
    default:          return 0;
    }
}

int mgen_type_size_at(const char *file, int line, MGEN_Datatype type,
                      int *size)
{
    int s = type_size(type);
    if (s == 0)
        fail(file, line, "MGEN_Type_size", "invalid datatype %d", type);
    if (!size)
        fail(file, line, "MGEN_Type_size", "size pointer is NULL");
    *size = s;
    return MGEN_SUCCESS;
}

/* count * size of type, in bytes; negative counts stay negative (the
 * loader reports them with the location). */
static long long bytes_of(const char *file, int line, const char *func,
                          int count, MGEN_Datatype type)
{
    int s = type_size(type);
    if (s == 0)
        fail(file, line, func, "invalid datatype %d", type);
    return (long long)count * s;
}

/* ---- RDMA operations -----------------------------------------------------
 * Destinations, sizes and tags are recorded as given: acesim's loader
 * validates them and reports the @FILE:LINE. */

MGEN_acp_handle mgen_rdma_put_at(const char *file, int line,
                                 int dest, int size, int tag)
{
    check_running(file, line, "MGEN_rdma_put");
    MGEN_acp_handle h = g_next_handle++;
    emit(file, line, "put %d %d tag=%d handle=%lld", dest, size, tag,
         (long long)h);
    return h;
}

void mgen_rdma_poll_at(const char *file, int line, int tag)
{
    check_running(file, line, "MGEN_rdma_poll");
    emit(file, line, "poll %d", tag);
}

void mgen_acp_complete_at(const char *file, int line, MGEN_acp_handle h)
{
    check_running(file, line, "MGEN_acp_complete");
    emit(file, line, "complete %lld", (long long)h);
}

MGEN_acp_handle mgen_acp_copy_at(const char *file, int line,
                                 int src, int dst, int size)
{
    check_running(file, line, "MGEN_acp_copy");
    if (src == g_rank) {
        MGEN_acp_handle h = g_next_handle++;
        emit(file, line, "put %d %d tag=%d handle=%lld", dst, size,
             ACP_PUT_TAG, (long long)h);
        return h;
    }
    if (dst == g_rank) {
        MGEN_acp_handle h = g_next_handle++;
        emit(file, line, "get %d %d handle=%lld", src, size, (long long)h);
        return h;
    }
    fail(file, line, "MGEN_acp_copy",
         "third-party copy from rank %d to rank %d on rank %d is not "
         "supported (src or dst must be the calling rank)", src, dst, g_rank);
}

/* ---- Computation and regions -------------------------------------------- */

void mgen_comp_at(const char *file, int line, double t_ns)
{
    check_running(file, line, "MGEN_Comp");
    if (isnan(t_ns))
        fail(file, line, "MGEN_Comp", "time is NaN");
    if (t_ns < 0)
        fail(file, line, "MGEN_Comp", "negative time %g ns", t_ns);
    double ps = t_ns * 1000.0;
    /* 9.2e18 ps is about 106 days: anything beyond is surely a bug. */
    if (!(ps < 9.2e18))
        fail(file, line, "MGEN_Comp", "time %g ns is too large", t_ns);
    emit(file, line, "compute %lldps", llround(ps));
}

static void region(const char *file, int line, const char *func,
                   const char *kind, const char *name)
{
    check_running(file, line, func);
    if (!name)
        fail(file, line, func, "region name is NULL");
    if (strchr(name, '\n') || strchr(name, '\r'))
        fail(file, line, func, "region name contains a newline");
    /* Always quoted, so names with spaces and empty names round-trip. */
    buf_printf("%s \"", kind);
    for (const char *p = name; *p; p++) {
        if (*p == '"' || *p == '\\')
            buf_putc('\\');
        buf_putc(*p);
    }
    buf_putc('"');
    buf_location(file, line);
}

void mgen_region_begin_at(const char *file, int line, const char *name)
{
    region(file, line, "MGEN_Region_begin", "region_begin", name);
}

void mgen_region_end_at(const char *file, int line, const char *name)
{
    region(file, line, "MGEN_Region_end", "region_end", name);
}

/* ---- Loops -----------------------------------------------------------------
 * The body between MGEN_Loop_begin and MGEN_Loop_end is recorded once inside
 * `repeat N {` ... `}`; acesim repeats it. Open loops are remembered so that
 * one left open when MGEN_Main returns is reported where it began. */

#define MGEN_MAX_LOOPS 64
static struct {
    const char *file;
    int line;
} g_loops[MGEN_MAX_LOOPS];
static int g_loop_depth;

void mgen_loop_begin_at(const char *file, int line, long long n)
{
    check_running(file, line, "MGEN_Loop_begin");
    if (n < 0)
        fail(file, line, "MGEN_Loop_begin", "negative iteration count %lld", n);
    if (g_loop_depth == MGEN_MAX_LOOPS)
        fail(file, line, "MGEN_Loop_begin", "more than %d nested loops",
             MGEN_MAX_LOOPS);
    g_loops[g_loop_depth].file = file;
    g_loops[g_loop_depth].line = line;
    g_loop_depth++;
    buf_printf("repeat %lld {", n);
    buf_location(file, line);
}

void mgen_loop_end_at(const char *file, int line)
{
    check_running(file, line, "MGEN_Loop_end");
    if (g_loop_depth == 0)
        fail(file, line, "MGEN_Loop_end", "no loop is open (MGEN_Loop_begin)");
    g_loop_depth--;
    buf_printf("}");
    buf_location(file, line);
}

/* ---- Messages --------------------------------------------------------------
 * Ranks, sizes and tags are recorded as given (the loader checks them);
 * the runtime rejects invalid communicators, datatypes and requests. */

/* `any` for the -1 wildcard (MGEN_ANY_SOURCE / MGEN_ANY_TAG), else v. */
static const char *int_or_any(int v, char buf[16])
{
    if (v == -1)
        return "any";
    snprintf(buf, 16, "%d", v);
    return buf;
}

/* ACP_PUT_TAG belongs to RDMA puts: a message with it would never meet a
 * put, so only MGEN_Recv (recorded as a poll) may name it. */
static void check_msg_tag(const char *file, int line, const char *func,
                          int tag)
{
    if (tag == ACP_PUT_TAG)
        fail(file, line, func,
             "tag ACP_PUT_TAG is reserved for RDMA puts (only MGEN_Recv "
             "may wait for it, recorded as a poll)");
}

static void set_status(MGEN_Status *st, int source, int tag)
{
    if (st) {
        st->MGEN_SOURCE = source;
        st->MGEN_TAG = tag;
        st->MGEN_ERROR = MGEN_SUCCESS;
    }
}

static int new_request(const char *file, int line, const char *func,
                       MGEN_Request *req, int source, int tag)
{
    if (!req)
        fail(file, line, func, "request pointer is NULL");
    if (g_nreqs == INT_MAX)
        fail(file, line, func, "too many requests");
    if (g_nreqs == g_reqs_cap) {
        int cap = g_reqs_cap ? g_reqs_cap * 2 : 64;
        struct req_rec *p = realloc(g_reqs, (size_t)cap * sizeof *p);
        if (!p)
            oom();
        g_reqs = p;
        g_reqs_cap = cap;
    }
    g_reqs[g_nreqs].source = source;
    g_reqs[g_nreqs].tag = tag;
    *req = ++g_nreqs;
    return *req;
}

/* Validate a request value (0 = MGEN_REQUEST_NULL) and return it. */
static int request_value(const char *file, int line, const char *func,
                         MGEN_Request r)
{
    if (r < 0 || r > g_nreqs)
        fail(file, line, func, "invalid request %d", r);
    return r;
}

/* Status of a completed request (MPI's empty status for the null one). */
static void request_status(MGEN_Status *st, int r)
{
    if (r == 0)
        set_status(st, MGEN_ANY_SOURCE, MGEN_ANY_TAG);
    else
        set_status(st, g_reqs[r - 1].source, g_reqs[r - 1].tag);
}

int mgen_send_at(const char *file, int line, const void *buf, int count,
                 MGEN_Datatype type, int dest, int tag, MGEN_Comm comm)
{
    (void)buf;
    int c = comm_index(file, line, "MGEN_Send", comm);
    long long b = bytes_of(file, line, "MGEN_Send", count, type);
    check_msg_tag(file, line, "MGEN_Send", tag);
    emit(file, line, "send %d %lld tag=%d%s", dest, b, tag, comm_opt(c));
    return MGEN_SUCCESS;
}

int mgen_recv_at(const char *file, int line, void *buf, int count,
                 MGEN_Datatype type, int source, int tag, MGEN_Comm comm,
                 MGEN_Status *status)
{
    (void)buf;
    char s1[16], s2[16];
    int c = comm_index(file, line, "MGEN_Recv", comm);
    long long b = bytes_of(file, line, "MGEN_Recv", count, type);
    if (tag == ACP_PUT_TAG)
        /* NSIM idiom: wait until the put from `source` has landed. */
        emit(file, line, "poll %d", ACP_PUT_TAG);
    else
        emit(file, line, "recv %s %lld tag=%s%s", int_or_any(source, s1), b,
             int_or_any(tag, s2), comm_opt(c));
    set_status(status, source, tag);
    return MGEN_SUCCESS;
}

int mgen_isend_at(const char *file, int line, const void *buf, int count,
                  MGEN_Datatype type, int dest, int tag, MGEN_Comm comm,
                  MGEN_Request *req)
{
    (void)buf;
    int c = comm_index(file, line, "MGEN_Isend", comm);
    long long b = bytes_of(file, line, "MGEN_Isend", count, type);
    check_msg_tag(file, line, "MGEN_Isend", tag);
    int r = new_request(file, line, "MGEN_Isend", req, MGEN_ANY_SOURCE,
                        MGEN_ANY_TAG);
    emit(file, line, "isend %d %lld req=r%d tag=%d%s", dest, b, r, tag,
         comm_opt(c));
    return MGEN_SUCCESS;
}

int mgen_irecv_at(const char *file, int line, void *buf, int count,
                  MGEN_Datatype type, int source, int tag, MGEN_Comm comm,
                  MGEN_Request *req)
{
    (void)buf;
    char s1[16], s2[16];
    int c = comm_index(file, line, "MGEN_Irecv", comm);
    long long b = bytes_of(file, line, "MGEN_Irecv", count, type);
    check_msg_tag(file, line, "MGEN_Irecv", tag);
    int r = new_request(file, line, "MGEN_Irecv", req, source, tag);
    emit(file, line, "irecv %s %lld req=r%d tag=%s%s",
         int_or_any(source, s1), b, r, int_or_any(tag, s2), comm_opt(c));
    return MGEN_SUCCESS;
}

int mgen_sendrecv_at(const char *file, int line,
                     const void *sbuf, int scount, MGEN_Datatype stype,
                     int dest, int sendtag,
                     void *rbuf, int rcount, MGEN_Datatype rtype,
                     int source, int recvtag,
                     MGEN_Comm comm, MGEN_Status *status)
{
    (void)sbuf;
    (void)rbuf;
    char s1[16], s2[16];
    const char *f = "MGEN_Sendrecv";
    int c = comm_index(file, line, f, comm);
    long long sb = bytes_of(file, line, f, scount, stype);
    long long rb = bytes_of(file, line, f, rcount, rtype);
    check_msg_tag(file, line, f, sendtag);
    check_msg_tag(file, line, f, recvtag);
    emit(file, line, "sendrecv %d %lld %s %lld sendtag=%d recvtag=%s%s", dest,
         sb, int_or_any(source, s1), rb, sendtag, int_or_any(recvtag, s2),
         comm_opt(c));
    set_status(status, source, recvtag);
    return MGEN_SUCCESS;
}

int mgen_wait_at(const char *file, int line, MGEN_Request *req,
                 MGEN_Status *status)
{
    check_running(file, line, "MGEN_Wait");
    if (!req)
        fail(file, line, "MGEN_Wait", "request pointer is NULL");
    int r = request_value(file, line, "MGEN_Wait", *req);
    if (r != 0)
        emit(file, line, "wait r%d", r);
    request_status(status, r);
    *req = MGEN_REQUEST_NULL;
    return MGEN_SUCCESS;
}

int mgen_waitall_at(const char *file, int line, int n, MGEN_Request *reqs,
                    MGEN_Status *statuses)
{
    const char *f = "MGEN_Waitall";
    check_running(file, line, f);
    if (n < 0)
        fail(file, line, f, "negative count %d", n);
    if (n > 0 && !reqs)
        fail(file, line, f, "request array is NULL");
    int live = 0;
    for (int i = 0; i < n; i++)
        live += request_value(file, line, f, reqs[i]) != 0;
    if (live > 0) {
        buf_printf("waitall");
        for (int i = 0; i < n; i++)
            if (reqs[i] != 0)
                buf_printf(" r%d", reqs[i]);
        buf_location(file, line);
    }
    for (int i = 0; i < n; i++) {
        request_status(statuses ? &statuses[i] : NULL, reqs[i]);
        reqs[i] = MGEN_REQUEST_NULL;
    }
    return MGEN_SUCCESS;
}

/* The recorded program cannot know which request the simulation will
 * finish first: Waitany waits for the first non-null one. */
int mgen_waitany_at(const char *file, int line, int n, MGEN_Request *reqs,
                    int *index, MGEN_Status *status)
{
    const char *f = "MGEN_Waitany";
    check_running(file, line, f);
    if (n < 0)
        fail(file, line, f, "negative count %d", n);
    if (n > 0 && !reqs)
        fail(file, line, f, "request array is NULL");
    if (!index)
        fail(file, line, f, "index pointer is NULL");
    for (int i = 0; i < n; i++)
        request_value(file, line, f, reqs[i]);
    *index = MGEN_UNDEFINED;
    for (int i = 0; i < n; i++) {
        if (reqs[i] != 0) {
            emit(file, line, "wait r%d", reqs[i]);
            request_status(status, reqs[i]);
            reqs[i] = MGEN_REQUEST_NULL;
            *index = i;
            return MGEN_SUCCESS;
        }
    }
    request_status(status, 0);
    return MGEN_SUCCESS;
}

/* A recorded program cannot observe simulated time, so Test is a Wait
 * that always reports completion. */
int mgen_test_at(const char *file, int line, MGEN_Request *req, int *flag,
                 MGEN_Status *status)
{
    check_running(file, line, "MGEN_Test");
    if (!req)
        fail(file, line, "MGEN_Test", "request pointer is NULL");
    if (!flag)
        fail(file, line, "MGEN_Test", "flag pointer is NULL");
    int r = request_value(file, line, "MGEN_Test", *req);
    if (r != 0)
        emit(file, line, "wait r%d", r);
    request_status(status, r);
    *req = MGEN_REQUEST_NULL;
    *flag = 1;
    return MGEN_SUCCESS;
}

/* ---- Communicators ---------------------------------------------------------- */

static int new_comm(const char *file, int line, const char *func,
                    int parent, int kind)
{
    if (g_ncomms == MGEN_MAX_COMMS)
        fail(file, line, func, "too many communicators (%d)", MGEN_MAX_COMMS);
    if (g_ncomms == g_comms_cap) {
        int cap = g_comms_cap ? g_comms_cap * 2 : 16;
        struct comm_rec *p = realloc(g_comms, (size_t)cap * sizeof *p);
        if (!p)
            oom();
        g_comms = p;
        g_comms_cap = cap;
    }
    struct comm_rec *c = &g_comms[g_ncomms++];
    memset(c, 0, sizeof *c);
    c->parent = parent;
    c->kind = kind;
    return g_ncomms;
}

int mgen_comm_split_at(const char *file, int line, MGEN_Comm comm,
                       int color, int key, MGEN_Comm *newcomm)
{
    const char *f = "MGEN_Comm_split";
    int p = comm_index(file, line, f, comm);
    if (!newcomm)
        fail(file, line, f, "newcomm pointer is NULL");
    /* A name is used even for `undefined`, so names stay aligned across
     * ranks running the same program. */
    int i = new_comm(file, line, f, p, COMM_SPLIT);
    char ctok[16];
    if (color == MGEN_UNDEFINED)
        snprintf(ctok, sizeof ctok, "undefined");
    else
        snprintf(ctok, sizeof ctok, "%d", color);
    emit(file, line, "comm_split %s %d as=c%d%s", ctok, key, i, comm_opt(p));
    if (color == MGEN_UNDEFINED) {
        g_comms[i - 1].freed = 1;
        *newcomm = MGEN_COMM_NULL;
    } else {
        *newcomm = (MGEN_Comm)(MGEN_COMM_WORLD + i);
    }
    return MGEN_SUCCESS;
}

int mgen_comm_dup_at(const char *file, int line, MGEN_Comm comm,
                     MGEN_Comm *newcomm)
{
    int p = comm_index(file, line, "MGEN_Comm_dup", comm);
    if (!newcomm)
        fail(file, line, "MGEN_Comm_dup", "newcomm pointer is NULL");
    int i = new_comm(file, line, "MGEN_Comm_dup", p, COMM_DUP);
    emit(file, line, "comm_dup as=c%d%s", i, comm_opt(p));
    *newcomm = (MGEN_Comm)(MGEN_COMM_WORLD + i);
    return MGEN_SUCCESS;
}

int mgen_comm_free_at(const char *file, int line, MGEN_Comm *comm)
{
    check_running(file, line, "MGEN_Comm_free");
    if (!comm)
        fail(file, line, "MGEN_Comm_free", "communicator pointer is NULL");
    int i = comm_index(file, line, "MGEN_Comm_free", *comm);
    if (i == 0)
        fail(file, line, "MGEN_Comm_free", "cannot free MGEN_COMM_WORLD");
    g_comms[i - 1].freed = 1;
    *comm = MGEN_COMM_NULL;
    return MGEN_SUCCESS;
}

int mgen_comm_split_info_at(const char *file, int line, MGEN_Comm comm,
                            int rank, int size)
{
    const char *f = "MGEN_Comm_split_info";
    int i = comm_index(file, line, f, comm);
    if (i == 0)
        fail(file, line, f, "MGEN_COMM_WORLD was not made by MGEN_Comm_split");
    if (g_comms[i - 1].kind != COMM_SPLIT)
        fail(file, line, f, "c%d was made by MGEN_Comm_dup: it has the rank "
             "and size of the communicator it was made from", i);
    if (size < 1 || rank < 0 || rank >= size)
        fail(file, line, f, "rank %d out of range for size %d", rank, size);
    int pr, ps;
    if (comm_known(g_comms[i - 1].parent, &pr, &ps) && size > ps)
        fail(file, line, f, "size %d is larger than the parent "
             "communicator's size %d", size, ps);
    g_comms[i - 1].known = 1;
    g_comms[i - 1].rank = rank;
    g_comms[i - 1].size = size;
    return MGEN_SUCCESS;
}

/* ---- Collectives -------------------------------------------------------------- */

/* An algorithm or transport name must be one plain schedule token. */
static void check_name(const char *file, int line, const char *func,
                       const char *what, const char *name)
{
    size_t n = strlen(name);
    int ok = n > 0 && n < sizeof g_next_algo;
    for (const char *p = name; *p && ok; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
             (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || *p == '.';
    if (!ok)
        fail(file, line, func, "invalid %s name \"%s\" (letters, digits, "
             "'_', '-', '.'; at most %d characters)", what, name,
             (int)sizeof g_next_algo - 1);
}

/* " algo=NAME" for a collective: the explicit one, else the one set by
 * MGEN_Coll_algo (used up), else "". */
static const char *algo_opt(const char *explicit_algo)
{
    static char tok[sizeof g_next_algo + 8];
    const char *a = explicit_algo ? explicit_algo : g_next_algo;
    if (*a)
        snprintf(tok, sizeof tok, " algo=%s", a);
    else
        tok[0] = '\0';
    g_next_algo[0] = '\0';
    return tok;
}

static void check_op(const char *file, int line, const char *func, MGEN_Op op)
{
    if (op != MGEN_SUM && op != MGEN_MAX && op != MGEN_MIN && op != MGEN_PROD)
        fail(file, line, func, "invalid operation %d", op);
}

int mgen_coll_algo_at(const char *file, int line, const char *algo)
{
    check_running(file, line, "MGEN_Coll_algo");
    if (!algo) {
        g_next_algo[0] = '\0';
        return MGEN_SUCCESS;
    }
    check_name(file, line, "MGEN_Coll_algo", "algorithm", algo);
    snprintf(g_next_algo, sizeof g_next_algo, "%s", algo);
    return MGEN_SUCCESS;
}

int mgen_barrier_at(const char *file, int line, MGEN_Comm comm)
{
    int c = comm_index(file, line, "MGEN_Barrier", comm);
    emit(file, line, "barrier%s%s", comm_opt(c), algo_opt(NULL));
    return MGEN_SUCCESS;
}

int mgen_barrier_algo_at(const char *file, int line, MGEN_Comm comm,
                         const char *algo, const char *transport)
{
    const char *f = "MGEN_Barrier_algo";
    int c = comm_index(file, line, f, comm);
    if (algo)
        check_name(file, line, f, "algorithm", algo);
    if (transport && strcmp(transport, "msg") != 0 &&
        strcmp(transport, "rdma") != 0)
        fail(file, line, f, "invalid transport \"%s\" (msg or rdma)",
             transport);
    emit(file, line, "barrier%s%s%s%s", comm_opt(c), algo_opt(algo),
         transport ? " transport=" : "", transport ? transport : "");
    return MGEN_SUCCESS;
}

int mgen_bcast_at(const char *file, int line, void *buf, int count,
                  MGEN_Datatype type, int root, MGEN_Comm comm)
{
    (void)buf;
    int c = comm_index(file, line, "MGEN_Bcast", comm);
    long long b = bytes_of(file, line, "MGEN_Bcast", count, type);
    emit(file, line, "bcast %lld root=%d%s%s", b, root, comm_opt(c),
         algo_opt(NULL));
    return MGEN_SUCCESS;
}

int mgen_reduce_at(const char *file, int line, const void *sbuf, void *rbuf,
                   int count, MGEN_Datatype type, MGEN_Op op, int root,
                   MGEN_Comm comm)
{
    (void)sbuf;
    (void)rbuf;
    int c = comm_index(file, line, "MGEN_Reduce", comm);
    long long b = bytes_of(file, line, "MGEN_Reduce", count, type);
    check_op(file, line, "MGEN_Reduce", op);
    emit(file, line, "reduce %lld root=%d%s%s", b, root, comm_opt(c),
         algo_opt(NULL));
    return MGEN_SUCCESS;
}

int mgen_allreduce_at(const char *file, int line, const void *sbuf,
                      void *rbuf, int count, MGEN_Datatype type, MGEN_Op op,
                      MGEN_Comm comm)
{
    (void)sbuf;
    (void)rbuf;
    int c = comm_index(file, line, "MGEN_Allreduce", comm);
    long long b = bytes_of(file, line, "MGEN_Allreduce", count, type);
    check_op(file, line, "MGEN_Allreduce", op);
    emit(file, line, "allreduce %lld%s%s", b, comm_opt(c), algo_opt(NULL));
    return MGEN_SUCCESS;
}

/* Per-rank size of an (all)gather/alltoall contribution: MGEN_IN_PLACE
 * as the send buffer means the receive count/type describe it. */
static long long contribution(const char *file, int line, const char *func,
                              const void *sbuf, int scount,
                              MGEN_Datatype stype, int rcount,
                              MGEN_Datatype rtype)
{
    if (sbuf == MGEN_IN_PLACE)
        return bytes_of(file, line, func, rcount, rtype);
    return bytes_of(file, line, func, scount, stype);
}

int mgen_alltoall_at(const char *file, int line, const void *sbuf,
                     int scount, MGEN_Datatype stype, void *rbuf, int rcount,
                     MGEN_Datatype rtype, MGEN_Comm comm)
{
    (void)rbuf;
    int c = comm_index(file, line, "MGEN_Alltoall", comm);
    long long b = contribution(file, line, "MGEN_Alltoall", sbuf, scount,
                               stype, rcount, rtype);
    emit(file, line, "alltoall %lld%s%s", b, comm_opt(c), algo_opt(NULL));
    return MGEN_SUCCESS;
}

int mgen_allgather_at(const char *file, int line, const void *sbuf,
                      int scount, MGEN_Datatype stype, void *rbuf,
                      int rcount, MGEN_Datatype rtype, MGEN_Comm comm)
{
    (void)rbuf;
    int c = comm_index(file, line, "MGEN_Allgather", comm);
    long long b = contribution(file, line, "MGEN_Allgather", sbuf, scount,
                               stype, rcount, rtype);
    emit(file, line, "allgather %lld%s%s", b, comm_opt(c), algo_opt(NULL));
    return MGEN_SUCCESS;
}

int mgen_gather_at(const char *file, int line, const void *sbuf, int scount,
                   MGEN_Datatype stype, void *rbuf, int rcount,
                   MGEN_Datatype rtype, int root, MGEN_Comm comm)
{
    (void)rbuf;
    int c = comm_index(file, line, "MGEN_Gather", comm);
    long long b = contribution(file, line, "MGEN_Gather", sbuf, scount,
                               stype, rcount, rtype);
    emit(file, line, "gather %lld root=%d%s%s", b, root, comm_opt(c),
         algo_opt(NULL));
    return MGEN_SUCCESS;
}

int mgen_scatter_at(const char *file, int line, const void *sbuf, int scount,
                    MGEN_Datatype stype, void *rbuf, int rcount,
                    MGEN_Datatype rtype, int root, MGEN_Comm comm)
{
    (void)sbuf;
    int c = comm_index(file, line, "MGEN_Scatter", comm);
    /* MGEN_IN_PLACE as the root's receive buffer: the send count/type
     * describe each rank's part. */
    long long b = rbuf == MGEN_IN_PLACE
        ? bytes_of(file, line, "MGEN_Scatter", scount, stype)
        : bytes_of(file, line, "MGEN_Scatter", rcount, rtype);
    emit(file, line, "scatter %lld root=%d%s%s", b, root, comm_opt(c),
         algo_opt(NULL));
    return MGEN_SUCCESS;
}

/* ---- NSIM compatibility ----------------------------------------------------
 * acesim's receiving NIC sends a put's control packet itself, so the
 * NSIM sender-side control message records nothing. */

int mgen_isend_acp_put_ctrl_at(const char *file, int line, int dest,
                               MGEN_Comm comm, MGEN_Request *rq, int flag,
                               t_NsimRoutingInfo *info)
{
    (void)dest;
    (void)flag;
    (void)info;
    comm_index(file, line, "LMGEN_Isend_acp_put_ctrl", comm);
    if (!rq)
        fail(file, line, "LMGEN_Isend_acp_put_ctrl", "request pointer is NULL");
    *rq = MGEN_REQUEST_NULL;
    return MGEN_SUCCESS;
}

/* ---- Recorder main --------------------------------------------------------- */

static void usage(const char *prog, const char *why)
{
    fprintf(stderr,
            "%s: %s\n"
            "usage: %s --acesim-ranks N --acesim-out PATH [-- ARGS...]\n"
            "  records the MGEN program's schedule for N ranks into PATH "
            "('-' = stdout)\n",
            prog, why, prog);
    exit(2);
}

/* Strict decimal integer up to max; -1 if s is not one or is larger. */
static long long parse_count(const char *s, long long max)
{
    if (!*s)
        return -1;
    long long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
        if (v > max)
            return -1;
    }
    return v;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Strict positive decimal integer; -1 if s is not one or is out of range. */
static int parse_ranks(const char *s)
{
    if (!*s)
        return -1;
    long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
        if (v > MGEN_MAX_RANKS)
            return -1;
    }
    return v >= 1 ? (int)v : -1;
}

/* Child side: become rank r and run the user program; never returns. */
static void run_rank(int r, int n, int out_fd, int argc, char **argv)
{
    g_rank = r;
    g_size = n;
    g_out_fd = out_fd;
    buf_printf("rank %d\n", r);
    /* The user's stdout goes to our stderr so it cannot end up in a
     * schedule written to stdout and acesim can show it. */
    if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        perror("mgen: dup2");
        _exit(1);
    }
    if (atexit(flush_rank) != 0) {
        fprintf(stderr, "mgen: atexit failed\n");
        _exit(1);
    }
    /* The child takes the default for the signals the parent blocks. */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int rc = MGEN_Main(argc, argv);
    if (rc == 0 && g_loop_depth > 0) {
        int d = g_loop_depth - 1;
        fail(g_loops[d].file, g_loops[d].line, "MGEN_Loop_begin",
             "the loop is never closed (MGEN_Loop_end) before MGEN_Main returns");
    }
    if (rc != 0) {
        /* A failure, as exit(rc) would be; the parent says so. */
        if (g_last) {
            g_last->returned = 1;
            g_last->main_rc = rc;
        }
        fflush(stdout);
        _exit(1);
    }
    exit(0); /* runs flush_rank and flushes the user's stdio */
}

int main(int argc, char **argv)
{
    const char *prog = argc > 0 && argv[0] ? argv[0] : "mgen";
    const char *out_path = NULL;
    int nranks = -1;
    int user_start = argc; /* index of the first user arg */
    long long timeout = 0;  /* seconds without an MGEN call; 0 = none */

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        if (strcmp(a, "--") == 0) {
            user_start = i + 1;
            break;
        }
        if (strcmp(a, "--acesim-ranks") == 0 || strcmp(a, "--acesim-out") == 0 ||
            strcmp(a, "--acesim-max-bytes") == 0 ||
            strcmp(a, "--acesim-timeout") == 0) {
            if (i + 1 >= argc)
                usage(prog, "missing value after an --acesim option");
            val = argv[++i];
        } else if (strncmp(a, "--acesim-ranks=", 15) == 0 ||
                   strncmp(a, "--acesim-out=", 13) == 0 ||
                   strncmp(a, "--acesim-max-bytes=", 19) == 0 ||
                   strncmp(a, "--acesim-timeout=", 17) == 0) {
            val = strchr(a, '=') + 1;
        } else {
            fprintf(stderr, "%s: unknown argument '%s' (user arguments go "
                            "after '--')\n", prog, a);
            usage(prog, "invalid arguments");
        }
        if (strncmp(a, "--acesim-max-bytes", 18) == 0) {
            long long v = parse_count(val, LLONG_MAX / 10);
            if (v < 0)
                usage(prog, "--acesim-max-bytes needs a byte count (0 = no limit)");
            g_max_bytes = (unsigned long long)v;
        } else if (strncmp(a, "--acesim-timeout", 16) == 0) {
            timeout = parse_count(val, 1000000000LL);
            if (timeout < 0)
                usage(prog, "--acesim-timeout needs whole seconds (0 = no limit)");
        } else if (strncmp(a, "--acesim-ranks", 14) == 0) {
            nranks = parse_ranks(val);
            if (nranks < 0) {
                fprintf(stderr, "%s: invalid rank count '%s'\n", prog, val);
                usage(prog, "--acesim-ranks needs an integer from 1 to 16777216");
            }
        } else {
            if (!*val)
                usage(prog, "--acesim-out needs a path");
            out_path = val;
        }
    }
    if (nranks < 0)
        usage(prog, "missing --acesim-ranks N");
    if (!out_path)
        usage(prog, "missing --acesim-out PATH");

    int to_stdout = strcmp(out_path, "-") == 0;
    int out_fd = to_stdout
        ? fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)
        : open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
               0644);
    if (out_fd < 0) {
        fprintf(stderr, "%s: cannot open '%s': %s\n", prog, out_path,
                strerror(errno));
        return 1;
    }

    /* argv for MGEN_Main: program name + everything after "--". */
    int uargc = 1 + (argc - user_start);
    char **uargv = calloc((size_t)uargc + 1, sizeof *uargv);
    if (!uargv)
        oom();
    uargv[0] = argv[0];
    for (int i = user_start; i < argc; i++)
        uargv[1 + i - user_start] = argv[i];

    void *page = mmap(NULL, sizeof *g_last, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page != MAP_FAILED)
        g_last = page;

    char head[64];
    int hn = snprintf(head, sizeof head, "# acesim schedule 1\nranks %d\n",
                      nranks);
    write_all(out_fd, head, (size_t)hn);
    g_bytes_before = (unsigned long long)hn;

    /* SIGCHLD stays pending (blocked) so that waiting for a rank can also
     * wake up each second to see whether it still makes MGEN calls. */
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);

    for (int r = 0; r < nranks; r++) {
        /* Nothing buffered may be duplicated into the child. */
        fflush(stdout);
        fflush(stderr);
        if (g_last)
            memset(g_last, 0, sizeof *g_last);
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "%s: fork for rank %d: %s\n", prog, r,
                    strerror(errno));
            goto failed;
        }
        if (pid == 0)
            run_rank(r, nranks, out_fd, uargc, uargv);

        int st;
        int stalled = 0;
        unsigned long long seen = 0;
        double last_move = now_seconds();
        for (;;) {
            pid_t w = waitpid(pid, &st, WNOHANG);
            if (w == pid)
                break;
            if (w < 0 && errno != EINTR) {
                fprintf(stderr, "%s: waitpid for rank %d: %s\n", prog, r,
                        strerror(errno));
                goto failed;
            }
            struct timespec tick = {1, 0};
            (void)sigtimedwait(&chld, NULL, &tick);
            if (timeout <= 0 || !g_last)
                continue;
            double now = now_seconds();
            if (g_last->calls != seen) {
                seen = g_last->calls;
                last_move = now;
            } else if (now - last_move >= (double)timeout) {
                /* No MGEN call for too long: most likely an endless loop. */
                kill(pid, SIGKILL);
                while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                    ;
                stalled = 1;
                break;
            }
        }
        if (!stalled && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
            if (g_last)
                g_bytes_before = g_last->bytes;
            continue;
        }
        /* Where the rank was: its last MGEN call, if it made one. */
        char where[4200];
        if (g_last && g_last->file)
            snprintf(where, sizeof where,
                     " after its last MGEN call, %s at %s:%d",
                     g_last->func ? g_last->func : "?", g_last->file,
                     g_last->line);
        else
            snprintf(where, sizeof where, " before its first MGEN call");
        if (stalled) {
            fprintf(stderr,
                    "rank %d: no MGEN call for %lld s%s (%llu operations "
                    "recorded); it may loop forever\n",
                    r, timeout, where, g_last->ops);
            goto failed;
        }
        if (g_last && g_last->too_big) {
            /* The rank said so itself; tell acesim it is the size limit. */
            close(out_fd);
            if (!to_stdout)
                unlink(out_path);
            return 5;
        }
        if (g_last && g_last->returned) {
            fprintf(stderr, "rank %d: MGEN_Main returned %d (not 0)%s\n", r,
                    g_last->main_rc, where);
        } else if (WIFEXITED(st)) {
            fprintf(stderr,
                    "rank %d: the program exited with code %d before MGEN_Main "
                    "returned,%s\n", r, WEXITSTATUS(st), where);
        } else if (WIFSIGNALED(st)) {
            int sig = WTERMSIG(st);
            const char *name = strsignal(sig);
            char desc[128];
            snprintf(desc, sizeof desc, "%s", name ? name : "unknown signal");
            if (desc[0] >= 'A' && desc[0] <= 'Z')
                desc[0] = (char)(desc[0] - 'A' + 'a');
            fprintf(stderr, "rank %d: program killed by signal %d (%s)%s\n",
                    r, sig, desc, where);
        } else {
            fprintf(stderr, "rank %d: program stopped unexpectedly%s\n", r,
                    where);
        }
        goto failed;
    }
    if (close(out_fd) < 0) {
        fprintf(stderr, "%s: writing '%s': %s\n", prog, out_path,
                strerror(errno));
        return 1;
    }
    free(uargv);
    return 0;

failed:
    /* A partial schedule must not be mistaken for a result. */
    close(out_fd);
    if (!to_stdout)
        unlink(out_path);
    return 1;
}
