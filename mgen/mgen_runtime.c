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
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Upper bound on ranks; keeps the fork loop and rank formatting sane. */
#define MGEN_MAX_RANKS (1 << 24)

/* ---- Per-rank state (only meaningful in a child) ----------------------- */

static int g_rank = -1;
static int g_size = 0;
static int g_out_fd = -1;
static int g_flushed = 0;
static MGEN_acp_handle g_next_handle = 1;

/* Growable in-memory buffer of this rank's block. */
static char *g_buf = NULL;
static size_t g_len = 0, g_cap = 0;

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
 * since main() is ours, but a constructor could call in early). */
static void check_running(const char *file, int line, const char *func)
{
    if (g_rank < 0)
        fail(file, line, func, "called outside of MGEN_Main");
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

static void check_comm(const char *file, int line, const char *func,
                       MGEN_Comm comm)
{
    check_running(file, line, func);
    if (comm != MGEN_COMM_WORLD)
        fail(file, line, func,
             "invalid communicator %d (only MGEN_COMM_WORLD is supported)",
             comm);
}

int mgen_comm_rank_at(const char *file, int line, MGEN_Comm comm, int *rank)
{
    check_comm(file, line, "MGEN_Comm_rank", comm);
    if (!rank)
        fail(file, line, "MGEN_Comm_rank", "rank pointer is NULL");
    *rank = g_rank;
    return MGEN_SUCCESS;
}

int mgen_comm_size_at(const char *file, int line, MGEN_Comm comm, int *size)
{
    check_comm(file, line, "MGEN_Comm_size", comm);
    if (!size)
        fail(file, line, "MGEN_Comm_size", "size pointer is NULL");
    *size = g_size;
    return MGEN_SUCCESS;
}

int mgen_type_size_at(const char *file, int line, MGEN_Datatype type,
                      int *size)
{
    int s;
    switch (type) {
    case MGEN_BYTE:   s = 1; break;
    case MGEN_CHAR:   s = (int)sizeof(char); break;
    case MGEN_INT:    s = (int)sizeof(int); break;
    case MGEN_DOUBLE: s = (int)sizeof(double); break;
    case MGEN_FLOAT:  s = (int)sizeof(float); break;
    case MGEN_LONG:   s = (int)sizeof(long); break;
    default:
        fail(file, line, "MGEN_Type_size", "invalid datatype %d", type);
    }
    if (!size)
        fail(file, line, "MGEN_Type_size", "size pointer is NULL");
    *size = s;
    return MGEN_SUCCESS;
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
    (void)MGEN_Main(argc, argv);
    exit(0); /* runs flush_rank and flushes the user's stdio */
}

int main(int argc, char **argv)
{
    const char *prog = argc > 0 && argv[0] ? argv[0] : "mgen";
    const char *out_path = NULL;
    int nranks = -1;
    int user_start = argc; /* index of the first user arg */

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        if (strcmp(a, "--") == 0) {
            user_start = i + 1;
            break;
        }
        if (strcmp(a, "--acesim-ranks") == 0 || strcmp(a, "--acesim-out") == 0) {
            if (i + 1 >= argc)
                usage(prog, "missing value after an --acesim option");
            val = argv[++i];
        } else if (strncmp(a, "--acesim-ranks=", 15) == 0 ||
                   strncmp(a, "--acesim-out=", 13) == 0) {
            val = strchr(a, '=') + 1;
        } else {
            fprintf(stderr, "%s: unknown argument '%s' (user arguments go "
                            "after '--')\n", prog, a);
            usage(prog, "invalid arguments");
        }
        if (strncmp(a, "--acesim-ranks", 14) == 0) {
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

    char head[64];
    int hn = snprintf(head, sizeof head, "# acesim schedule 1\nranks %d\n",
                      nranks);
    write_all(out_fd, head, (size_t)hn);

    for (int r = 0; r < nranks; r++) {
        /* Nothing buffered may be duplicated into the child. */
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "%s: fork for rank %d: %s\n", prog, r,
                    strerror(errno));
            goto failed;
        }
        if (pid == 0)
            run_rank(r, nranks, out_fd, uargc, uargv);

        int st;
        while (waitpid(pid, &st, 0) < 0) {
            if (errno != EINTR) {
                fprintf(stderr, "%s: waitpid for rank %d: %s\n", prog, r,
                        strerror(errno));
                goto failed;
            }
        }
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
            continue;
        if (WIFEXITED(st)) {
            fprintf(stderr, "rank %d: program exited with status %d\n", r,
                    WEXITSTATUS(st));
        } else if (WIFSIGNALED(st)) {
            int sig = WTERMSIG(st);
            const char *name = strsignal(sig);
            char desc[128];
            snprintf(desc, sizeof desc, "%s", name ? name : "unknown signal");
            if (desc[0] >= 'A' && desc[0] <= 'Z')
                desc[0] = (char)(desc[0] - 'A' + 'a');
            fprintf(stderr, "rank %d: program killed by signal %d (%s)\n", r,
                    sig, desc);
        } else {
            fprintf(stderr, "rank %d: program stopped unexpectedly\n", r);
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
