//! OTF2 events turned into operations: messages and requests from the MPI events,
//! collectives from their end events, compute from the gaps between MPI regions. The
//! operations go to a `Sink`: the whole program (`read`), its skeleton, or one rank's window
//! as the run reaches it (`stream`).
//!
//! A receive's source, tag and size are known only when it completes, and a request can be
//! cancelled: an operation is held until every request started at or before it has
//! completed or been cancelled, so that what reaches the sink is final.

use super::defs::{Comm, CommKind, Defs, Layout, PARADIGM_MPI};
use super::shim::{self, Archive, Event, LibraryError};
use crate::error::{Error, Location, Result};
use crate::frontends::dumpi::labels;
use crate::frontends::dumpi::{TraceOptions, TraceSummary};
use crate::program::ops::{
    CollCall, Message, Op, OpKind, Program, SrcLoc, ANY, ANY_SOURCE, UNDEFINED,
};
use crate::program::sink::Sink;
use crate::units::Ps;
use rustc_hash::FxHashMap as HashMap;
use std::collections::{HashSet, VecDeque};
use std::path::Path;
use std::sync::Arc;

/// An opened trace: what every rank's conversion reads besides its events.
pub(super) struct Shared {
    pub(super) name: String,
    pub(super) defs: Defs,
    pub(super) layout: Layout,
    pub(super) opts: TraceOptions,
    /// What each region's enter and leave mean, worked out once from its definition.
    regions: HashMap<u32, Region>,
}

/// A region as the conversion sees it.
#[derive(Clone, Copy)]
struct Region {
    /// An MPI call, and one that `--ignore-call` skips.
    mpi: bool,
    ignored: bool,
    /// Its name in the summary's calls.
    key: &'static str,
    init: bool,
    finalize: bool,
    sendrecv: bool,
}

impl Region {
    fn of(name: &str, paradigm: u64, ignore: &HashSet<String>) -> Region {
        let mpi = paradigm == PARADIGM_MPI || name.starts_with("MPI_");
        Region {
            mpi,
            ignored: mpi && ignore.contains(&short(name)),
            key: labels::NAMES
                .iter()
                .find(|n| **n == name)
                .copied()
                .unwrap_or("MPI (other calls)"),
            init: matches!(name, "MPI_Init" | "MPI_Init_thread"),
            finalize: name == "MPI_Finalize",
            sendrecv: name.starts_with("MPI_Sendrecv"),
        }
    }
}

impl Shared {
    /// Opens the trace whose anchor file is `path` and reads its global definitions.
    pub(super) fn open(path: &Path, opts: &TraceOptions) -> Result<(Shared, Archive)> {
        let name = path.display().to_string();
        if let Err(e) = std::fs::metadata(path) {
            return Err(Error::io(&name, e));
        }
        let ignore = ignored(opts)?;
        let mut archive = Archive::open(&name).map_err(|e| library(&name, "", e))?;
        let mut defs = Defs::default();
        archive
            .definitions(&mut |d| {
                defs.add(d);
                true
            })
            .map_err(|e| library(&name, "global definitions: ", e))?;
        let layout = defs.layout(&name)?;
        let regions = defs
            .regions
            .iter()
            .filter_map(|(&id, &(name, paradigm))| {
                let id = u32::try_from(id).ok()?;
                Some((id, Region::of(defs.string(name), paradigm, &ignore)))
            })
            .collect();
        let shared = Shared {
            name,
            defs,
            layout,
            opts: opts.clone(),
            regions,
        };
        Ok((shared, archive))
    }

    pub(super) fn ranks(&self) -> u32 {
        self.layout.locations.len() as u32
    }

    /// A library error met while reading rank events, located in the archive.
    pub(super) fn library_error(&self, e: LibraryError) -> Error {
        let at = match (
            e.location.and_then(|l| self.layout.rank_of.get(&l)),
            e.event,
        ) {
            (Some(r), Some(n)) => format!(
                "rank {r} (location {}), event {n}: ",
                e.location.unwrap_or(0)
            ),
            (Some(r), None) => format!("rank {r} (location {}): ", e.location.unwrap_or(0)),
            _ => String::new(),
        };
        library(&self.name, &at, e)
    }

    /// The handle each rank's communicators take: one more than the largest.
    pub(super) fn comm_handles(&self) -> u32 {
        let top = self.layout.comms.values().filter_map(Comm::handle).max();
        top.unwrap_or(0) + 1
    }
}

/// Reads the whole trace whose anchor file is `path`.
pub fn read(path: &Path, opts: &TraceOptions) -> Result<(Program, TraceSummary)> {
    let (shared, archive) = Shared::open(path, opts)?;
    let shared = Arc::new(shared);
    let mut prog = Program::new(shared.ranks());
    let (summary, _) = convert_all(&shared, archive, &mut prog)?;
    finish_program(&shared, &mut prog, &summary);
    Ok((prog, summary))
}

/// Converts every rank's events into `sink` (the whole program, or its skeleton).
/// Returns the summary and the position of each rank's last event that acesim reads.
pub(super) fn convert_all<S: Sink>(
    shared: &Arc<Shared>,
    mut archive: Archive,
    sink: S,
) -> Result<(TraceSummary, Vec<u64>)> {
    let mut conv = Converter::new(shared.clone(), sink, None);
    let mut last = vec![0; shared.ranks() as usize];
    let (mut location, mut rank) = (None, None);
    let mut failure = None;
    let layout = &shared.layout;
    let read = archive.events(&layout.locations, &layout.event_counts, &mut |ev| {
        if location != Some(ev.location) {
            location = Some(ev.location);
            rank = shared.layout.rank_of.get(&ev.location).copied();
        }
        if let Some(r) = rank {
            last[r as usize] = ev.position;
        }
        match conv.event(ev) {
            Ok(()) => true,
            Err(e) => {
                failure = Some(e);
                false
            }
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    read.map_err(|e| shared.library_error(e))?;
    Ok((conv.finish(), last))
}

/// What a whole reading and a skeleton set on the program besides its operations: the
/// communicator handles and the traced windows.
pub(super) fn finish_program(shared: &Shared, prog: &mut Program, summary: &TraceSummary) {
    let handles = shared.comm_handles();
    for h in prog.comm_handles.iter_mut() {
        *h = (*h).max(handles);
    }
    if summary.windows.iter().any(|&w| w > 0) {
        prog.traced_windows = Some(summary.windows.clone());
    }
}

/// An error of the OTF2 library, located in the archive.
fn library(name: &str, at: &str, e: LibraryError) -> Error {
    Error::input(
        Location::file(name),
        format!(
            "{at}not a readable OTF2 trace (truncated or corrupt?): {}",
            e.message
        ),
    )
}

/// The MPI calls to skip, by name without `MPI_`, in lower case.
fn ignored(opts: &TraceOptions) -> Result<HashSet<String>> {
    opts.ignore_calls
        .iter()
        .map(|n| match labels::label(n) {
            Some(l) => Ok(short(labels::name(l).unwrap_or(n))),
            None => Err(Error::input(
                Location::file("command line").with_field("--ignore-call"),
                format!(
                    "unknown MPI call `{n}`{}",
                    crate::error::did_you_mean(n, labels::NAMES.iter().copied())
                ),
            )),
        })
        .collect()
}

/// A call name without `MPI_`, in lower case (how ignored calls are compared).
fn short(name: &str) -> String {
    let n = name.to_ascii_lowercase();
    n.strip_prefix("mpi_").map(str::to_string).unwrap_or(n)
}

/// A request of the trace: its acesim handle and the operation that started it (its index
/// among the rank's operations).
struct Req {
    handle: u32,
    op: usize,
}

/// An operation of the rank being read, before it reaches the sink.
enum Held {
    Op(Op),
    /// A wait for these requests (its list is stored when it reaches the sink).
    WaitAll(Vec<u32>, SrcLoc),
    /// A cancelled request's operation, or a receive never completed.
    Dropped,
}

/// What one rank's conversion keeps between events.
#[derive(Default)]
struct RankState {
    rank: u32,
    /// Entered regions: (region, is an MPI call, is ignored).
    stack: Vec<(u32, bool, bool)>,
    mpi_depth: u32,
    /// Inside MPI_Sendrecv: its send and receive are non-blocking, waited for at its end.
    sendrecv: bool,
    /// The traced window: its MPI region (MPI_Init's leave to MPI_Finalize's enter) where the
    /// trace has them, else its first MPI call's enter to its last one's leave.
    first_enter: Option<u64>,
    last_leave: Option<u64>,
    in_init: bool,
    finalize_enter: Option<u64>,
    /// Requests completed in the current MPI call, waited for at its end.
    done: Vec<u32>,
    requests: HashMap<u64, Req>,
    /// Operations not yet given to the sink, from the rank's operation `base` on.
    held: VecDeque<Held>,
    base: usize,
    /// Handles of requests waited for, taken again by later requests.
    free_handles: Vec<u32>,
    /// The rank's location.
    location: u64,
    /// Where the last operation came from.
    last_loc: Option<SrcLoc>,
}

impl RankState {
    fn held(&mut self, op: usize) -> &mut Held {
        &mut self.held[op - self.base]
    }
}

pub(super) struct Converter<S: Sink> {
    shared: Arc<Shared>,
    pub(super) sink: S,
    summary: TraceSummary,
    /// MPI calls by name (added to the summary at the end: a map by pointer is cheaper).
    calls: HashMap<&'static str, u64>,
    file: u32,
    current: Option<RankState>,
}

impl<S: Sink> Converter<S> {
    /// A conversion into `sink`: of every rank, whose events come location by location
    /// (`only` None), or of rank `only` alone.
    pub(super) fn new(shared: Arc<Shared>, mut sink: S, only: Option<u32>) -> Self {
        let n = shared.ranks();
        let file = sink.file_id(&shared.name);
        let mut summary = TraceSummary {
            ranks: n,
            windows: vec![0; n as usize],
            format: "OTF2",
            ..Default::default()
        };
        // Every communicator is made at the start, from the world, on every rank.
        let ranks = match only {
            Some(r) => r..r + 1,
            None => 0..n,
        };
        for r in ranks {
            let loc = SrcLoc { file, line: 0 };
            for id in &shared.layout.order {
                let c = &shared.layout.comms[id];
                let kind = match c.kind {
                    CommKind::World | CommKind::SelfComm => continue,
                    CommKind::Dup(result) => OpKind::CommDup { parent: 0, result },
                    CommKind::Split(result) => {
                        let (color, key) = match c.members.iter().position(|&m| m == r) {
                            Some(p) => (0, p as i64),
                            None => (UNDEFINED, 0),
                        };
                        OpKind::CommSplit {
                            parent: 0,
                            color,
                            key,
                            result,
                        }
                    }
                };
                if c.members.contains(&r) {
                    summary.comms_created += 1;
                }
                sink.push(r, Op { kind, loc });
            }
        }
        let current = only.map(|rank| RankState {
            rank,
            location: shared.layout.locations[rank as usize],
            ..Default::default()
        });
        Converter {
            shared,
            sink,
            summary,
            calls: HashMap::default(),
            file,
            current,
        }
    }

    /// The conversion's summary, once every rank has ended.
    pub(super) fn finish(mut self) -> TraceSummary {
        self.end_rank();
        for (key, n) in self.calls {
            *self.summary.calls.entry(key).or_default() += n;
        }
        self.summary
    }

    fn error(&self, ev: &Event, field: &str, message: impl Into<String>) -> Error {
        let rank = self.current.as_ref().map_or(0, |s| s.rank);
        Error::input(
            Location::file(format!(
                "{}, rank {rank} (location {}), event {}",
                self.shared.name, ev.location, ev.position
            ))
            .with_field(field),
            message,
        )
    }

    fn state(&mut self) -> &mut RankState {
        self.current.as_mut().expect("a rank is being read")
    }

    /// Holds an operation of the current rank, returning its index among the rank's.
    fn push(&mut self, ev: &Event, kind: OpKind) -> usize {
        let loc = SrcLoc {
            file: self.file,
            line: u32::try_from(ev.position).unwrap_or(u32::MAX),
        };
        let s = self.state();
        s.last_loc = Some(loc);
        s.held.push_back(Held::Op(Op { kind, loc }));
        s.base + s.held.len() - 1
    }

    /// A handle for a new request of the current rank.
    fn new_handle(&mut self) -> u32 {
        let s = self.current.as_mut().expect("a rank is being read");
        match s.free_handles.pop() {
            Some(h) => h,
            None => self.sink.new_handle(s.rank),
        }
    }

    /// Gives the sink the held operations that no pending request can still change.
    fn release(&mut self) {
        let Converter { current, sink, .. } = self;
        let Some(s) = current.as_mut() else {
            return;
        };
        let oldest = s
            .requests
            .values()
            .map(|q| q.op)
            .min()
            .unwrap_or(usize::MAX);
        while s.base < oldest {
            let Some(held) = s.held.pop_front() else {
                break;
            };
            s.base += 1;
            match held {
                Held::Op(op) => sink.push(s.rank, op),
                Held::WaitAll(hs, loc) => {
                    let list = sink.req_list(&hs);
                    let count = hs.len() as u32;
                    sink.push(
                        s.rank,
                        Op {
                            kind: OpKind::WaitAll { list, count },
                            loc,
                        },
                    );
                }
                Held::Dropped => {}
            }
        }
    }

    /// Picoseconds of `ticks` timer ticks.
    fn ps(&self, ticks: u64) -> Ps {
        let ps = u128::from(ticks) * 1_000_000_000_000 / u128::from(self.shared.defs.resolution);
        ps.min(u128::from(Ps::MAX)) as Ps
    }

    pub(super) fn event(&mut self, ev: &Event) -> Result<()> {
        if self.current.as_ref().map(|s| s.location) != Some(ev.location) {
            self.end_rank();
            let Some(&rank) = self.shared.layout.rank_of.get(&ev.location) else {
                return Err(self.error(ev, "location", "an event of a location that is no rank"));
            };
            self.current = Some(RankState {
                rank,
                location: ev.location,
                ..Default::default()
            });
        }
        match ev.kind {
            shim::EV_ENTER => return self.enter(ev),
            shim::EV_LEAVE => return self.leave(ev),
            _ => {}
        }
        if self.state().stack.iter().any(|s| s.2) {
            return Ok(()); // Inside an ignored call.
        }
        match ev.kind {
            shim::EV_SEND | shim::EV_RECV => {
                let send = ev.kind == shim::EV_SEND;
                let (comm, peer) = self.p2p(ev, send)?;
                if self.state().sendrecv {
                    let h = self.new_handle();
                    self.message(ev, send, peer, comm, Some(h));
                    self.state().done.push(h);
                } else {
                    self.message(ev, send, peer, comm, None);
                }
            }
            shim::EV_ISEND => {
                let (comm, peer) = self.p2p(ev, true)?;
                self.check_new(ev)?;
                let h = self.new_handle();
                let op = self.message(ev, true, peer, comm, Some(h));
                self.state()
                    .requests
                    .insert(ev.request, Req { handle: h, op });
            }
            shim::EV_IRECV_REQUEST => {
                self.check_new(ev)?;
                let h = self.new_handle();
                // Its source, tag and size are known when it completes (MpiIrecv).
                let op = self.push(
                    ev,
                    OpKind::Irecv {
                        src: ANY_SOURCE,
                        size: 0,
                        tag: ANY,
                        comm: 0,
                        req: h,
                    },
                );
                self.state()
                    .requests
                    .insert(ev.request, Req { handle: h, op });
            }
            shim::EV_ISEND_COMPLETE | shim::EV_IRECV => {
                let Some(req) = self.state().requests.remove(&ev.request) else {
                    let what = if ev.kind == shim::EV_IRECV {
                        "an MpiIrecvRequest"
                    } else {
                        "an MpiIsend"
                    };
                    return Err(self.error(
                        ev,
                        "requestID",
                        format!(
                            "request {} completes but {what} of this rank never started it",
                            ev.request
                        ),
                    ));
                };
                if ev.kind == shim::EV_IRECV {
                    let (comm, src) = self.p2p(ev, false)?;
                    let held = self.state().held(req.op);
                    let Held::Op(op) = held else {
                        return Err(Error::Internal(
                            "a pending request's operation was dropped".into(),
                        ));
                    };
                    if !matches!(op.kind, OpKind::Irecv { .. }) {
                        return Err(self.error(
                            ev,
                            "requestID",
                            format!(
                                "request {} completes as a receive but was started by an isend",
                                ev.request
                            ),
                        ));
                    }
                    op.kind = OpKind::Irecv {
                        src,
                        size: ev.size,
                        tag: i64::from(ev.tag),
                        comm,
                        req: req.handle,
                    };
                } else if !matches!(
                    self.state().held(req.op),
                    Held::Op(Op {
                        kind: OpKind::Isend { .. },
                        ..
                    })
                ) {
                    return Err(self.error(
                        ev,
                        "requestID",
                        format!(
                            "request {} completes as a send but was started by a receive",
                            ev.request
                        ),
                    ));
                }
                self.state().done.push(req.handle);
                if self.state().mpi_depth == 0 {
                    self.flush(ev);
                }
            }
            shim::EV_REQUEST_TEST => {
                let Some(h) = self.state().requests.get(&ev.request).map(|r| r.handle) else {
                    return Err(self.error(
                        ev,
                        "requestID",
                        format!("request {} is tested but is not pending", ev.request),
                    ));
                };
                self.push(ev, OpKind::Test { req: h });
            }
            shim::EV_REQUEST_CANCELLED => {
                let Some(req) = self.state().requests.remove(&ev.request) else {
                    return Err(self.error(
                        ev,
                        "requestID",
                        format!("request {} is cancelled but is not pending", ev.request),
                    ));
                };
                *self.state().held(req.op) = Held::Dropped;
            }
            shim::EV_COLL_BEGIN => {}
            shim::EV_COLL_END => self.collective(ev)?,
            _ => {}
        }
        Ok(())
    }

    fn check_new(&self, ev: &Event) -> Result<()> {
        let s = self.current.as_ref().expect("a rank is being read");
        if s.requests.contains_key(&ev.request) {
            return Err(self.error(
                ev,
                "requestID",
                format!(
                    "request {} is started again while still pending",
                    ev.request
                ),
            ));
        }
        Ok(())
    }

    fn enter(&mut self, ev: &Event) -> Result<()> {
        let Some(&region) = self.shared.regions.get(&ev.region) else {
            return Err(self.error(ev, "region", format!("region {} is not defined", ev.region)));
        };
        let (mpi, ignored) = (region.mpi, region.ignored);
        if mpi && self.state().mpi_depth == 0 {
            *self.calls.entry(region.key).or_default() += 1;
            let s = self.state();
            // MPI_Init, which the replay does not charge, is left out of the window.
            if region.init {
                s.in_init = true;
            } else {
                s.first_enter.get_or_insert(ev.time);
            }
            if region.finalize {
                s.finalize_enter.get_or_insert(ev.time);
            }
            if let Some(prev) = s.last_leave {
                let gap = ev.time.saturating_sub(prev);
                self.compute(ev, gap);
            }
            let s = self.state();
            s.sendrecv = region.sendrecv;
        }
        let s = self.state();
        s.stack.push((ev.region, mpi, ignored));
        if mpi {
            s.mpi_depth += 1;
        }
        Ok(())
    }

    fn leave(&mut self, ev: &Event) -> Result<()> {
        let Some((region, mpi, _)) = self.state().stack.pop() else {
            return Err(self.error(
                ev,
                "region",
                format!("leaves region {} which was never entered", ev.region),
            ));
        };
        if region != ev.region {
            return Err(self.error(
                ev,
                "region",
                format!(
                    "leaves region {} but the region entered last is {region}",
                    ev.region
                ),
            ));
        }
        if mpi {
            let s = self.state();
            s.mpi_depth -= 1;
            if s.mpi_depth == 0 {
                if std::mem::take(&mut s.in_init) {
                    s.first_enter.get_or_insert(ev.time);
                }
                s.last_leave = Some(ev.time);
                s.sendrecv = false;
                self.flush(ev);
            }
        }
        Ok(())
    }

    /// Compute for a gap of `ticks` between two MPI calls.
    fn compute(&mut self, ev: &Event, ticks: u64) {
        let ps = self.ps(ticks);
        if ps == 0 || ps < self.shared.opts.compute_threshold {
            return;
        }
        let scaled = (ps as f64 * self.shared.opts.compute_scale).round();
        if scaled >= 1.0 {
            self.push(
                ev,
                OpKind::Compute {
                    ps: scaled.min(Ps::MAX as f64) as Ps,
                },
            );
        }
    }

    /// The requests completed in the MPI call that ends, waited for.
    /// Their handles are taken again by later requests.
    fn flush(&mut self, ev: &Event) {
        let done = std::mem::take(&mut self.state().done);
        match done.as_slice() {
            [] => {}
            [h] => {
                self.push(ev, OpKind::Wait { req: *h });
            }
            hs => {
                let loc = SrcLoc {
                    file: self.file,
                    line: u32::try_from(ev.position).unwrap_or(u32::MAX),
                };
                let s = self.state();
                s.last_loc = Some(loc);
                s.held.push_back(Held::WaitAll(hs.to_vec(), loc));
            }
        }
        self.state().free_handles.extend(done.iter().rev());
        self.release();
    }

    /// The communicator handle and peer of a message event, checked.
    fn p2p(&self, ev: &Event, send: bool) -> Result<(u32, u32)> {
        let comm = self.comm(&self.shared, ev)?;
        let Some(handle) = comm.handle() else {
            return Err(self.error(
                ev,
                "communicator",
                "point-to-point messages on MPI_COMM_SELF are not modelled",
            ));
        };
        let field = if send { "receiver" } else { "sender" };
        if ev.peer as usize >= comm.members.len() {
            return Err(self.error(
                ev,
                field,
                format!(
                    "{field} {} is not a rank of communicator {} ({} ranks)",
                    ev.peer,
                    ev.comm,
                    comm.members.len()
                ),
            ));
        }
        self.member(ev, comm)?;
        Ok((handle, ev.peer))
    }

    fn comm<'s>(&self, shared: &'s Shared, ev: &Event) -> Result<&'s Comm> {
        shared.layout.comms.get(&u64::from(ev.comm)).ok_or_else(|| {
            self.error(
                ev,
                "communicator",
                format!("communicator {} is not defined", ev.comm),
            )
        })
    }

    fn member(&self, ev: &Event, comm: &Comm) -> Result<()> {
        let r = self.current.as_ref().map_or(0, |s| s.rank);
        if comm.kind != CommKind::SelfComm && !comm.members.contains(&r) {
            return Err(self.error(
                ev,
                "communicator",
                format!("rank {r} is not a member of communicator {}", ev.comm),
            ));
        }
        Ok(())
    }

    fn message(&mut self, ev: &Event, send: bool, peer: u32, comm: u32, req: Option<u32>) -> usize {
        if send {
            self.summary.p2p_bytes = self.summary.p2p_bytes.saturating_add(ev.size);
        }
        let m = Message {
            send,
            peer: i64::from(peer),
            size: ev.size,
            tag: i64::from(ev.tag),
            comm,
            req,
        };
        self.push(ev, m.op())
    }

    /// A collective from its end event: kind, root, and the block size from this rank's
    /// bytes sent and received (see docs/traces.md).
    fn collective(&mut self, ev: &Event) -> Result<()> {
        let shared = Arc::clone(&self.shared);
        let comm = self.comm(&shared, ev)?;
        self.member(ev, comm)?;
        let Some(handle) = comm.handle() else {
            return Ok(()); // A collective on MPI_COMM_SELF moves nothing.
        };
        let n = comm.members.len().max(1) as u64;
        let (sent, recvd) = (ev.size, ev.size2);
        let me = self.state().rank;
        let my_rank = comm.members.iter().position(|&m| m == me).unwrap_or(0) as u32;
        let is_root = ev.peer == my_rank;
        let per = |total: u64| vec![total / n; n as usize];
        // Score-P counts, per rank, every block a collective moves: an allreduce of B bytes
        // sends and receives n·B, a scan (n - me)·B and (me + 1)·B, the root of a gather
        // receives n·B ((n - 1)·B in place, sending nothing).
        let rest = |total: u64| total / (n - 1).max(1);
        let (kind, size, sizes) = match ev.op {
            0 => ("barrier", 0, Vec::new()),
            1 => (
                "bcast",
                if recvd > 0 { recvd } else { sent / n },
                Vec::new(),
            ),
            2 => (
                "gather",
                if sent > 0 { sent } else { rest(recvd) },
                Vec::new(),
            ),
            3 => (
                "gatherv",
                sent,
                if is_root { per(recvd) } else { Vec::new() },
            ),
            4 => (
                "scatter",
                if recvd > 0 { recvd } else { rest(sent) },
                Vec::new(),
            ),
            5 => (
                "scatterv",
                recvd,
                if is_root { per(sent) } else { Vec::new() },
            ),
            6 => ("allgather", sent / n, Vec::new()),
            7 => ("allgatherv", recvd, per(recvd)),
            8 => ("alltoall", sent / n, Vec::new()),
            9 | 10 => {
                let mut s = per(sent);
                s.extend(per(recvd));
                ("alltoallv", sent, s)
            }
            11 => ("allreduce", sent / n, Vec::new()),
            12 => (
                "reduce",
                if sent > 0 { sent } else { rest(recvd) },
                Vec::new(),
            ),
            13 | 16 => ("reduce_scatter", sent, per(sent)),
            14 => ("scan", recvd / (u64::from(my_rank) + 1), Vec::new()),
            15 => (
                "exscan",
                match my_rank {
                    0 => rest(sent),
                    me => recvd / u64::from(me),
                },
                Vec::new(),
            ),
            17..=22 => return Ok(()), // Handles and memory of one-sided communication.
            op => {
                return Err(self.error(
                    ev,
                    "collectiveOp",
                    format!("unknown collective operation {op}"),
                ));
            }
        };
        let root = if matches!(ev.op, 1 | 2 | 3 | 4 | 5 | 12) {
            if ev.peer as u64 >= n {
                return Err(self.error(
                    ev,
                    "root",
                    format!(
                        "root {} is not a rank of communicator {} ({n} ranks)",
                        ev.peer, ev.comm
                    ),
                ));
            }
            ev.peer
        } else {
            0
        };
        self.summary.collective_calls += 1;
        let call = self.sink.coll_call(CollCall {
            kind: kind.to_string(),
            algorithm: String::new(),
            transport: String::new(),
            size,
            root,
            segment: 0,
            comm: handle,
            sizes,
        });
        self.push(ev, OpKind::Coll { call });
        Ok(())
    }

    /// Ends the rank being read: completions still pending are waited for; requests never
    /// completed (or cancelled) are dropped; its traced window is kept.
    pub(super) fn end_rank(&mut self) {
        let Some(s) = self.current.as_mut() else {
            return;
        };
        if !s.done.is_empty() {
            let hs = std::mem::take(&mut s.done);
            let loc = s.last_loc.unwrap_or(SrcLoc {
                file: self.file,
                line: 0,
            });
            s.held.push_back(Held::WaitAll(hs, loc));
        }
        let pending: Vec<usize> = s.requests.drain().map(|(_, q)| q.op).collect();
        for op in pending {
            let held = s.held(op);
            if matches!(
                held,
                Held::Op(Op {
                    kind: OpKind::Irecv {
                        src: ANY_SOURCE,
                        size: 0,
                        ..
                    },
                    ..
                })
            ) {
                *held = Held::Dropped;
            }
        }
        self.release();
        let Some(s) = self.current.take() else {
            return;
        };
        if let (Some(a), Some(b)) = (s.first_enter, s.finalize_enter.or(s.last_leave)) {
            self.summary.windows[s.rank as usize] = self.ps(b.saturating_sub(a));
        }
    }
}
