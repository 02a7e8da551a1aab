//! Programs: per-rank operation lists, whatever front end produced them.

use crate::error::{Error, Location};
use crate::program::collectives::{CollKind, CollSpec};
use crate::units::Ps;
use std::sync::Arc;

/// No handle, no explicit NIC, not matched yet.
pub use crate::ids::NONE;

/// Wildcard source or tag of a receive.
pub const ANY: i64 = -1;

/// A receive's source as an operation holds it: a rank, or `ANY_SOURCE` for any (4 bytes
/// where an `i64` takes 8: an operation is then 40 bytes, not 48, and a million-rank
/// program holds twenty million of them).
pub const ANY_SOURCE: u32 = u32::MAX;

/// The source `src` (a rank, or `ANY`) as an operation holds it.
pub fn source(src: i64) -> u32 {
    if src == ANY {
        ANY_SOURCE
    } else {
        src as u32
    }
}

/// An operation's source `src` as a rank, or `ANY`.
pub fn source_rank(src: u32) -> i64 {
    if src == ANY_SOURCE {
        ANY
    } else {
        i64::from(src)
    }
}

/// `CommSplit` color that leaves the rank out of every new communicator.
pub const UNDEFINED: i64 = i64::MIN;

/// Where an operation came from in the user's source (schedule line or C line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct SrcLoc {
    /// Index into `Program::files`.
    pub file: u32,
    pub line: u32,
}

impl SrcLoc {
    /// The place in the file table `files` that this indexes; `line N` alone when the table
    /// has no such file.
    pub fn location(self, files: &[String]) -> Location {
        match files.get(self.file as usize) {
            Some(f) => Location {
                file: f.clone(),
                line: Some(self.line as usize),
                ..Default::default()
            },
            None => Location::file(format!("line {}", self.line)),
        }
    }
}

/// One operation of a rank. Ranks in point-to-point operations are communicator ranks
/// until `program::link` has run, world ranks after; `comm` is a rank-local handle before
/// linking and a message context after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum OpKind {
    /// Compute for a time (`MGEN_Comp`).
    Compute {
        ps: Ps,
    },
    /// RDMA put to `dst`, non-blocking. `handle` indexes the rank's request table.
    Put {
        dst: u32,
        size: u64,
        tag: i64,
        handle: u32,
        nic: u32,
    },
    /// RDMA get from `src`, non-blocking.
    Get {
        src: u32,
        size: u64,
        handle: u32,
        nic: u32,
    },
    /// Block until a put with `tag` has landed here.
    Poll {
        tag: i64,
    },
    /// Block until the put/get of `handle` has completed.
    Complete {
        handle: u32,
    },
    RegionBegin {
        region: u32,
    },
    RegionEnd {
        region: u32,
    },
    /// Blocking send: returns when the data has left this rank's memory.
    Send {
        dst: u32,
        size: u64,
        tag: i64,
        comm: u32,
    },
    /// Blocking receive: returns the receive overhead after a matching message is in memory.
    /// `src` may be `ANY_SOURCE`, `tag` `ANY`.
    Recv {
        src: u32,
        size: u64,
        tag: i64,
        comm: u32,
    },
    /// Non-blocking send; `req` indexes the rank's request table.
    Isend {
        dst: u32,
        size: u64,
        tag: i64,
        comm: u32,
        req: u32,
    },
    /// Non-blocking receive.
    Irecv {
        src: u32,
        size: u64,
        tag: i64,
        comm: u32,
        req: u32,
    },
    /// Block until a request (isend, irecv, put or get) has completed.
    Wait {
        req: u32,
    },
    /// Block until all / any of the `count` requests at `Program::req_lists[list..]`.
    WaitAll {
        list: u32,
        count: u32,
    },
    WaitAny {
        list: u32,
        count: u32,
    },
    /// Non-blocking probe of a request.
    Test {
        req: u32,
    },
    /// A collective call (`Program::coll_calls[call]`), before linking expands it.
    Coll {
        call: u32,
    },
    /// A linked collective call (`Program::collectives[id]`), made by this rank as its call
    /// `Program::coll_calls[call]` (`NONE`: a communicator creation), where it is rank `me`
    /// of the communicator. The runtime generates its steps as the rank reaches them.
    Collective {
        id: u32,
        call: u32,
        me: u32,
    },
    /// Communicator creation (collective over `parent`); `result` is a rank-local handle.
    CommSplit {
        parent: u32,
        color: i64,
        key: i64,
        result: u32,
    },
    CommDup {
        parent: u32,
        result: u32,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Op {
    pub kind: OpKind,
    pub loc: SrcLoc,
}

/// What the four message operations (send, recv, isend, irecv) have in common, so that
/// code which treats them alike reads them in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message {
    /// A send (else a receive).
    pub send: bool,
    /// A send's destination or a receive's source (which may be `ANY`).
    pub peer: i64,
    pub size: u64,
    pub tag: i64,
    pub comm: u32,
    /// The request of a non-blocking operation.
    pub req: Option<u32>,
}

impl OpKind {
    /// The message of a send or receive, blocking or not.
    pub fn message(self) -> Option<Message> {
        let (send, peer, size, tag, comm, req) = match self {
            OpKind::Send {
                dst,
                size,
                tag,
                comm,
            } => (true, i64::from(dst), size, tag, comm, None),
            OpKind::Isend {
                dst,
                size,
                tag,
                comm,
                req,
            } => (true, i64::from(dst), size, tag, comm, Some(req)),
            OpKind::Recv {
                src,
                size,
                tag,
                comm,
            } => (false, source_rank(src), size, tag, comm, None),
            OpKind::Irecv {
                src,
                size,
                tag,
                comm,
                req,
            } => (false, source_rank(src), size, tag, comm, Some(req)),
            _ => return None,
        };
        Some(Message {
            send,
            peer,
            size,
            tag,
            comm,
            req,
        })
    }
}

impl Message {
    /// The operation that carries this message (a send's peer is a rank, not `ANY`).
    pub fn op(self) -> OpKind {
        let Message {
            peer,
            size,
            tag,
            comm,
            ..
        } = self;
        match (self.send, self.req) {
            (true, None) => OpKind::Send {
                dst: peer as u32,
                size,
                tag,
                comm,
            },
            (true, Some(req)) => OpKind::Isend {
                dst: peer as u32,
                size,
                tag,
                comm,
                req,
            },
            (false, None) => OpKind::Recv {
                src: source(peer),
                size,
                tag,
                comm,
            },
            (false, Some(req)) => OpKind::Irecv {
                src: source(peer),
                size,
                tag,
                comm,
                req,
            },
        }
    }

    /// `send`, `recv`, `isend` or `irecv`.
    pub fn name(self) -> &'static str {
        match (self.send, self.req.is_some()) {
            (true, false) => "send",
            (true, true) => "isend",
            (false, false) => "recv",
            (false, true) => "irecv",
        }
    }

    /// The peer as programs write it (a receive's wildcard as `any`).
    pub fn peer_text(self) -> String {
        any_text(self.peer)
    }

    /// The tag as programs write it (a receive's wildcard as `any`).
    pub fn tag_text(self) -> String {
        if self.send {
            self.tag.to_string()
        } else {
            any_text(self.tag)
        }
    }
}

/// A source or tag as programs write it: `any` for the wildcard.
fn any_text(v: i64) -> String {
    if v == ANY {
        "any".to_string()
    } else {
        v.to_string()
    }
}

/// A list of operations for each operation, all in one array (operation i's list is
/// `to[at[i]..at[i + 1]]`): a million-operation program would otherwise hold a million
/// lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Adjacency {
    at: Vec<u32>,
    to: Vec<u32>,
}

impl Adjacency {
    /// The lists of `n` operations from (operation, listed operation) pairs; each list
    /// keeps the order of its pairs.
    pub fn from_pairs(n: usize, pairs: &[(u32, u32)]) -> Adjacency {
        let mut at = vec![0u32; n + 1];
        for &(from, _) in pairs {
            at[from as usize + 1] += 1;
        }
        for i in 0..n {
            at[i + 1] += at[i];
        }
        let mut next = at.clone();
        let mut to = vec![0; pairs.len()];
        for &(from, op) in pairs {
            to[next[from as usize] as usize] = op;
            next[from as usize] += 1;
        }
        Adjacency { at, to }
    }

    /// Operation `i`'s list.
    pub fn of(&self, i: usize) -> &[u32] {
        match (self.at.get(i), self.at.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.to[a as usize..b as usize],
            _ => &[],
        }
    }

    /// Operations with a list (empty or not).
    pub fn len(&self) -> usize {
        self.at.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every operation's list, in operation order.
    pub fn lists(&self) -> impl Iterator<Item = &[u32]> + '_ {
        (0..self.len()).map(|i| self.of(i))
    }
}

/// Dependencies of one rank's operations in a dependency-graph program (GOAL): an operation
/// is ready when every operation it `requires` has completed and every operation it
/// `irequires` has started.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RankDeps {
    /// Per operation: how many operations it requires / irequires.
    pub requires: Vec<u32>,
    pub irequires: Vec<u32>,
    /// Operations released when operation i completes / starts.
    pub after_complete: Adjacency,
    pub after_start: Adjacency,
    /// Labels of the operations, for reports (held in place: labels are short).
    pub labels: Vec<compact_str::CompactString>,
    /// Per operation: the rank's CPU that runs it (empty: every operation on CPU 0).
    pub cpu: Vec<u32>,
    /// Per operation: the node's NIC a send uses, or `NONE` (empty: none given).
    pub nic: Vec<u32>,
}

impl RankDeps {
    /// CPU of operation `op`.
    pub fn cpu_of(&self, op: u32) -> u32 {
        self.cpu.get(op as usize).copied().unwrap_or(0)
    }

    /// NIC operation `op` asks for, or `NONE`.
    pub fn nic_of(&self, op: u32) -> u32 {
        self.nic.get(op as usize).copied().unwrap_or(NONE)
    }

    /// CPUs the rank uses (1 + the highest `cpu` named).
    pub fn cpus(&self) -> u32 {
        self.cpu.iter().max().map_or(1, |&c| c + 1)
    }
}

/// A collective call as a rank wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CollCall {
    /// `barrier`, `bcast`, ... (or `comm_split`/`comm_dup`, charged as collectives).
    pub kind: String,
    /// Algorithm name, or empty for the machine's default.
    pub algorithm: String,
    /// `msg`/`rdma` for barriers, or empty for the machine's default.
    pub transport: String,
    pub size: u64,
    /// Root (communicator rank).
    pub root: u32,
    /// Segment size of pipelined algorithms, 0 for the machine's default.
    pub segment: u64,
    /// Rank-local communicator handle.
    pub comm: u32,
    /// Bytes per rank of the v-variants as this rank knows them (see
    /// [`collectives::expand_with`](crate::program::collectives::expand_with)); empty for the
    /// others. They and `size` may differ between the ranks of one call.
    pub sizes: Vec<u64>,
}

impl CollCall {
    /// Whether the call names a root (`bcast`, `reduce`, `gather`, `scatter`).
    pub fn is_rooted(&self) -> bool {
        CollKind::ALL
            .iter()
            .any(|k| k.is_rooted() && k.name() == self.kind)
    }
}

/// A collective call once its communicator is known (one per call, shared by its ranks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collective {
    pub kind: String,
    pub algorithm: String,
    pub comm: u32,
    pub size: u64,
    pub root: u32,
    /// Sequence number of the call on its communicator.
    pub seq: u32,
}

/// A communicator: its ranks (world ranks, in communicator order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Communicator {
    pub name: String,
    pub members: Vec<u32>,
}

/// A program for every rank, ready to run.
#[derive(Debug, Clone, Default)]
pub struct Program {
    pub ranks: u32,
    pub ops: Vec<Vec<Op>>,
    /// Number of requests/handles each rank uses.
    pub handles: Vec<u32>,
    /// Region names by id.
    pub regions: Vec<String>,
    /// Source file names by id (for locations).
    pub files: Vec<String>,
    /// Present for dependency-graph programs (GOAL); absent for sequential programs, where
    /// each operation starts when the one before it has returned.
    pub deps: Option<Vec<RankDeps>>,
    /// Request lists of `WaitAll`/`WaitAny`.
    pub req_lists: Vec<u32>,
    /// Collective calls as written (before linking).
    pub coll_calls: Vec<CollCall>,
    /// Rank-local communicator handles per rank (handle 0 is the world).
    pub comm_handles: Vec<u32>,
    /// After linking: the communicators (0 is the world) and the collective calls.
    pub comms: Vec<Communicator>,
    pub collectives: Vec<Collective>,
    /// After linking: each collective's spec and resolved algorithm, from which the
    /// runtime generates each member's steps.
    pub coll_specs: Vec<(CollSpec, &'static str)>,
    /// True once communicators and collectives are resolved (see `program::link`).
    pub linked: bool,
    /// For a replayed trace: each rank's traced window (its first call's entry to its last
    /// call's return, in ps), reported next to the predicted time.
    pub traced_windows: Option<Vec<Ps>>,
    /// When the program is a job repeated side by side (`program::adjust::repeat_jobs`):
    /// the ranks of one job, each job's world communicator (handle 0) holding its own.
    pub job_ranks: Option<u32>,
    /// For a program read as the run goes (a trace): where its operations come from;
    /// `ops` then holds its skeleton (`program::stream`).
    pub stream: Option<Streamed>,
    /// For a trace read as the run goes: its collective calls, once per distinct call
    /// (`ops` then holds only its communicator creations).
    pub call_seqs: Option<crate::program::call_seqs::CallSeqs<CollCall>>,
    /// Only some ranks' operations were read (a process's own, `RecordOptions::only_ranks`):
    /// the other ranks' lists hold only what ties ranks together (collective calls,
    /// communicators, regions, operations with a source location), so that the rest of
    /// the program is numbered as in a whole reading.
    pub partial: bool,
}

// A program read as the run goes (`program::stream` runs it).

/// One rank's operations, read as the run goes.
pub trait RankStream: Send {
    /// Replaces `ops` and `lists` by the rank's next operations and the request lists they
    /// index; false once the rank has none left.
    fn next_ops(&mut self, ops: &mut Vec<Op>, lists: &mut Vec<u32>) -> crate::error::Result<bool>;
}

/// Opens the streams of a program's ranks when a run starts (a program is run more than
/// once by `compare-models`).
pub trait StreamSource: Send + Sync {
    /// The stream of rank `rank` of the program as read (of one job, when repeated).
    fn open(&self, rank: u32) -> crate::error::Result<Box<dyn RankStream>>;

    /// The program as schedule text (`prog` is its skeleton), where it has one: a
    /// schedule with `repeat` blocks is written back with them. `None`: it has none.
    fn write_schedule(&self, _prog: &Program) -> Option<std::result::Result<String, String>> {
        None
    }
}

/// What a streamed program carries besides its skeleton (`Program::ops` until the run).
#[derive(Clone)]
pub struct Streamed {
    pub(crate) source: Arc<dyn StreamSource>,
    /// Messages capped at this size (`adjust::cap_messages`).
    pub(crate) cap: Option<u64>,
}

impl std::fmt::Debug for Streamed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Streamed").field("cap", &self.cap).finish()
    }
}

impl Streamed {
    pub fn new(source: Arc<dyn StreamSource>) -> Streamed {
        Streamed { source, cap: None }
    }
}

/// The index of `name` in `table`, added at the end if it is new.
pub(crate) fn intern(table: &mut Vec<String>, name: &str) -> u32 {
    if let Some(i) = table.iter().position(|r| r == name) {
        return i as u32;
    }
    table.push(name.to_string());
    (table.len() - 1) as u32
}

/// Reads a program's text; a file that is not UTF-8 text is reported at the line and
/// column of its first bad byte.
pub fn read_text(path: &std::path::Path) -> crate::error::Result<String> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| Error::io(&name, e))?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(e) => Err(not_utf8(&name, e.as_bytes(), e.utf8_error())),
    }
}

/// Calls `f` with the text of `path`, mapped into memory rather than read: a schedule of
/// hundreds of megabytes is then read where it lies in the page cache, with no copy and no
/// fresh pages (each one a page fault, microseconds on a virtual machine). What cannot be
/// mapped (a pipe) is read. A file that is not UTF-8 text is reported as `read_text` does.
pub fn with_text<T>(
    path: &std::path::Path,
    f: impl FnOnce(&str) -> crate::error::Result<T>,
) -> crate::error::Result<T> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| Error::io(&name, e))?;
    // SAFETY: the map is read-only and lives only while `f` reads it. Another process
    // truncating the file meanwhile would end the run with SIGBUS instead of an error;
    // one rewriting it would change the text read, as it would a read in pieces.
    let Ok(map) = (unsafe { memmap2::Mmap::map(&file) }) else {
        return f(&read_text(path)?);
    };
    match std::str::from_utf8(&map) {
        Ok(text) => f(text),
        Err(e) => Err(not_utf8(&name, &map, e)),
    }
}

/// The error for file `name` whose `bytes` are not UTF-8 (`e`): at the first bad byte.
fn not_utf8(name: &str, bytes: &[u8], e: std::str::Utf8Error) -> Error {
    use crate::error::line_col;
    let good = e.valid_up_to();
    let text = String::from_utf8_lossy(&bytes[..good]);
    let (line, col) = line_col(&text, good);
    Error::input(
        Location::at(name.to_string(), line, col),
        "not UTF-8 text: expected a text file (a schedule, GOAL file or program)",
    )
}

impl Program {
    pub fn new(ranks: u32) -> Program {
        Program {
            ranks,
            ops: vec![Vec::new(); ranks as usize],
            handles: vec![0; ranks as usize],
            comm_handles: vec![1; ranks as usize],
            ..Default::default()
        }
    }

    pub fn region_id(&mut self, name: &str) -> u32 {
        intern(&mut self.regions, name)
    }

    pub fn file_id(&mut self, name: &str) -> u32 {
        intern(&mut self.files, name)
    }

    /// A new request slot of `rank`.
    pub fn new_handle(&mut self, rank: u32) -> u32 {
        let h = self.handles[rank as usize];
        self.handles[rank as usize] += 1;
        h
    }

    /// Stores a request list and returns its start.
    pub fn req_list(&mut self, reqs: &[u32]) -> u32 {
        let start = self.req_lists.len() as u32;
        self.req_lists.extend_from_slice(reqs);
        start
    }

    /// Where an operation came from.
    pub fn location(&self, loc: SrcLoc) -> Location {
        loc.location(&self.files)
    }

    /// `file:line` of an operation.
    pub fn describe_loc(&self, loc: SrcLoc) -> String {
        self.location(loc).to_string()
    }

    /// An input error about operation field `field`, at the operation's source line.
    pub fn error_at(&self, loc: SrcLoc, field: &str, message: impl Into<String>) -> Error {
        Error::input(self.location(loc).with_field(field), message)
    }

    pub fn total_ops(&self) -> usize {
        self.ops.iter().map(|o| o.len()).sum()
    }

    /// The operation as text (for reports).
    pub fn describe_op(&self, op: &Op) -> String {
        match op.kind {
            OpKind::Compute { ps } => format!("compute {ps}ps"),
            OpKind::Put { dst, size, tag, .. } => format!("put {dst} {size} tag={tag}"),
            OpKind::Get { src, size, .. } => format!("get {src} {size}"),
            OpKind::Poll { tag } => format!("poll {tag}"),
            OpKind::Complete { handle } => format!("complete (handle #{})", handle + 1),
            OpKind::RegionBegin { region } => {
                format!("region_begin {}", self.regions[region as usize])
            }
            OpKind::RegionEnd { region } => format!("region_end {}", self.regions[region as usize]),
            OpKind::Send { .. }
            | OpKind::Recv { .. }
            | OpKind::Isend { .. }
            | OpKind::Irecv { .. } => {
                let m = op.kind.message().expect("a message operation");
                let (name, peer, size, tag) = (m.name(), m.peer_text(), m.size, m.tag_text());
                format!("{name} {peer} {size} tag={tag}")
            }
            OpKind::Wait { req } => format!("wait (request #{})", req + 1),
            OpKind::WaitAll { count, .. } => format!("waitall ({count} requests)"),
            OpKind::WaitAny { count, .. } => format!("waitany ({count} requests)"),
            OpKind::Test { req } => format!("test (request #{})", req + 1),
            OpKind::Coll { call } => {
                let c = &self.coll_calls[call as usize];
                format!("{} {}", c.kind, c.size)
            }
            OpKind::Collective { id, .. } => {
                let c = &self.collectives[id as usize];
                format!("{} {} ({})", c.kind, c.size, c.algorithm)
            }
            OpKind::CommSplit { color, key, .. } => format!("comm_split {color} {key}"),
            OpKind::CommDup { .. } => "comm_dup".to_string(),
        }
    }
}
