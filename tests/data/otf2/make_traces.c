/* Writes the small OTF2 traces of acesim's tests with the OTF2 writer API (run by
 * make_traces.sh; the traces it writes are committed, so the tests need no writer):
 *   ring/         4 ranks: irecv from the left, isend to the right, waitall; compute gaps
 *   collectives/  4 ranks: bcast, allreduce, allgather, scan, exscan and reduce (in place at
 *                 its root) on the world, their bytes as Score-P counts them; a barrier and a send/recv on
 *                 a communicator of ranks 1 and 3
 *   anysource/    2 ranks: an irecv whose source, tag and size are known at completion,
 *                 tested, then waited for
 * Times are in ns (timer resolution 1e9). Collective sizes follow the convention of
 * docs/traces.md (a rank's own bytes sent and received, its own block included). */
#include <otf2/otf2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { S_EMPTY, S_INIT, S_FINALIZE, S_IRECV, S_ISEND, S_WAITALL, S_BCAST, S_ALLREDUCE,
       S_BARRIER, S_SEND, S_RECV, S_TEST, S_WAIT, S_ALLGATHER, S_SCAN, S_EXSCAN, S_REDUCE, S_WORLD, S_SUB, S_MAIN, S_NODE, S_RANK,
       S_MACHINE, S_MEASUREMENT, S_COUNT };
static const char* STRINGS[S_COUNT] = {"", "MPI_Init", "MPI_Finalize", "MPI_Irecv",
    "MPI_Isend", "MPI_Waitall", "MPI_Bcast", "MPI_Allreduce", "MPI_Barrier", "MPI_Send",
    "MPI_Recv", "MPI_Test", "MPI_Wait", "MPI_Allgather", "MPI_Scan", "MPI_Exscan", "MPI_Reduce",
    "MPI_COMM_WORLD", "ranks 1 and 3", "main", "node",
    "rank", "machine", "Process x Threads CPU Locations"};
/* Regions: region id = string id of its name, for the MPI calls S_INIT..S_REDUCE. */

static OTF2_FlushType pre_flush(void* u, OTF2_FileType t, OTF2_LocationRef l, void* c, bool f) {
    (void)u; (void)t; (void)l; (void)c; (void)f;
    return OTF2_FLUSH;
}
static OTF2_TimeStamp post_flush(void* u, OTF2_FileType t, OTF2_LocationRef l) {
    (void)u; (void)t; (void)l;
    return 0;
}
static OTF2_FlushCallbacks flush = {pre_flush, post_flush};

static void check(OTF2_ErrorCode c, const char* what) {
    if (c != OTF2_SUCCESS) {
        fprintf(stderr, "make_traces: %s: %s\n", what, OTF2_Error_GetName(c));
        exit(1);
    }
}

#define IN(t, region) check(OTF2_EvtWriter_Enter(w, NULL, (t), (region)), "enter")
#define OUT(t, region) check(OTF2_EvtWriter_Leave(w, NULL, (t), (region)), "leave")

static void ring(OTF2_EvtWriter* w, int r, int n) {
    IN(0, S_INIT); OUT(1000, S_INIT);
    IN(11000, S_IRECV);
    check(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, 11200, 1), "irecv request");
    OUT(11500, S_IRECV);
    IN(12000, S_ISEND);
    check(OTF2_EvtWriter_MpiIsend(w, NULL, 12200, (r + 1) % n, 0, 7, 1024, 2), "isend");
    OUT(12500, S_ISEND);
    IN(13000, S_WAITALL);
    check(OTF2_EvtWriter_MpiIsendComplete(w, NULL, 14000, 2), "isend complete");
    check(OTF2_EvtWriter_MpiIrecv(w, NULL, 15000, (r + n - 1) % n, 0, 7, 1024, 1), "irecv");
    OUT(16000, S_WAITALL);
    IN(20000, S_FINALIZE); OUT(21000, S_FINALIZE);
}

/* The ring of many rounds (`make_traces DIR ROUNDS`): memory and speed measurements of
 * long traces, not tests (docs/traces.md). */
static uint64_t long_rounds = 0;

static void long_ring(OTF2_EvtWriter* w, int r, int n) {
    IN(0, S_INIT); OUT(1000, S_INIT);
    uint64_t t = 2000;
    for (uint64_t i = 0; i < long_rounds; i++, t += 10000) {
        IN(t, S_IRECV);
        check(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t + 200, 2 * i + 1), "irecv request");
        OUT(t + 500, S_IRECV);
        IN(t + 1000, S_ISEND);
        check(OTF2_EvtWriter_MpiIsend(w, NULL, t + 1200, (r + 1) % n, 0, 7, 1024, 2 * i + 2),
              "isend");
        OUT(t + 1500, S_ISEND);
        IN(t + 2000, S_WAITALL);
        check(OTF2_EvtWriter_MpiIsendComplete(w, NULL, t + 3000, 2 * i + 2), "isend complete");
        check(OTF2_EvtWriter_MpiIrecv(w, NULL, t + 4000, (r + n - 1) % n, 0, 7, 1024, 2 * i + 1),
              "irecv");
        OUT(t + 5000, S_WAITALL);
    }
    IN(t, S_FINALIZE); OUT(t + 1000, S_FINALIZE);
}

/* A collective from t to t + 500 with the bytes Score-P counts for this rank. */
static void coll(OTF2_EvtWriter* w, uint64_t t, int region, OTF2_CollectiveOp op,
                 uint32_t root, uint64_t sent, uint64_t received) {
    IN(t, region);
    check(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t + 100), "begin");
    check(OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, t + 400, op, 0, root, sent, received), "end");
    OUT(t + 500, region);
}

/* Bytes as Score-P counts them (its MPI wrapper, scorep_mpi_coll.inc.c): every block a
 * rank sends or receives, its own included. */
static void collectives(OTF2_EvtWriter* w, int r, int n) {
    uint64_t me = (uint64_t)r, N = (uint64_t)n;
    IN(0, S_INIT); OUT(1000, S_INIT);
    /* Bcast of 256 B from 0: the root sends N blocks (older Score-P: receives none). */
    coll(w, 1000, S_BCAST, OTF2_COLLECTIVE_OP_BCAST, 0, r == 0 ? N * 256 : 0, 256);
    /* Allreduce of 64 B: N blocks each way. */
    coll(w, 1500, S_ALLREDUCE, OTF2_COLLECTIVE_OP_ALLREDUCE, OTF2_COLLECTIVE_ROOT_NONE,
         N * 64, N * 64);
    /* Allgather of 16 B blocks: N blocks each way. */
    coll(w, 2000, S_ALLGATHER, OTF2_COLLECTIVE_OP_ALLGATHER, OTF2_COLLECTIVE_ROOT_NONE,
         N * 16, N * 16);
    /* Scan of 32 B: (N - me) blocks out, me + 1 in. */
    coll(w, 2500, S_SCAN, OTF2_COLLECTIVE_OP_SCAN, OTF2_COLLECTIVE_ROOT_NONE,
         (N - me) * 32, (me + 1) * 32);
    /* Exscan of 8 B: (N - me - 1) blocks out, me in. */
    coll(w, 3000, S_EXSCAN, OTF2_COLLECTIVE_OP_EXSCAN, OTF2_COLLECTIVE_ROOT_NONE,
         (N - me - 1) * 8, me * 8);
    /* Reduce of 128 B to rank 2, in place at the root: it sends nothing, receives N - 1. */
    coll(w, 3500, S_REDUCE, OTF2_COLLECTIVE_OP_REDUCE, 2, r == 2 ? 0 : 128,
         r == 2 ? (N - 1) * 128 : 0);
    if (r == 1 || r == 3) {
        IN(4000, S_BARRIER);
        check(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, 4100), "begin");
        check(OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, 4900, OTF2_COLLECTIVE_OP_BARRIER, 1,
                                              OTF2_COLLECTIVE_ROOT_NONE, 0, 0), "end");
        OUT(5000, S_BARRIER);
        if (r == 1) {
            IN(5000, S_SEND);
            check(OTF2_EvtWriter_MpiSend(w, NULL, 5100, 1, 1, 3, 100), "send");
            OUT(6000, S_SEND);
        } else {
            IN(5000, S_RECV);
            check(OTF2_EvtWriter_MpiRecv(w, NULL, 5900, 0, 1, 3, 100), "recv");
            OUT(6000, S_RECV);
        }
    }
    IN(6000, S_FINALIZE); OUT(7000, S_FINALIZE);
}

static void anysource(OTF2_EvtWriter* w, int r, int n) {
    (void)n;
    IN(0, S_INIT); OUT(1000, S_INIT);
    if (r == 0) {
        IN(1000, S_IRECV);
        check(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, 1100, 5), "irecv request");
        OUT(1200, S_IRECV);
        IN(1200, S_TEST);
        check(OTF2_EvtWriter_MpiRequestTest(w, NULL, 1300, 5), "test");
        OUT(1400, S_TEST);
        IN(1400, S_WAIT);
        check(OTF2_EvtWriter_MpiIrecv(w, NULL, 3000, 1, 0, 9, 4096, 5), "irecv");
        OUT(3100, S_WAIT);
    } else {
        IN(1000, S_SEND);
        check(OTF2_EvtWriter_MpiSend(w, NULL, 1500, 0, 0, 9, 4096), "send");
        OUT(3100, S_SEND);
    }
    IN(3100, S_FINALIZE); OUT(4000, S_FINALIZE);
}

typedef void (*rank_fn)(OTF2_EvtWriter*, int, int);

/* A trace of n ranks (location group r, location r), with MPI_COMM_WORLD (comm 0) and,
 * when sub is set, a communicator (comm 1) of ranks 1 and 3. */
static void write_trace(const char* dir, int n, rank_fn body, int sub, uint64_t length) {
    OTF2_Archive* a = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024,
                                        4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX,
                                        OTF2_COMPRESSION_NONE);
    if (a == NULL) {
        fprintf(stderr, "make_traces: cannot create %s\n", dir);
        exit(1);
    }
    check(OTF2_Archive_SetFlushCallbacks(a, &flush, NULL), "flush callbacks");
    check(OTF2_Archive_SetSerialCollectiveCallbacks(a), "collective callbacks");
    check(OTF2_Archive_SetCreator(a, "acesim tests/data/otf2/make_traces.c"), "creator");
    check(OTF2_Archive_OpenEvtFiles(a), "open event files");
    uint64_t events[16];
    for (int r = 0; r < n; r++) {
        OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, r);
        body(w, r, n);
        check(OTF2_EvtWriter_GetNumberOfEvents(w, &events[r]), "number of events");
        check(OTF2_Archive_CloseEvtWriter(a, w), "close event writer");
    }
    check(OTF2_Archive_CloseEvtFiles(a), "close event files");
    check(OTF2_Archive_OpenDefFiles(a), "open def files");
    for (int r = 0; r < n; r++) {
        OTF2_DefWriter* d = OTF2_Archive_GetDefWriter(a, r);
        check(OTF2_Archive_CloseDefWriter(a, d), "close def writer");
    }
    check(OTF2_Archive_CloseDefFiles(a), "close def files");
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
    check(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, length,
                                                    OTF2_UNDEFINED_TIMESTAMP), "clock");
    for (int s = 0; s < S_COUNT; s++) {
        check(OTF2_GlobalDefWriter_WriteString(g, s, STRINGS[s]), "string");
    }
    for (int s = S_INIT; s <= S_REDUCE; s++) {
        check(OTF2_GlobalDefWriter_WriteRegion(g, s, s, s, S_EMPTY, OTF2_REGION_ROLE_FUNCTION,
                                               OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE,
                                               S_EMPTY, 0, 0), "region");
    }
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, S_NODE, S_MACHINE,
                                                   OTF2_UNDEFINED_SYSTEM_TREE_NODE), "node");
    char name[32];
    for (int r = 0; r < n; r++) {
        check(OTF2_GlobalDefWriter_WriteLocationGroup(g, r, S_RANK, OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                                      0, OTF2_UNDEFINED_LOCATION_GROUP), "group");
        (void)name;
        check(OTF2_GlobalDefWriter_WriteLocation(g, r, S_MAIN, OTF2_LOCATION_TYPE_CPU_THREAD,
                                                 events[r], r), "location");
    }
    uint64_t members[16];
    for (int r = 0; r < n; r++) {
        members[r] = r;
    }
    /* As Score-P does: its measurement system's communicator over every process comes
     * first, before MPI_COMM_WORLD (it carries no MPI message). */
    check(OTF2_GlobalDefWriter_WriteGroup(g, 8, S_MEASUREMENT, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                          OTF2_PARADIGM_MEASUREMENT_SYSTEM, OTF2_GROUP_FLAG_NONE,
                                          n, members), "measurement locations");
    check(OTF2_GlobalDefWriter_WriteGroup(g, 9, S_MEASUREMENT, OTF2_GROUP_TYPE_COMM_GROUP,
                                          OTF2_PARADIGM_MEASUREMENT_SYSTEM, OTF2_GROUP_FLAG_NONE,
                                          n, members), "measurement group");
    check(OTF2_GlobalDefWriter_WriteComm(g, 9, S_MEASUREMENT, 9, OTF2_UNDEFINED_COMM,
                                         OTF2_COMM_FLAG_NONE), "measurement comm");
    check(OTF2_GlobalDefWriter_WriteGroup(g, 0, S_EMPTY, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                          OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, n, members),
          "locations group");
    check(OTF2_GlobalDefWriter_WriteGroup(g, 1, S_EMPTY, OTF2_GROUP_TYPE_COMM_GROUP,
                                          OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, n, members),
          "world group");
    check(OTF2_GlobalDefWriter_WriteComm(g, 0, S_WORLD, 1, OTF2_UNDEFINED_COMM,
                                         OTF2_COMM_FLAG_NONE), "world");
    if (sub) {
        uint64_t odd[2] = {1, 3};
        check(OTF2_GlobalDefWriter_WriteGroup(g, 2, S_EMPTY, OTF2_GROUP_TYPE_COMM_GROUP,
                                              OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 2, odd),
              "sub group");
        check(OTF2_GlobalDefWriter_WriteComm(g, 1, S_SUB, 2, 0, OTF2_COMM_FLAG_NONE), "sub");
    }
    check(OTF2_Archive_CloseGlobalDefWriter(a, g), "close global defs");
    check(OTF2_Archive_Close(a), "close archive");
}

int main(int argc, char** argv) {
    const char* base = argc > 1 ? argv[1] : ".";
    char dir[4096];
    if (argc > 2) {
        long_rounds = strtoull(argv[2], NULL, 10);
        snprintf(dir, sizeof dir, "%s/longring", base);
        write_trace(dir, 4, long_ring, 0, 2000 + long_rounds * 10000 + 1000);
        return 0;
    }
    snprintf(dir, sizeof dir, "%s/ring", base);
    write_trace(dir, 4, ring, 0, 21000);
    snprintf(dir, sizeof dir, "%s/collectives", base);
    write_trace(dir, 4, collectives, 1, 7000);
    snprintf(dir, sizeof dir, "%s/anysource", base);
    write_trace(dir, 2, anysource, 0, 4000);
    return 0;
}
