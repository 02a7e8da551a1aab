/* acesim's bridge to the OTF2 reader library: it opens an archive with OTF2's reader API
 * and hands every global definition and every event of the locations it is asked for to
 * Rust as plain structs (see shim.rs for their Rust side). Nothing here interprets the
 * trace: the conversion is in Rust. Built by build.rs with the `otf2` feature. */

#include <otf2/otf2.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kinds of definitions handed over (acesim_otf2_def.kind). */
enum {
    ACESIM_DEF_STRING = 1,
    ACESIM_DEF_REGION = 2,
    ACESIM_DEF_LOCATION_GROUP = 3,
    ACESIM_DEF_LOCATION = 4,
    ACESIM_DEF_GROUP = 5,
    ACESIM_DEF_COMM = 6,
    ACESIM_DEF_CLOCK = 7
};

/* One global definition. Fields by kind:
 * string:         id, text
 * region:         id, a = name string, b = region role, c = paradigm
 * location group: id, a = name string, b = location group type
 * location:       id, a = name string, b = location type, c = number of events, d = group
 * group:          id, a = name string, b = group type, c = paradigm, members/n_members
 * comm:           id, a = name string, b = group, c = parent comm
 * clock:          a = timer resolution, b = global offset, c = trace length */
typedef struct {
    uint32_t kind;
    uint64_t id;
    uint64_t a, b, c, d;
    const char* text;
    const uint64_t* members;
    uint64_t n_members;
} acesim_otf2_def;

/* Kinds of events handed over (acesim_otf2_event.kind). */
enum {
    ACESIM_EV_ENTER = 1,
    ACESIM_EV_LEAVE = 2,
    ACESIM_EV_SEND = 3,
    ACESIM_EV_ISEND = 4,
    ACESIM_EV_ISEND_COMPLETE = 5,
    ACESIM_EV_IRECV_REQUEST = 6,
    ACESIM_EV_IRECV = 7,
    ACESIM_EV_RECV = 8,
    ACESIM_EV_REQUEST_TEST = 9,
    ACESIM_EV_REQUEST_CANCELLED = 10,
    ACESIM_EV_COLL_BEGIN = 11,
    ACESIM_EV_COLL_END = 12
};

/* One event of a location. Fields by kind:
 * enter/leave:       region
 * send/isend:        peer = receiver, comm, tag, size (+ request for isend)
 * recv/irecv:        peer = sender, comm, tag, size (+ request for irecv)
 * isend complete, irecv request, request test, request cancelled: request
 * collective end:    op = collective op, comm, peer = root, size = sent, size2 = received */
typedef struct {
    uint32_t kind;
    uint64_t location;
    uint64_t time;
    uint64_t position;
    uint32_t region;
    uint32_t peer;
    uint32_t comm;
    uint32_t tag;
    uint32_t op;
    uint64_t size;
    uint64_t size2;
    uint64_t request;
} acesim_otf2_event;

/* Rust's callbacks: 0 to go on, anything else to stop reading. */
typedef int (*acesim_otf2_def_cb)(void* user, const acesim_otf2_def* def);
typedef int (*acesim_otf2_event_cb)(void* user, const acesim_otf2_event* ev);

typedef struct {
    OTF2_Reader* reader;
    char* error;
    size_t error_len;
    void* user;
    acesim_otf2_def_cb def_cb;
    acesim_otf2_event_cb event_cb;
    /* A location opened for reading in windows (acesim_otf2_open_location), and the
     * position of its next event. */
    OTF2_EvtReader* events;
    OTF2_EvtReaderCallbacks* callbacks;
    uint64_t next;
} acesim_otf2;

/* The library's own error messages (it prints them to stderr otherwise): the first one is
 * kept for the caller. Per thread: the partitions of a threaded run read their ranks'
 * windows at the same time. */
static _Thread_local char last_library_error[512];
static pthread_once_t error_callback_once = PTHREAD_ONCE_INIT;

static OTF2_ErrorCode keep_error(void* user, const char* file, uint64_t line, const char* function,
                                 OTF2_ErrorCode code, const char* fmt, va_list va) {
    (void)user;
    (void)file;
    (void)line;
    (void)function;
    if (last_library_error[0] == '\0' && fmt != NULL) {
        vsnprintf(last_library_error, sizeof last_library_error, fmt, va);
    }
    return code;
}

static void set_error(char* buf, size_t len, const char* what, OTF2_ErrorCode code) {
    if (buf == NULL || len == 0) {
        return;
    }
    if (last_library_error[0] != '\0') {
        snprintf(buf, len, "%s: %s (%s)", what, last_library_error, OTF2_Error_GetName(code));
    } else {
        snprintf(buf, len, "%s: %s (%s)", what, OTF2_Error_GetDescription(code),
                 OTF2_Error_GetName(code));
    }
}

static void register_error_callback(void) {
    OTF2_Error_RegisterCallback(keep_error, NULL);
}

acesim_otf2* acesim_otf2_open(const char* anchor, char* err, size_t err_len) {
    last_library_error[0] = '\0';
    pthread_once(&error_callback_once, register_error_callback);
    OTF2_Reader* reader = OTF2_Reader_Open(anchor);
    if (reader == NULL) {
        if (last_library_error[0] != '\0') {
            snprintf(err, err_len, "cannot open the archive: %s", last_library_error);
        } else {
            snprintf(err, err_len, "cannot open the archive");
        }
        return NULL;
    }
    OTF2_ErrorCode code = OTF2_Reader_SetSerialCollectiveCallbacks(reader);
    if (code != OTF2_SUCCESS) {
        set_error(err, err_len, "cannot set up the reader", code);
        OTF2_Reader_Close(reader);
        return NULL;
    }
    acesim_otf2* h = calloc(1, sizeof *h);
    if (h == NULL) {
        snprintf(err, err_len, "out of memory");
        OTF2_Reader_Close(reader);
        return NULL;
    }
    h->reader = reader;
    return h;
}

void acesim_otf2_close(acesim_otf2* h) {
    if (h != NULL) {
        if (h->events != NULL) {
            OTF2_Reader_CloseEvtReader(h->reader, h->events);
            OTF2_Reader_CloseEvtFiles(h->reader);
        }
        if (h->callbacks != NULL) {
            OTF2_EvtReaderCallbacks_Delete(h->callbacks);
        }
        OTF2_Reader_Close(h->reader);
        free(h);
    }
}

/* ---- global definitions ---- */

static OTF2_CallbackCode def_out(acesim_otf2* h, acesim_otf2_def* d) {
    return h->def_cb(h->user, d) == 0 ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}

static OTF2_CallbackCode on_string(void* user, OTF2_StringRef self, const char* string) {
    acesim_otf2_def d = {0};
    d.kind = ACESIM_DEF_STRING;
    d.id = self;
    d.text = string;
    return def_out(user, &d);
}

static OTF2_CallbackCode on_region(void* user, OTF2_RegionRef self, OTF2_StringRef name,
                                   OTF2_StringRef canonical, OTF2_StringRef description,
                                   OTF2_RegionRole role, OTF2_Paradigm paradigm,
                                   OTF2_RegionFlag flags, OTF2_StringRef file, uint32_t begin,
                                   uint32_t end) {
    (void)canonical;
    (void)description;
    (void)flags;
    (void)file;
    (void)begin;
    (void)end;
    acesim_otf2_def d = {0};
    d.kind = ACESIM_DEF_REGION;
    d.id = self;
    d.a = name;
    d.b = role;
    d.c = paradigm;
    return def_out(user, &d);
}

static OTF2_CallbackCode on_location_group(void* user, OTF2_LocationGroupRef self,
                                           OTF2_StringRef name, OTF2_LocationGroupType type,
                                           OTF2_SystemTreeNodeRef parent,
                                           OTF2_LocationGroupRef creator) {
    (void)parent;
    (void)creator;
    acesim_otf2_def d = {0};
    d.kind = ACESIM_DEF_LOCATION_GROUP;
    d.id = self;
    d.a = name;
    d.b = type;
    return def_out(user, &d);
}

static OTF2_CallbackCode on_location(void* user, OTF2_LocationRef self, OTF2_StringRef name,
                                     OTF2_LocationType type, uint64_t events,
                                     OTF2_LocationGroupRef group) {
    acesim_otf2_def d = {0};
    d.kind = ACESIM_DEF_LOCATION;
    d.id = self;
    d.a = name;
    d.b = type;
    d.c = events;
    d.d = group;
    return def_out(user, &d);
}

static OTF2_CallbackCode on_group(void* user, OTF2_GroupRef self, OTF2_StringRef name,
                                  OTF2_GroupType type, OTF2_Paradigm paradigm,
                                  OTF2_GroupFlag flags, uint32_t n, const uint64_t* members) {
    (void)flags;
    acesim_otf2_def d = {0};
    d.kind = ACESIM_DEF_GROUP;
    d.id = self;
    d.a = name;
    d.b = type;
    d.c = paradigm;
    d.members = members;
    d.n_members = n;
    return def_out(user, &d);
}

static OTF2_CallbackCode on_comm(void* user, OTF2_CommRef self, OTF2_StringRef name,
                                 OTF2_GroupRef group, OTF2_CommRef parent, OTF2_CommFlag flags) {
    (void)flags;
    acesim_otf2_def d = {0};
    d.kind = ACESIM_DEF_COMM;
    d.id = self;
    d.a = name;
    d.b = group;
    d.c = parent;
    return def_out(user, &d);
}

static OTF2_CallbackCode on_clock(void* user, uint64_t resolution, uint64_t offset,
                                  uint64_t length, uint64_t realtime) {
    (void)realtime;
    acesim_otf2_def d = {0};
    d.kind = ACESIM_DEF_CLOCK;
    d.a = resolution;
    d.b = offset;
    d.c = length;
    return def_out(user, &d);
}

/* Reads every global definition; returns 0, 1 when a callback stopped it, -1 on a library
 * error (described in err). */
int acesim_otf2_read_defs(acesim_otf2* h, acesim_otf2_def_cb cb, void* user, char* err,
                          size_t err_len) {
    h->def_cb = cb;
    h->user = user;
    OTF2_GlobalDefReader* defs = OTF2_Reader_GetGlobalDefReader(h->reader);
    if (defs == NULL) {
        snprintf(err, err_len, "the archive has no global definitions%s%s",
                 last_library_error[0] ? ": " : "", last_library_error);
        return -1;
    }
    OTF2_GlobalDefReaderCallbacks* cbs = OTF2_GlobalDefReaderCallbacks_New();
    if (cbs == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(cbs, on_string);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cbs, on_region);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cbs, on_location_group);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cbs, on_location);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cbs, on_group);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(cbs, on_comm);
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cbs, on_clock);
    OTF2_ErrorCode code = OTF2_Reader_RegisterGlobalDefCallbacks(h->reader, defs, cbs, h);
    OTF2_GlobalDefReaderCallbacks_Delete(cbs);
    if (code != OTF2_SUCCESS) {
        set_error(err, err_len, "cannot register the definition callbacks", code);
        return -1;
    }
    uint64_t read = 0;
    code = OTF2_Reader_ReadAllGlobalDefinitions(h->reader, defs, &read);
    OTF2_Reader_CloseGlobalDefReader(h->reader, defs);
    if (code == OTF2_ERROR_INTERRUPTED_BY_CALLBACK) {
        return 1;
    }
    if (code != OTF2_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "global definition %llu cannot be read",
                 (unsigned long long)read + 1);
        set_error(err, err_len, what, code);
        return -1;
    }
    return 0;
}

/* ---- events ---- */

static OTF2_CallbackCode ev_out(void* user, acesim_otf2_event* e, uint32_t kind,
                                OTF2_LocationRef location, OTF2_TimeStamp time,
                                uint64_t position) {
    acesim_otf2* h = user;
    e->kind = kind;
    e->location = location;
    e->time = time;
    e->position = position;
    return h->event_cb(h->user, e) == 0 ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}

#define EV_HEAD                                                                             \
    OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t position, void* user,         \
        OTF2_AttributeList* attributes
#define EV_UNUSED (void)attributes

static OTF2_CallbackCode ev_enter(EV_HEAD, OTF2_RegionRef region) {
    EV_UNUSED;
    acesim_otf2_event e = {0};
    e.region = region;
    return ev_out(user, &e, ACESIM_EV_ENTER, location, time, position);
}

static OTF2_CallbackCode ev_leave(EV_HEAD, OTF2_RegionRef region) {
    EV_UNUSED;
    acesim_otf2_event e = {0};
    e.region = region;
    return ev_out(user, &e, ACESIM_EV_LEAVE, location, time, position);
}

static OTF2_CallbackCode ev_send(EV_HEAD, uint32_t receiver, OTF2_CommRef comm, uint32_t tag,
                                 uint64_t length) {
    EV_UNUSED;
    acesim_otf2_event e = {0};
    e.peer = receiver;
    e.comm = comm;
    e.tag = tag;
    e.size = length;
    return ev_out(user, &e, ACESIM_EV_SEND, location, time, position);
}

static OTF2_CallbackCode ev_isend(EV_HEAD, uint32_t receiver, OTF2_CommRef comm, uint32_t tag,
                                  uint64_t length, uint64_t request) {
    EV_UNUSED;
    acesim_otf2_event e = {0};
    e.peer = receiver;
    e.comm = comm;
    e.tag = tag;
    e.size = length;
    e.request = request;
    return ev_out(user, &e, ACESIM_EV_ISEND, location, time, position);
}

static OTF2_CallbackCode ev_recv(EV_HEAD, uint32_t sender, OTF2_CommRef comm, uint32_t tag,
                                 uint64_t length) {
    EV_UNUSED;
    acesim_otf2_event e = {0};
    e.peer = sender;
    e.comm = comm;
    e.tag = tag;
    e.size = length;
    return ev_out(user, &e, ACESIM_EV_RECV, location, time, position);
}

static OTF2_CallbackCode ev_irecv(EV_HEAD, uint32_t sender, OTF2_CommRef comm, uint32_t tag,
                                  uint64_t length, uint64_t request) {
    EV_UNUSED;
    acesim_otf2_event e = {0};
    e.peer = sender;
    e.comm = comm;
    e.tag = tag;
    e.size = length;
    e.request = request;
    return ev_out(user, &e, ACESIM_EV_IRECV, location, time, position);
}

#define REQUEST_EVENT(fn, kind)                                                             \
    static OTF2_CallbackCode fn(EV_HEAD, uint64_t request) {                                \
        EV_UNUSED;                                                                          \
        acesim_otf2_event e = {0};                                                          \
        e.request = request;                                                                \
        return ev_out(user, &e, kind, location, time, position);                            \
    }
REQUEST_EVENT(ev_isend_complete, ACESIM_EV_ISEND_COMPLETE)
REQUEST_EVENT(ev_irecv_request, ACESIM_EV_IRECV_REQUEST)
REQUEST_EVENT(ev_request_test, ACESIM_EV_REQUEST_TEST)
REQUEST_EVENT(ev_request_cancelled, ACESIM_EV_REQUEST_CANCELLED)

static OTF2_CallbackCode ev_coll_begin(EV_HEAD) {
    EV_UNUSED;
    acesim_otf2_event e = {0};
    return ev_out(user, &e, ACESIM_EV_COLL_BEGIN, location, time, position);
}

static OTF2_CallbackCode ev_coll_end(EV_HEAD, OTF2_CollectiveOp op, OTF2_CommRef comm,
                                     uint32_t root, uint64_t sent, uint64_t received) {
    EV_UNUSED;
    acesim_otf2_event e = {0};
    e.op = op;
    e.comm = comm;
    e.peer = root;
    e.size = sent;
    e.size2 = received;
    return ev_out(user, &e, ACESIM_EV_COLL_END, location, time, position);
}

/* Reads the local definitions of the selected `locations` (their mappings of local ids to
 * global ones, which the reader then applies to their events) and opens their event files.
 * Returns 0, or -1 with err and *bad_location set. */
static int open_locations(acesim_otf2* h, const uint64_t* locations, size_t n, char* err,
                          size_t err_len, uint64_t* bad_location) {
    OTF2_ErrorCode code;
    for (size_t i = 0; i < n; i++) {
        code = OTF2_Reader_SelectLocation(h->reader, locations[i]);
        if (code != OTF2_SUCCESS) {
            *bad_location = locations[i];
            set_error(err, err_len, "cannot select the location", code);
            return -1;
        }
    }
    int have_defs = OTF2_Reader_OpenDefFiles(h->reader) == OTF2_SUCCESS;
    code = OTF2_Reader_OpenEvtFiles(h->reader);
    if (code != OTF2_SUCCESS) {
        set_error(err, err_len, "cannot open the event files", code);
        return -1;
    }
    for (size_t i = 0; i < n && have_defs; i++) {
        OTF2_DefReader* defs = OTF2_Reader_GetDefReader(h->reader, locations[i]);
        if (defs != NULL) {
            uint64_t read = 0;
            code = OTF2_Reader_ReadAllLocalDefinitions(h->reader, defs, &read);
            OTF2_Reader_CloseDefReader(h->reader, defs);
            if (code != OTF2_SUCCESS) {
                *bad_location = locations[i];
                set_error(err, err_len, "the location's local definitions cannot be read",
                          code);
                OTF2_Reader_CloseDefFiles(h->reader);
                return -1;
            }
        }
    }
    if (have_defs) {
        OTF2_Reader_CloseDefFiles(h->reader);
    }
    return 0;
}

static OTF2_EvtReaderCallbacks* event_callbacks(void) {
    OTF2_EvtReaderCallbacks* cbs = OTF2_EvtReaderCallbacks_New();
    if (cbs == NULL) {
        return NULL;
    }
    OTF2_EvtReaderCallbacks_SetEnterCallback(cbs, ev_enter);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(cbs, ev_leave);
    OTF2_EvtReaderCallbacks_SetMpiSendCallback(cbs, ev_send);
    OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cbs, ev_isend);
    OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cbs, ev_isend_complete);
    OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cbs, ev_irecv_request);
    OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cbs, ev_irecv);
    OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cbs, ev_recv);
    OTF2_EvtReaderCallbacks_SetMpiRequestTestCallback(cbs, ev_request_test);
    OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(cbs, ev_request_cancelled);
    OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(cbs, ev_coll_begin);
    OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cbs, ev_coll_end);
    return cbs;
}

/* Reads every event of `location`, which holds `count` events by the definitions (0: not
 * said). Returns 0, 1 when a callback stopped it, -1 on a library error or a count that
 * differs (described in err; *bad_event says where). The count is checked because the
 * library reads the bytes missing from a truncated event file out of its buffer, which holds
 * zeros or another file's bytes: the reading may then end cleanly, too early or too late. */
static int read_location(acesim_otf2* h, OTF2_EvtReaderCallbacks* cbs, uint64_t location,
                         uint64_t count, char* err, size_t err_len, uint64_t* bad_event) {
    OTF2_EvtReader* events = OTF2_Reader_GetEvtReader(h->reader, location);
    if (events == NULL) {
        snprintf(err, err_len, "the location has no event reader%s%s",
                 last_library_error[0] ? ": " : "", last_library_error);
        return -1;
    }
    OTF2_ErrorCode code = OTF2_Reader_RegisterEvtCallbacks(h->reader, events, cbs, h);
    uint64_t read = 0;
    if (code == OTF2_SUCCESS) {
        code = OTF2_Reader_ReadAllLocalEvents(h->reader, events, &read);
    }
    int result = 0;
    if (code == OTF2_ERROR_INTERRUPTED_BY_CALLBACK) {
        result = 1;
    } else if (code != OTF2_SUCCESS) {
        *bad_event = read + 1;
        set_error(err, err_len, "the events cannot be read", code);
        result = -1;
    } else if (count > 0 && read != count) {
        snprintf(err, err_len,
                 read < count ? "its event file ends after %llu of the %llu events the "
                                "definitions give it (cut short?)"
                              : "its event file holds %llu events, more than the %llu the "
                                "definitions give it (overwritten?)",
                 (unsigned long long)read, (unsigned long long)count);
        result = -1;
    }
    OTF2_Reader_CloseEvtReader(h->reader, events);
    return result;
}

/* Reads the events of `locations`, one location after the other, in the order given (each
 * location's events in time order; counts[i] events in locations[i], 0 if not known).
 * Returns 0, 1 when a callback stopped it, -1 on a library error (described in err;
 * *bad_location and *bad_event say where). */
int acesim_otf2_read_events(acesim_otf2* h, const uint64_t* locations, const uint64_t* counts,
                            size_t n, acesim_otf2_event_cb cb, void* user, char* err,
                            size_t err_len, uint64_t* bad_location, uint64_t* bad_event) {
    h->event_cb = cb;
    h->user = user;
    *bad_location = OTF2_UNDEFINED_LOCATION;
    *bad_event = 0;
    if (open_locations(h, locations, n, err, err_len, bad_location) != 0) {
        return -1;
    }
    OTF2_EvtReaderCallbacks* cbs = event_callbacks();
    if (cbs == NULL) {
        snprintf(err, err_len, "out of memory");
        OTF2_Reader_CloseEvtFiles(h->reader);
        return -1;
    }
    int result = 0;
    for (size_t i = 0; i < n && result == 0; i++) {
        result = read_location(h, cbs, locations[i], counts[i], err, err_len, bad_event);
        if (result == -1) {
            *bad_location = locations[i];
        }
    }
    OTF2_EvtReaderCallbacks_Delete(cbs);
    OTF2_Reader_CloseEvtFiles(h->reader);
    return result;
}

/* Opens the events of `location` on an archive opened for it alone, to be read in windows
 * from its event `first` (1 for the first). Returns 0, or -1 with err set. */
int acesim_otf2_open_location(acesim_otf2* h, uint64_t location, uint64_t first, char* err,
                              size_t err_len) {
    uint64_t bad_location = 0;
    if (open_locations(h, &location, 1, err, err_len, &bad_location) != 0) {
        return -1;
    }
    h->callbacks = event_callbacks();
    h->events = OTF2_Reader_GetEvtReader(h->reader, location);
    if (h->callbacks == NULL || h->events == NULL) {
        snprintf(err, err_len, "cannot read the location's events%s%s",
                 last_library_error[0] ? ": " : "", last_library_error);
        return -1;
    }
    OTF2_ErrorCode code = OTF2_Reader_RegisterEvtCallbacks(h->reader, h->events, h->callbacks, h);
    if (code == OTF2_SUCCESS && first > 1) {
        code = OTF2_EvtReader_Seek(h->events, first);
    }
    if (code != OTF2_SUCCESS) {
        set_error(err, err_len, "cannot reach the event to read", code);
        return -1;
    }
    h->next = first;
    return 0;
}

/* Reads up to `count` more events of the location opened by acesim_otf2_open_location, the
 * number read in *read. Returns as acesim_otf2_read_events. */
int acesim_otf2_read_more(acesim_otf2* h, uint64_t count, acesim_otf2_event_cb cb, void* user,
                          uint64_t* read, char* err, size_t err_len, uint64_t* bad_event) {
    h->event_cb = cb;
    h->user = user;
    *read = 0;
    *bad_event = 0;
    if (h->events == NULL) {
        snprintf(err, err_len, "no location is open");
        return -1;
    }
    OTF2_ErrorCode code = OTF2_Reader_ReadLocalEvents(h->reader, h->events, count, read);
    h->next += *read;
    if (code == OTF2_ERROR_INTERRUPTED_BY_CALLBACK) {
        return 1;
    }
    if (code != OTF2_SUCCESS) {
        *bad_event = h->next;
        set_error(err, err_len, "the events cannot be read", code);
        return -1;
    }
    return 0;
}
