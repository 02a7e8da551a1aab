/*
 * acesim_dumpi: a PMPI interposition library that writes a DUMPI trace (sst-dumpi's binary
 * format, version 1.1) of an unmodified MPI program, for `acesim trace record`.
 *
 * Build: mpicc -shared -fPIC -O2 -o libacesim_dumpi.so acesim_dumpi.c
 * Use:   ACESIM_DUMPI_PREFIX=DIR/trace LD_PRELOAD=.../libacesim_dumpi.so mpirun ... ./app
 *
 * Each rank keeps its records in a memory buffer (flushed to DIR/trace-NNNN.bin once MPI_Init
 * has given it a rank and whenever the buffer passes ACESIM_DUMPI_BUFFER bytes, 16 MiB by
 * default); MPI_Finalize writes the end of the stream, the header, the footer (call counts),
 * the keyval, perf-label and function-address sections (empty), the datatype-size table and
 * the 64-byte index, and rank 0 writes DIR/trace.meta. All integers are big-endian, as in
 * sst-dumpi; the record layouts are those of crates/acesim/src/frontends/dumpi/records.rs
 * (sst-dumpi's dumpi/common/dumpiio.c).
 *
 * Handles follow DUMPI: communicators 1 = MPI_COMM_NULL, 2 = MPI_COMM_WORLD, 3 = MPI_COMM_SELF,
 * then 4, 5, ... as Comm_split/Comm_dup/Comm_create make them; requests 1 = MPI_REQUEST_NULL,
 * then 2, 3, ... one per Isend/Irecv/Send_init/Recv_init; datatypes 0..27 are DUMPI's
 * predefined types (2 = MPI_CHAR ... 9 = MPI_INT ... 14 = MPI_DOUBLE ...), other types 28 on,
 * with their MPI_Type_size in the table; ops 1 = MPI_MAX ... 3 = MPI_SUM ..., 15 = user ops.
 *
 * Not thread-safe: for programs that call MPI from one thread (MPI_THREAD_MULTIPLE programs
 * would interleave records). Calls not wrapped here are not recorded; a communicator or
 * request made by one of them gets a fresh id when a traced call first uses it.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <errno.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* DUMPI labels (sst-dumpi's dumpi/common/funclabels.h order). */
enum {
  L_Send = 0, L_Recv = 1, L_Get_count = 2, L_Bsend = 3, L_Ssend = 4, L_Rsend = 5,
  L_Isend = 8, L_Ibsend = 9, L_Issend = 10, L_Irsend = 11, L_Irecv = 12, L_Wait = 13,
  L_Test = 14, L_Request_free = 15, L_Waitany = 16, L_Testany = 17, L_Waitall = 18,
  L_Testall = 19, L_Waitsome = 20, L_Testsome = 21, L_Iprobe = 22, L_Probe = 23,
  L_Send_init = 26, L_Bsend_init = 27, L_Ssend_init = 28, L_Rsend_init = 29,
  L_Recv_init = 30, L_Start = 31, L_Startall = 32, L_Sendrecv = 33,
  L_Sendrecv_replace = 34, L_Barrier = 52,
  L_Bcast = 53, L_Gather = 54, L_Gatherv = 55, L_Scatter = 56, L_Scatterv = 57,
  L_Allgather = 58, L_Allgatherv = 59, L_Alltoall = 60, L_Alltoallv = 61, L_Reduce = 62,
  L_Allreduce = 65, L_Reduce_scatter = 66, L_Scan = 67, L_Comm_group = 72,
  L_Group_incl = 76, L_Group_free = 80, L_Comm_size = 81, L_Comm_rank = 82,
  L_Comm_dup = 84, L_Comm_create = 85, L_Comm_split = 86, L_Comm_free = 87,
  L_Wtime = 122, L_Init = 124, L_Finalize = 125, L_Exscan = 156, L_Init_thread = 171,
  L_ALL_FUNCTIONS = 290, L_END_OF_STREAM = 293
};

#define MASK_STATUS 0x03
#define MASK_CPU 0x04
#define MASK_WALL 0x08
#define MASK_THREAD 0x40

#define COMM_NULL_ID 1
#define COMM_WORLD_ID 2
#define COMM_SELF_ID 3
#define REQUEST_NULL_ID 1
#define DTYPE_NULL_ID 1
#define FIRST_USER_DTYPE 28
#define GROUP_NULL_ID 1
#define GROUP_EMPTY_ID 2

/* ---------------------------------------------------------------- output buffer */

static unsigned char *buf;
static size_t buf_len, buf_cap;
static size_t flush_at = 16u << 20;
static FILE *out;             /* the rank's .bin file, once the rank is known */
static uint64_t out_written;  /* bytes already in `out` */
static int tracing;           /* between MPI_Init and MPI_Finalize */
static int failed;            /* an I/O error: stop writing, say so once */
static int my_rank = -1, world_size = 0;
static char prefix[4096];
static int32_t wall_bias, cpu_bias;
static uint64_t start_time;
static uint32_t call_count[L_ALL_FUNCTIONS + 1];
static uint32_t ignored_count[L_ALL_FUNCTIONS + 1];

static void die_io(const char *what) {
  if (!failed)
    fprintf(stderr, "acesim_dumpi: rank %d: %s: %s (the trace is incomplete)\n", my_rank,
            what, strerror(errno));
  failed = 1;
}

static void grow(size_t n) {
  if (buf_len + n <= buf_cap)
    return;
  size_t cap = buf_cap ? buf_cap : 1u << 16;
  while (cap < buf_len + n)
    cap *= 2;
  unsigned char *b = realloc(buf, cap);
  if (!b) {
    fprintf(stderr, "acesim_dumpi: out of memory for the trace buffer\n");
    abort();
  }
  buf = b;
  buf_cap = cap;
}

static void flush_buf(void) {
  if (!out || failed || buf_len == 0)
    return;
  if (fwrite(buf, 1, buf_len, out) != buf_len)
    die_io("writing the trace");
  out_written += buf_len;
  buf_len = 0;
}

static uint64_t tell(void) { return out_written + buf_len; }

static void put8(uint8_t v) { grow(1); buf[buf_len++] = v; }
static void put16(uint16_t v) { grow(2); buf[buf_len++] = v >> 8; buf[buf_len++] = v & 0xff; }
static void put32(uint32_t v) {
  grow(4);
  for (int i = 3; i >= 0; --i)
    buf[buf_len++] = (v >> (8 * i)) & 0xff;
}
static void put64(uint64_t v) {
  grow(8);
  for (int i = 7; i >= 0; --i)
    buf[buf_len++] = (v >> (8 * i)) & 0xff;
}
static void put_arr32(int n, const int *v) {
  put32((uint32_t)n);
  for (int i = 0; i < n; ++i)
    put32((uint32_t)(v ? v[i] : 0));
}
/* DUMPI's put_string: u16 length then the bytes (header fields). */
static void put_string(const char *s) {
  size_t n = s ? strlen(s) : 0;
  if (n > 65535)
    n = 65535;
  put16((uint16_t)n);
  grow(n);
  memcpy(buf + buf_len, s, n);
  buf_len += n;
}
/* DUMPI's putchararr: i32 length then the bytes (argv). */
static void put_chars(const char *s) {
  size_t n = s ? strlen(s) : 0;
  put32((uint32_t)n);
  grow(n);
  memcpy(buf + buf_len, s, n);
  buf_len += n;
}

/* ---------------------------------------------------------------- times */

typedef struct { int64_t sec; int64_t nsec; } stamp;
typedef struct { stamp wall0, cpu0; } enter_t;

static stamp now(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  stamp s = {t.tv_sec, t.tv_nsec};
  return s;
}

static enter_t enter(void) {
  enter_t e;
  e.wall0 = now(CLOCK_REALTIME);
  e.cpu0 = now(CLOCK_PROCESS_CPUTIME_ID);
  return e;
}

static void put_stamp(stamp s, int32_t bias) {
  put16((uint16_t)(s.sec - bias));
  put32((uint32_t)s.nsec);
}

/* The record's head: label, mask, thread, cpu and wall times. */
static void head(int label, const enter_t *e) {
  stamp w1 = now(CLOCK_REALTIME), c1 = now(CLOCK_PROCESS_CPUTIME_ID);
  if (label >= 0 && label <= L_ALL_FUNCTIONS)
    call_count[label]++;
  put16((uint16_t)label);
  put8(MASK_STATUS | MASK_CPU | MASK_WALL | MASK_THREAD);
  put16(0);
  put_stamp(e->cpu0, cpu_bias);
  put_stamp(c1, cpu_bias);
  put_stamp(e->wall0, wall_bias);
  put_stamp(w1, wall_bias);
}

static void done(void) {
  if (out && buf_len >= flush_at)
    flush_buf();
}

/* ---------------------------------------------------------------- handle tables */

/* Datatypes: DUMPI's predefined list, then user types (a handle seen again with another size
 * gets a new index: MPI may reuse a freed handle). */
#define MAX_TYPES 65535
static MPI_Datatype type_handle[MAX_TYPES];
static int32_t type_size[MAX_TYPES];
static int type_known[MAX_TYPES];
static int n_types = FIRST_USER_DTYPE;

static void init_types(void) {
  MPI_Datatype pre[FIRST_USER_DTYPE];
  int have[FIRST_USER_DTYPE];
  memset(have, 0, sizeof have);
#define PRE(i, t) do { pre[i] = (t); have[i] = 1; } while (0)
  PRE(2, MPI_CHAR); PRE(3, MPI_SIGNED_CHAR); PRE(4, MPI_UNSIGNED_CHAR); PRE(5, MPI_BYTE);
  PRE(6, MPI_WCHAR); PRE(7, MPI_SHORT); PRE(8, MPI_UNSIGNED_SHORT); PRE(9, MPI_INT);
  PRE(10, MPI_UNSIGNED); PRE(11, MPI_LONG); PRE(12, MPI_UNSIGNED_LONG); PRE(13, MPI_FLOAT);
  PRE(14, MPI_DOUBLE); PRE(15, MPI_LONG_DOUBLE); PRE(16, MPI_LONG_LONG_INT);
  PRE(17, MPI_UNSIGNED_LONG_LONG); PRE(18, MPI_LONG_LONG); PRE(19, MPI_PACKED);
  PRE(22, MPI_FLOAT_INT); PRE(23, MPI_DOUBLE_INT); PRE(24, MPI_LONG_INT);
  PRE(25, MPI_SHORT_INT); PRE(26, MPI_2INT); PRE(27, MPI_LONG_DOUBLE_INT);
#undef PRE
  for (int i = 0; i < FIRST_USER_DTYPE; ++i) {
    type_size[i] = 0;
    type_known[i] = have[i];
    if (have[i]) {
      int s = 0;
      type_handle[i] = pre[i];
      PMPI_Type_size(pre[i], &s);
      type_size[i] = s;
    }
  }
}

static uint16_t dtype(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL)
    return DTYPE_NULL_ID;
  for (int i = 2; i < FIRST_USER_DTYPE; ++i)
    if (type_known[i] && type_handle[i] == t)
      return (uint16_t)i;
  int s = 0;
  PMPI_Type_size(t, &s);
  for (int i = n_types - 1; i >= FIRST_USER_DTYPE; --i)
    if (type_handle[i] == t && type_size[i] == s)
      return (uint16_t)i;
  if (n_types >= MAX_TYPES)
    return 0;
  type_handle[n_types] = t;
  type_size[n_types] = s;
  type_known[n_types] = 1;
  return (uint16_t)n_types++;
}

static uint8_t op_id(MPI_Op op) {
  MPI_Op ops[] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR,
                  MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE,
                  MPI_OP_NULL};
  for (unsigned i = 0; i < sizeof ops / sizeof ops[0]; ++i)
    if (ops[i] == op)
      return (uint8_t)(i + 1);
  return 15;
}

/* DUMPI's wildcards: MPI_ANY_SOURCE and MPI_ANY_TAG are -1 whatever the MPI's values. */
static int32_t src_id(int s) { return s == MPI_ANY_SOURCE ? -1 : s; }
static int32_t tag_id(int t) { return t == MPI_ANY_TAG ? -1 : t; }

static int thread_level(int l) {
  return l == MPI_THREAD_SINGLE       ? 1
         : l == MPI_THREAD_FUNNELED   ? 2
         : l == MPI_THREAD_SERIALIZED ? 3
         : l == MPI_THREAD_MULTIPLE   ? 4
                                      : 0;
}

/* Communicators and groups: a small table of live handles. */
#define MAX_COMMS 4096
static MPI_Comm comm_handle[MAX_COMMS];
static uint16_t comm_ids[MAX_COMMS];
static int n_comms;
static uint16_t next_comm = 4;

static uint16_t comm_id(MPI_Comm c) {
  if (c == MPI_COMM_NULL)
    return COMM_NULL_ID;
  if (c == MPI_COMM_WORLD)
    return COMM_WORLD_ID;
  if (c == MPI_COMM_SELF)
    return COMM_SELF_ID;
  for (int i = n_comms - 1; i >= 0; --i)
    if (comm_handle[i] == c)
      return comm_ids[i];
  /* A communicator no traced call made (MPI_Cart_create, intercommunicators, ...). */
  if (n_comms < MAX_COMMS) {
    comm_handle[n_comms] = c;
    comm_ids[n_comms++] = next_comm;
  }
  return next_comm++;
}

static uint16_t new_comm(MPI_Comm c) {
  if (c == MPI_COMM_NULL)
    return COMM_NULL_ID;
  for (int i = 0; i < n_comms; ++i)
    if (comm_handle[i] == c) { /* a reused handle: forget the old one */
      comm_handle[i] = comm_handle[--n_comms];
      comm_ids[i] = comm_ids[n_comms];
      break;
    }
  if (n_comms < MAX_COMMS) {
    comm_handle[n_comms] = c;
    comm_ids[n_comms++] = next_comm;
  }
  return next_comm++;
}

static void drop_comm(MPI_Comm c) {
  for (int i = 0; i < n_comms; ++i)
    if (comm_handle[i] == c) {
      comm_handle[i] = comm_handle[--n_comms];
      comm_ids[i] = comm_ids[n_comms];
      return;
    }
}

#define MAX_GROUPS 4096
static MPI_Group group_handle[MAX_GROUPS];
static uint16_t group_ids[MAX_GROUPS];
static int n_groups;
static uint16_t next_group = 3;

static uint16_t group_id(MPI_Group g, int fresh) {
  if (g == MPI_GROUP_NULL)
    return GROUP_NULL_ID;
  if (g == MPI_GROUP_EMPTY)
    return GROUP_EMPTY_ID;
  for (int i = n_groups - 1; i >= 0; --i)
    if (group_handle[i] == g) {
      if (!fresh)
        return group_ids[i];
      group_handle[i] = group_handle[--n_groups];
      group_ids[i] = group_ids[n_groups];
      break;
    }
  if (n_groups < MAX_GROUPS) {
    group_handle[n_groups] = g;
    group_ids[n_groups++] = next_group;
  }
  return next_group++;
}

/* Requests: a hash table from the MPI handle to DUMPI's id. */
typedef struct req_node {
  MPI_Request h;
  int32_t id;
  int persistent;
  struct req_node *next;
} req_node;
#define REQ_BUCKETS 4096
static req_node *req_table[REQ_BUCKETS];
static int32_t next_request = 2;

static unsigned req_hash(MPI_Request r) {
  uint64_t k = 0;
  memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
  k ^= k >> 29;
  k *= 0x9e3779b97f4a7c15ull;
  return (unsigned)(k >> 40) % REQ_BUCKETS;
}

static req_node **req_find(MPI_Request r) {
  req_node **p = &req_table[req_hash(r)];
  while (*p && (*p)->h != r)
    p = &(*p)->next;
  return p;
}

/* A fresh id for a request a call just made. */
static int32_t req_new(MPI_Request r, int persistent) {
  if (r == MPI_REQUEST_NULL)
    return REQUEST_NULL_ID;
  req_node **p = req_find(r);
  if (!*p) {
    *p = calloc(1, sizeof(req_node));
    if (!*p)
      abort();
    (*p)->h = r;
  }
  (*p)->id = next_request++;
  (*p)->persistent = persistent;
  return (*p)->id;
}

/* A request of a call to MPI_PROC_NULL (not written): waits see MPI_REQUEST_NULL. */
static void req_proc_null(MPI_Request r, int persistent) {
  if (r == MPI_REQUEST_NULL)
    return;
  req_new(r, persistent);
  (*req_find(r))->id = REQUEST_NULL_ID;
  next_request--;
}

/* The id of request `r` (before a wait or test changes it). */
static int32_t req_id(MPI_Request r) {
  if (r == MPI_REQUEST_NULL)
    return REQUEST_NULL_ID;
  req_node **p = req_find(r);
  if (*p)
    return (*p)->id;
  return req_new(r, 0); /* made by a call not traced (e.g. MPI_Ibarrier) */
}

/* After completion: a non-persistent request is gone (`now` is its handle after the call). */
static void req_done(MPI_Request before, MPI_Request after, int freed) {
  if (before == MPI_REQUEST_NULL)
    return;
  req_node **p = req_find(before);
  if (!*p)
    return;
  if (freed || !(*p)->persistent || after == MPI_REQUEST_NULL) {
    req_node *n = *p;
    *p = n->next;
    free(n);
  }
}

/* ---------------------------------------------------------------- statuses */

/* A status: bytes, source, cancelled, error, tag. MPI sets a status's error field only when
 * a multiple completion returns MPI_ERR_IN_STATUS; otherwise the call's return code is it. */
static void put_status(const MPI_Status *s, int rc) {
  int bytes = 0, cancelled = 0;
  PMPI_Get_count(s, MPI_BYTE, &bytes);
  PMPI_Test_cancelled(s, &cancelled);
  put32((uint32_t)(bytes == MPI_UNDEFINED ? -1 : bytes));
  put32((uint32_t)src_id(s->MPI_SOURCE));
  put8((uint8_t)cancelled);
  put8((uint8_t)(rc == MPI_ERR_IN_STATUS ? s->MPI_ERROR : rc));
  put32((uint32_t)tag_id(s->MPI_TAG));
}

static void put_statuses_rc(int n, const MPI_Status *s, int rc) {
  if (n < 0)
    n = 0;
  put32((uint32_t)n);
  for (int i = 0; i < n; ++i)
    put_status(&s[i], rc);
}
#define put_statuses(n, s) put_statuses_rc((n), (s), rc)

/* Scratch statuses for callers that pass MPI_STATUS(ES)_IGNORE. */
static MPI_Status *scratch(int n) {
  static MPI_Status *s;
  static int cap;
  if (n > cap) {
    free(s);
    cap = n < 64 ? 64 : n;
    s = calloc((size_t)cap, sizeof(MPI_Status));
    if (!s)
      abort();
  }
  return s;
}

static int32_t *ids_scratch(int n) {
  static int32_t *s;
  static int cap;
  if (n > cap) {
    free(s);
    cap = n < 64 ? 64 : n;
    s = calloc((size_t)cap, sizeof(int32_t));
    if (!s)
      abort();
  }
  return s;
}

static MPI_Request *reqs_scratch(int n) {
  static MPI_Request *s;
  static int cap;
  if (n > cap) {
    free(s);
    cap = n < 64 ? 64 : n;
    s = calloc((size_t)cap, sizeof(MPI_Request));
    if (!s)
      abort();
  }
  return s;
}

static int comm_rank(MPI_Comm c) {
  int r = 0;
  PMPI_Comm_rank(c, &r);
  return r;
}
static int comm_size(MPI_Comm c) {
  int n = 0;
  PMPI_Comm_size(c, &n);
  return n;
}

/* ---------------------------------------------------------------- init and finalize */

static void open_rank_file(void) {
  char path[4200];
  snprintf(path, sizeof path, "%s-%04d.bin", prefix, my_rank);
  out = fopen(path, "wb");
  if (!out) {
    die_io(path);
    return;
  }
  flush_buf();
}

static void start(void) {
  const char *p = getenv("ACESIM_DUMPI_PREFIX");
  snprintf(prefix, sizeof prefix, "%s", p && *p ? p : "acesim-trace");
  const char *b = getenv("ACESIM_DUMPI_BUFFER");
  if (b && atol(b) > 0)
    flush_at = (size_t)atol(b);
  stamp w = now(CLOCK_REALTIME);
  start_time = (uint64_t)w.sec;
  wall_bias = (int32_t)w.sec;
  cpu_bias = 0;
  buf_len = 0;
  put64(0xFFAADD44554D5049ull); /* magic */
  put32((uint32_t)cpu_bias);
  put32((uint32_t)wall_bias);
}

static void put_argv(int argc, char **argv, int with_dup) {
  (void)with_dup;
  if (!argv)
    argc = 0;
  put32((uint32_t)argc);
  for (int i = 0; i < argc; ++i)
    put_chars(argv[i]);
}

static void after_init(void) {
  PMPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  init_types();
  tracing = 1;
  open_rank_file();
}

int MPI_Init(int *argc, char ***argv) {
  start();
  enter_t e = enter();
  int rc = PMPI_Init(argc, argv);
  head(L_Init, &e);
  put_argv(argc ? *argc : 0, argv ? *argv : NULL, 0);
  after_init();
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  start();
  enter_t e = enter();
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  head(L_Init_thread, &e);
  put_argv(argc ? *argc : 0, argv ? *argv : NULL, 0);
  put8((uint8_t)thread_level(required));
  put8((uint8_t)thread_level(*provided));
  after_init();
  return rc;
}

static void write_meta(void) {
  char path[4200], host[256] = "", user[256] = "";
  gethostname(host, sizeof host - 1);
  struct passwd *pw = getpwuid(getuid());
  if (pw && pw->pw_name)
    snprintf(user, sizeof user, "%s", pw->pw_name);
  const char *base = strrchr(prefix, '/');
  base = base ? base + 1 : prefix;
  snprintf(path, sizeof path, "%s.meta", prefix);
  FILE *f = fopen(path, "w");
  if (!f) {
    die_io(path);
    return;
  }
  fprintf(f, "hostname=%s\nnumprocs=%d\nusername=%s\nstartime=%llu\nfileprefix=%s\n"
             "version=1\nsubversion=1\nsubsubversion=0\n",
          host, world_size, user, (unsigned long long)start_time, base);
  if (fclose(f) != 0)
    die_io(path);
}

int MPI_Finalize(void) {
  enter_t e = enter();
  /* The whole world has stopped sending once everyone is here. */
  int rc = PMPI_Finalize();
  head(L_Finalize, &e);
  tracing = 0;
  if (!out)
    return rc;
  char host[256] = "", user[256] = "";
  gethostname(host, sizeof host - 1);
  struct passwd *pw = getpwuid(getuid());
  if (pw && pw->pw_name)
    snprintf(user, sizeof user, "%s", pw->pw_name);
  /* End of stream, then the header. */
  put16(L_END_OF_STREAM);
  uint64_t header = tell();
  put8(1); put8(1); put8(0);
  put64(start_time);
  put_string(host);
  put_string(user);
  put32(0); /* meshdim 0: mesh coordinates */
  put32(0); /* mesh sizes */
  uint64_t footer = tell();
  put64(0xf007fee7ull);
  for (int i = 0; i <= L_ALL_FUNCTIONS; ++i)
    put32(call_count[i]);
  for (int i = 0; i <= L_ALL_FUNCTIONS; ++i)
    put32(ignored_count[i]); /* calls not written: with MPI_PROC_NULL peers */
  uint64_t keyval = tell();
  put32(0);
  uint64_t perflbl = tell();
  put32(0);
  uint64_t sizes = tell();
  put32((uint32_t)n_types);
  for (int i = 0; i < n_types; ++i)
    put32((uint32_t)type_size[i]);
  uint64_t addrs = tell();
  put32(0);
  put64(0xFFAADD44554D5049ull);
  put64(sizes);
  put64(addrs);
  put64(perflbl);
  put64(header);
  put64(8); /* the body: the time biases right after the magic */
  put64(footer);
  put64(keyval);
  flush_buf();
  if (fclose(out) != 0)
    die_io("closing the trace");
  out = NULL;
  if (my_rank == 0)
    write_meta();
  return rc;
}

/* ---------------------------------------------------------------- point to point */

#define P2P(label, count, type, peer, tag, comm)                                             \
  put32((uint32_t)(count));                                                                 \
  put16(dtype(type));                                                                       \
  put32((uint32_t)src_id(peer));                                                            \
  put32((uint32_t)tag_id(tag));                                                             \
  put16(comm_id(comm))

#define BLOCKING_SEND(NAME, LABEL)                                                          \
  int NAME(const void *b, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) { \
    enter_t e = enter();                                                                    \
    int rc = P##NAME(b, count, type, dest, tag, comm);                                      \
    if (tracing && dest == MPI_PROC_NULL) {                                                 \
      ignored_count[LABEL]++;                                                               \
    } else if (tracing) {                                                                   \
      head(LABEL, &e);                                                                      \
      P2P(LABEL, count, type, dest, tag, comm);                                             \
      done();                                                                               \
    }                                                                                       \
    return rc;                                                                              \
  }
BLOCKING_SEND(MPI_Send, L_Send)
BLOCKING_SEND(MPI_Ssend, L_Ssend)
BLOCKING_SEND(MPI_Rsend, L_Rsend)
BLOCKING_SEND(MPI_Bsend, L_Bsend)

#define NB_SEND(NAME, LABEL, PERSISTENT)                                                    \
  int NAME(const void *b, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,  \
           MPI_Request *req) {                                                              \
    enter_t e = enter();                                                                    \
    int rc = P##NAME(b, count, type, dest, tag, comm, req);                                 \
    if (tracing && dest == MPI_PROC_NULL) {                                                 \
      ignored_count[LABEL]++;                                                               \
      req_proc_null(*req, PERSISTENT);                                                      \
    } else if (tracing) {                                                                   \
      head(LABEL, &e);                                                                      \
      P2P(LABEL, count, type, dest, tag, comm);                                             \
      put32((uint32_t)req_new(*req, PERSISTENT));                                           \
      done();                                                                               \
    }                                                                                       \
    return rc;                                                                              \
  }
NB_SEND(MPI_Isend, L_Isend, 0)
NB_SEND(MPI_Issend, L_Issend, 0)
NB_SEND(MPI_Irsend, L_Irsend, 0)
NB_SEND(MPI_Ibsend, L_Ibsend, 0)
NB_SEND(MPI_Send_init, L_Send_init, 1)
NB_SEND(MPI_Ssend_init, L_Ssend_init, 1)
NB_SEND(MPI_Rsend_init, L_Rsend_init, 1)
NB_SEND(MPI_Bsend_init, L_Bsend_init, 1)

int MPI_Recv(void *b, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
  MPI_Status local;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
  enter_t e = enter();
  int rc = PMPI_Recv(b, count, type, source, tag, comm, st);
  if (tracing && source == MPI_PROC_NULL) {
    ignored_count[L_Recv]++;
  } else if (tracing) {
    head(L_Recv, &e);
    P2P(L_Recv, count, type, source, tag, comm);
    put_statuses(1, st);
    done();
  }
  return rc;
}

int MPI_Irecv(void *b, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *req) {
  enter_t e = enter();
  int rc = PMPI_Irecv(b, count, type, source, tag, comm, req);
  if (tracing && source == MPI_PROC_NULL) {
    ignored_count[L_Irecv]++;
    req_proc_null(*req, 0);
  } else if (tracing) {
    head(L_Irecv, &e);
    P2P(L_Irecv, count, type, source, tag, comm);
    put32((uint32_t)req_new(*req, 0));
    done();
  }
  return rc;
}

int MPI_Recv_init(void *b, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request *req) {
  enter_t e = enter();
  int rc = PMPI_Recv_init(b, count, type, source, tag, comm, req);
  if (tracing && source == MPI_PROC_NULL) {
    ignored_count[L_Recv_init]++;
    req_proc_null(*req, 1);
  } else if (tracing) {
    head(L_Recv_init, &e);
    P2P(L_Recv_init, count, type, source, tag, comm);
    put32((uint32_t)req_new(*req, 1));
    done();
  }
  return rc;
}

int MPI_Start(MPI_Request *req) {
  enter_t e = enter();
  int32_t id = req_id(*req);
  int rc = PMPI_Start(req);
  if (tracing && id == REQUEST_NULL_ID) {
    ignored_count[L_Start]++;
  } else if (tracing) {
    head(L_Start, &e);
    put32((uint32_t)id);
    done();
  }
  return rc;
}

int MPI_Startall(int n, MPI_Request reqs[]) {
  enter_t e = enter();
  int32_t *ids = ids_scratch(n);
  int k = 0; /* requests to MPI_PROC_NULL left out */
  for (int i = 0; i < n; ++i)
    if ((ids[k] = req_id(reqs[i])) != REQUEST_NULL_ID)
      ++k;
  int rc = PMPI_Startall(n, reqs);
  if (tracing && k == 0) {
    ignored_count[L_Startall]++;
  } else if (tracing) {
    head(L_Startall, &e);
    put32((uint32_t)k);
    put_arr32(k, ids);
    done();
  }
  return rc;
}

int MPI_Request_free(MPI_Request *req) {
  enter_t e = enter();
  MPI_Request before = *req;
  int32_t id = req_id(before);
  int rc = PMPI_Request_free(req);
  if (tracing && id == REQUEST_NULL_ID) {
    ignored_count[L_Request_free]++;
    req_done(before, MPI_REQUEST_NULL, 1);
  } else if (tracing) {
    head(L_Request_free, &e);
    put32((uint32_t)id);
    req_done(before, MPI_REQUEST_NULL, 1);
    done();
  }
  return rc;
}

/* Sendrecv(_replace): with one side MPI_PROC_NULL, the other side alone, as a Send or a Recv
 * record (acesim's reader takes no MPI_PROC_NULL peer); with both, nothing. */
static void sendrecv(int label, const enter_t *e, int scount, MPI_Datatype stype, int dest,
                     int stag, int rcount, MPI_Datatype rtype, int source, int rtag,
                     MPI_Comm comm, const MPI_Status *st, int rc) {
  int no_send = dest == MPI_PROC_NULL, no_recv = source == MPI_PROC_NULL;
  if (no_send || no_recv)
    ignored_count[label]++;
  if (no_send && no_recv)
    return;
  if (no_recv) {
    head(L_Send, e);
    P2P(L_Send, scount, stype, dest, stag, comm);
  } else if (no_send) {
    head(L_Recv, e);
    P2P(L_Recv, rcount, rtype, source, rtag, comm);
    put_statuses(1, st);
  } else if (label == L_Sendrecv) {
    head(L_Sendrecv, e);
    put32((uint32_t)scount); put16(dtype(stype)); put32((uint32_t)dest);
    put32((uint32_t)stag);
    put32((uint32_t)rcount); put16(dtype(rtype)); put32((uint32_t)src_id(source));
    put32((uint32_t)tag_id(rtag));
    put16(comm_id(comm));
    put_statuses(1, st);
  } else {
    head(L_Sendrecv_replace, e);
    put32((uint32_t)scount); put16(dtype(stype)); put32((uint32_t)dest);
    put32((uint32_t)stag); put32((uint32_t)src_id(source)); put32((uint32_t)tag_id(rtag));
    put16(comm_id(comm));
    put_statuses(1, st);
  }
  done();
}

int MPI_Sendrecv(const void *sb, int scount, MPI_Datatype stype, int dest, int stag,
                 void *rb, int rcount, MPI_Datatype rtype, int source, int rtag,
                 MPI_Comm comm, MPI_Status *status) {
  MPI_Status local;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
  enter_t e = enter();
  int rc = PMPI_Sendrecv(sb, scount, stype, dest, stag, rb, rcount, rtype, source, rtag,
                         comm, st);
  if (tracing)
    sendrecv(L_Sendrecv, &e, scount, stype, dest, stag, rcount, rtype, source, rtag, comm, st,
             rc);
  return rc;
}

int MPI_Sendrecv_replace(void *b, int count, MPI_Datatype type, int dest, int stag,
                         int source, int rtag, MPI_Comm comm, MPI_Status *status) {
  MPI_Status local;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
  enter_t e = enter();
  int rc = PMPI_Sendrecv_replace(b, count, type, dest, stag, source, rtag, comm, st);
  if (tracing)
    sendrecv(L_Sendrecv_replace, &e, count, type, dest, stag, count, type, source, rtag, comm,
             st, rc);
  return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
  MPI_Status local;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
  enter_t e = enter();
  int rc = PMPI_Probe(source, tag, comm, st);
  if (tracing) {
    head(L_Probe, &e);
    put32((uint32_t)src_id(source)); put32((uint32_t)tag_id(tag)); put16(comm_id(comm));
    put_statuses(1, st);
    done();
  }
  return rc;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
  MPI_Status local;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
  enter_t e = enter();
  int rc = PMPI_Iprobe(source, tag, comm, flag, st);
  if (tracing) {
    head(L_Iprobe, &e);
    put32((uint32_t)src_id(source)); put32((uint32_t)tag_id(tag)); put16(comm_id(comm));
    put32((uint32_t)*flag);
    put_statuses(*flag ? 1 : 0, st);
    done();
  }
  return rc;
}

int MPI_Get_count(const MPI_Status *status, MPI_Datatype type, int *count) {
  enter_t e = enter();
  int rc = PMPI_Get_count(status, type, count);
  if (tracing) {
    head(L_Get_count, &e);
    put_statuses(1, status);
    put16(dtype(type));
    put32((uint32_t)*count);
    done();
  }
  return rc;
}

/* ---------------------------------------------------------------- completion */

int MPI_Wait(MPI_Request *req, MPI_Status *status) {
  MPI_Status local;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
  enter_t e = enter();
  MPI_Request before = *req;
  int32_t id = req_id(before);
  int rc = PMPI_Wait(req, st);
  if (tracing) {
    head(L_Wait, &e);
    put32((uint32_t)id);
    put_statuses(1, st);
    req_done(before, *req, 0);
    done();
  }
  return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status) {
  MPI_Status local;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
  enter_t e = enter();
  MPI_Request before = *req;
  int32_t id = req_id(before);
  int rc = PMPI_Test(req, flag, st);
  if (tracing) {
    head(L_Test, &e);
    put32((uint32_t)id);
    put32((uint32_t)*flag);
    put_statuses(*flag ? 1 : 0, st);
    if (*flag)
      req_done(before, *req, 0);
    done();
  }
  return rc;
}

/* Waitall/Testall: ids before the call; `n` statuses when complete. */
static int all(int label, int n, MPI_Request reqs[], int *flag, MPI_Status *statuses) {
  MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? scratch(n) : statuses;
  enter_t e = enter();
  int32_t *ids = ids_scratch(n);
  MPI_Request *before = reqs_scratch(n);
  for (int i = 0; i < n; ++i) {
    ids[i] = req_id(reqs[i]);
    before[i] = reqs[i];
  }
  int one = 1;
  int rc = label == L_Waitall ? PMPI_Waitall(n, reqs, st) : PMPI_Testall(n, reqs, flag, st);
  if (!flag)
    flag = &one;
  if (tracing) {
    head(label, &e);
    put32((uint32_t)n);
    put_arr32(n, ids);
    if (label == L_Testall)
      put32((uint32_t)*flag);
    put_statuses(*flag ? n : 0, st);
    if (*flag)
      for (int i = 0; i < n; ++i)
        req_done(before[i], reqs[i], 0);
    done();
  }
  return rc;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
  return all(L_Waitall, n, reqs, NULL, statuses);
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[]) {
  return all(L_Testall, n, reqs, flag, statuses);
}

static int any(int label, int n, MPI_Request reqs[], int *index, int *flag,
               MPI_Status *status) {
  MPI_Status local;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
  enter_t e = enter();
  int32_t *ids = ids_scratch(n);
  MPI_Request *before = reqs_scratch(n);
  for (int i = 0; i < n; ++i) {
    ids[i] = req_id(reqs[i]);
    before[i] = reqs[i];
  }
  int one = 1;
  int rc = label == L_Waitany ? PMPI_Waitany(n, reqs, index, st)
                              : PMPI_Testany(n, reqs, index, flag, st);
  if (!flag)
    flag = &one;
  if (tracing) {
    head(label, &e);
    put32((uint32_t)n);
    put_arr32(n, ids);
    put32((uint32_t)(*index == MPI_UNDEFINED ? -1 : *index));
    if (label == L_Testany)
      put32((uint32_t)*flag);
    put_statuses(*flag && *index != MPI_UNDEFINED ? 1 : 0, st);
    if (*flag && *index >= 0 && *index < n)
      req_done(before[*index], reqs[*index], 0);
    done();
  }
  return rc;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status) {
  return any(L_Waitany, n, reqs, index, NULL, status);
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status) {
  return any(L_Testany, n, reqs, index, flag, status);
}

static int some(int label, int n, MPI_Request reqs[], int *outcount, int indices[],
                MPI_Status statuses[]) {
  MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? scratch(n) : statuses;
  enter_t e = enter();
  int32_t *ids = ids_scratch(n);
  MPI_Request *before = reqs_scratch(n);
  for (int i = 0; i < n; ++i) {
    ids[i] = req_id(reqs[i]);
    before[i] = reqs[i];
  }
  int rc = label == L_Waitsome ? PMPI_Waitsome(n, reqs, outcount, indices, st)
                               : PMPI_Testsome(n, reqs, outcount, indices, st);
  if (tracing) {
    int k = *outcount == MPI_UNDEFINED ? 0 : *outcount;
    head(label, &e);
    put32((uint32_t)n);
    put_arr32(n, ids);
    put32((uint32_t)(*outcount == MPI_UNDEFINED ? -1 : *outcount));
    put_arr32(k, indices);
    put_statuses(k, st);
    for (int i = 0; i < k; ++i)
      if (indices[i] >= 0 && indices[i] < n)
        req_done(before[indices[i]], reqs[indices[i]], 0);
    done();
  }
  return rc;
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[]) {
  return some(L_Waitsome, n, reqs, outcount, indices, statuses);
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[]) {
  return some(L_Testsome, n, reqs, outcount, indices, statuses);
}

/* ---------------------------------------------------------------- collectives */

int MPI_Barrier(MPI_Comm comm) {
  enter_t e = enter();
  int rc = PMPI_Barrier(comm);
  if (tracing) {
    head(L_Barrier, &e);
    put16(comm_id(comm));
    done();
  }
  return rc;
}

int MPI_Bcast(void *b, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  enter_t e = enter();
  int rc = PMPI_Bcast(b, count, type, root, comm);
  if (tracing) {
    head(L_Bcast, &e);
    put32((uint32_t)count); put16(dtype(type)); put32((uint32_t)root); put16(comm_id(comm));
    done();
  }
  return rc;
}

int MPI_Reduce(const void *sb, void *rb, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm) {
  enter_t e = enter();
  int rc = PMPI_Reduce(sb, rb, count, type, op, root, comm);
  if (tracing) {
    head(L_Reduce, &e);
    put32((uint32_t)count); put16(dtype(type)); put8(op_id(op)); put32((uint32_t)root);
    put16(comm_id(comm));
    done();
  }
  return rc;
}

#define ALLRED(NAME, LABEL)                                                                 \
  int NAME(const void *sb, void *rb, int count, MPI_Datatype type, MPI_Op op,              \
           MPI_Comm comm) {                                                                 \
    enter_t e = enter();                                                                    \
    int rc = P##NAME(sb, rb, count, type, op, comm);                                        \
    if (tracing) {                                                                          \
      head(LABEL, &e);                                                                      \
      put32((uint32_t)count); put16(dtype(type)); put8(op_id(op)); put16(comm_id(comm));    \
      done();                                                                               \
    }                                                                                       \
    return rc;                                                                              \
  }
ALLRED(MPI_Allreduce, L_Allreduce)
ALLRED(MPI_Scan, L_Scan)
ALLRED(MPI_Exscan, L_Exscan)

int MPI_Gather(const void *sb, int scount, MPI_Datatype stype, void *rb, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm) {
  enter_t e = enter();
  int rc = PMPI_Gather(sb, scount, stype, rb, rcount, rtype, root, comm);
  if (tracing) {
    int me = comm_rank(comm);
    head(L_Gather, &e);
    put32((uint32_t)me);
    put32((uint32_t)scount);
    put16(sb == MPI_IN_PLACE ? dtype(rtype) : dtype(stype));
    put32((uint32_t)root); put16(comm_id(comm));
    if (me == root) {
      put32((uint32_t)rcount);
      put16(dtype(rtype));
    }
    done();
  }
  return rc;
}

int MPI_Scatter(const void *sb, int scount, MPI_Datatype stype, void *rb, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm) {
  enter_t e = enter();
  int rc = PMPI_Scatter(sb, scount, stype, rb, rcount, rtype, root, comm);
  if (tracing) {
    int me = comm_rank(comm);
    head(L_Scatter, &e);
    put32((uint32_t)me);
    put32((uint32_t)rcount);
    put16(rb == MPI_IN_PLACE ? dtype(stype) : dtype(rtype));
    put32((uint32_t)root); put16(comm_id(comm));
    if (me == root) {
      put32((uint32_t)scount);
      put16(dtype(stype));
    }
    done();
  }
  return rc;
}

int MPI_Gatherv(const void *sb, int scount, MPI_Datatype stype, void *rb, const int rcounts[],
                const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm) {
  enter_t e = enter();
  int rc = PMPI_Gatherv(sb, scount, stype, rb, rcounts, displs, rtype, root, comm);
  if (tracing) {
    int me = comm_rank(comm), n = comm_size(comm);
    head(L_Gatherv, &e);
    put32((uint32_t)me); put32((uint32_t)n);
    put32((uint32_t)scount);
    put16(sb == MPI_IN_PLACE ? dtype(rtype) : dtype(stype));
    put32((uint32_t)root); put16(comm_id(comm));
    if (me == root) {
      put_arr32(n, rcounts);
      put_arr32(n, displs);
    }
    put16(me == root ? dtype(rtype) : DTYPE_NULL_ID);
    done();
  }
  return rc;
}

int MPI_Scatterv(const void *sb, const int scounts[], const int displs[], MPI_Datatype stype,
                 void *rb, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
  enter_t e = enter();
  int rc = PMPI_Scatterv(sb, scounts, displs, stype, rb, rcount, rtype, root, comm);
  if (tracing) {
    int me = comm_rank(comm), n = comm_size(comm);
    head(L_Scatterv, &e);
    put32((uint32_t)me); put32((uint32_t)n);
    put16(me == root ? dtype(stype) : DTYPE_NULL_ID);
    put32((uint32_t)rcount);
    put16(rb == MPI_IN_PLACE ? dtype(stype) : dtype(rtype));
    put32((uint32_t)root); put16(comm_id(comm));
    if (me == root) {
      put_arr32(n, scounts);
      put_arr32(n, displs);
    }
    done();
  }
  return rc;
}

#define UNIFORM(NAME, LABEL)                                                                \
  int NAME(const void *sb, int scount, MPI_Datatype stype, void *rb, int rcount,           \
           MPI_Datatype rtype, MPI_Comm comm) {                                             \
    enter_t e = enter();                                                                    \
    int rc = P##NAME(sb, scount, stype, rb, rcount, rtype, comm);                           \
    if (tracing) {                                                                          \
      head(LABEL, &e);                                                                      \
      put32((uint32_t)scount);                                                              \
      put16(sb == MPI_IN_PLACE ? dtype(rtype) : dtype(stype));                              \
      put32((uint32_t)rcount); put16(dtype(rtype)); put16(comm_id(comm));                   \
      done();                                                                               \
    }                                                                                       \
    return rc;                                                                              \
  }
UNIFORM(MPI_Allgather, L_Allgather)
UNIFORM(MPI_Alltoall, L_Alltoall)

int MPI_Allgatherv(const void *sb, int scount, MPI_Datatype stype, void *rb,
                   const int rcounts[], const int displs[], MPI_Datatype rtype,
                   MPI_Comm comm) {
  enter_t e = enter();
  int rc = PMPI_Allgatherv(sb, scount, stype, rb, rcounts, displs, rtype, comm);
  if (tracing) {
    int n = comm_size(comm);
    head(L_Allgatherv, &e);
    put32((uint32_t)n);
    put32((uint32_t)scount);
    put16(sb == MPI_IN_PLACE ? dtype(rtype) : dtype(stype));
    put_arr32(n, rcounts);
    put_arr32(n, displs);
    put16(dtype(rtype)); put16(comm_id(comm));
    done();
  }
  return rc;
}

int MPI_Alltoallv(const void *sb, const int scounts[], const int sdispls[],
                  MPI_Datatype stype, void *rb, const int rcounts[], const int rdispls[],
                  MPI_Datatype rtype, MPI_Comm comm) {
  enter_t e = enter();
  int rc = PMPI_Alltoallv(sb, scounts, sdispls, stype, rb, rcounts, rdispls, rtype, comm);
  if (tracing) {
    int n = comm_size(comm);
    int inplace = sb == MPI_IN_PLACE;
    head(L_Alltoallv, &e);
    put32((uint32_t)n);
    put_arr32(n, inplace ? rcounts : scounts);
    put_arr32(n, inplace ? rdispls : sdispls);
    put16(inplace ? dtype(rtype) : dtype(stype));
    put_arr32(n, rcounts);
    put_arr32(n, rdispls);
    put16(dtype(rtype)); put16(comm_id(comm));
    done();
  }
  return rc;
}

int MPI_Reduce_scatter(const void *sb, void *rb, const int rcounts[], MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm) {
  enter_t e = enter();
  int rc = PMPI_Reduce_scatter(sb, rb, rcounts, type, op, comm);
  if (tracing) {
    int n = comm_size(comm);
    head(L_Reduce_scatter, &e);
    put32((uint32_t)n);
    put_arr32(n, rcounts);
    put16(dtype(type)); put8(op_id(op)); put16(comm_id(comm));
    done();
  }
  return rc;
}

/* ---------------------------------------------------------------- communicators */

int MPI_Comm_rank(MPI_Comm comm, int *rank) {
  enter_t e = enter();
  int rc = PMPI_Comm_rank(comm, rank);
  if (tracing) {
    head(L_Comm_rank, &e);
    put16(comm_id(comm)); put32((uint32_t)*rank);
    done();
  }
  return rc;
}

int MPI_Comm_size(MPI_Comm comm, int *size) {
  enter_t e = enter();
  int rc = PMPI_Comm_size(comm, size);
  if (tracing) {
    head(L_Comm_size, &e);
    put16(comm_id(comm)); put32((uint32_t)*size);
    done();
  }
  return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
  enter_t e = enter();
  int rc = PMPI_Comm_split(comm, color, key, newcomm);
  if (tracing) {
    head(L_Comm_split, &e);
    put16(comm_id(comm));
    put32((uint32_t)(color == MPI_UNDEFINED ? -1 : color));
    put32((uint32_t)key);
    put16(new_comm(*newcomm));
    done();
  }
  return rc;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
  enter_t e = enter();
  int rc = PMPI_Comm_dup(comm, newcomm);
  if (tracing) {
    head(L_Comm_dup, &e);
    put16(comm_id(comm));
    put16(new_comm(*newcomm));
    done();
  }
  return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
  enter_t e = enter();
  int rc = PMPI_Comm_create(comm, group, newcomm);
  if (tracing) {
    head(L_Comm_create, &e);
    put16(comm_id(comm));
    put16(group_id(group, 0));
    put16(new_comm(*newcomm));
    done();
  }
  return rc;
}

int MPI_Comm_free(MPI_Comm *comm) {
  enter_t e = enter();
  MPI_Comm before = *comm;
  uint16_t id = comm_id(before);
  int rc = PMPI_Comm_free(comm);
  if (tracing) {
    head(L_Comm_free, &e);
    put16(id);
    drop_comm(before);
    done();
  }
  return rc;
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group *group) {
  enter_t e = enter();
  int rc = PMPI_Comm_group(comm, group);
  if (tracing) {
    head(L_Comm_group, &e);
    put16(comm_id(comm));
    put16(group_id(*group, 1));
    done();
  }
  return rc;
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
  enter_t e = enter();
  int rc = PMPI_Group_incl(group, n, ranks, newgroup);
  if (tracing) {
    head(L_Group_incl, &e);
    put16(group_id(group, 0));
    put32((uint32_t)n);
    put_arr32(n, ranks);
    put16(group_id(*newgroup, 1));
    done();
  }
  return rc;
}

int MPI_Group_free(MPI_Group *group) {
  enter_t e = enter();
  uint16_t id = group_id(*group, 0);
  int rc = PMPI_Group_free(group);
  if (tracing) {
    head(L_Group_free, &e);
    put16(id);
    done();
  }
  return rc;
}

double MPI_Wtime(void) {
  enter_t e = enter();
  double t = PMPI_Wtime();
  if (tracing) {
    head(L_Wtime, &e);
    done();
  }
  return t;
}
