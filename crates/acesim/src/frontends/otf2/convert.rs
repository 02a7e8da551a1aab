//! OTF2 definitions and events turned into a program: ranks from the MPI locations,
//! communicators from their groups, messages and requests from the MPI events, collectives
//! from their end events, compute from the gaps between MPI regions.

use super::shim::{self, Archive, Def, Event, LibraryError};
use crate::error::{Error, Location, Result};
use crate::frontends::dumpi::labels;
use crate::frontends::dumpi::{TraceOptions, TraceSummary};
use crate::program::ops::{
    CollCall, Message, Op, OpKind, Program, SrcLoc, ANY, ANY_SOURCE, UNDEFINED,
};
use crate::units::Ps;
use std::collections::{HashMap, HashSet};
use std::path::Path;

const PARADIGM_UNKNOWN: u64 = 0;
const PARADIGM_MPI: u64 = 4;
const LOCATION_GROUP_PROCESS: u64 = 1;
const LOCATION_CPU_THREAD: u64 = 1;
const GROUP_COMM_LOCATIONS: u64 = 4;
const GROUP_COMM_GROUP: u64 = 5;
const GROUP_COMM_SELF: u64 = 6;

/// Reads the trace whose anchor file is `path`.
pub fn read(path: &Path, opts: &TraceOptions) -> Result<(Program, TraceSummary)> {
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
    let mut conv = Converter::new(&name, &defs, &layout, opts, ignore);
    let mut failure = None;
    let read = archive.events(&layout.locations, &mut |ev| match conv.event(ev) {
        Ok(()) => true,
        Err(e) => {
            failure = Some(e);
            false
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    if let Err(e) = read {
        let at = match (e.location.and_then(|l| layout.rank_of.get(&l)), e.event) {
            (Some(r), Some(n)) => format!(
                "rank {r} (location {}), event {n}: ",
                e.location.unwrap_or(0)
            ),
            (Some(r), None) => format!("rank {r} (location {}): ", e.location.unwrap_or(0)),
            _ => String::new(),
        };
        return Err(library(&name, &at, e));
    }
    conv.finish()
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

/// The global definitions acesim uses.
#[derive(Default)]
struct Defs {
    strings: HashMap<u64, String>,
    /// Region id: (name string, paradigm).
    regions: HashMap<u64, (u64, u64)>,
    /// Location groups in definition order: (id, type).
    location_groups: Vec<(u64, u64)>,
    /// Locations in definition order: (id, type, location group).
    locations: Vec<(u64, u64, u64)>,
    /// Group id: (type, paradigm, members).
    groups: HashMap<u64, (u64, u64, Vec<u64>)>,
    /// Communicators in definition order: (id, name string, group).
    comms: Vec<(u64, u64, u64)>,
    /// Ticks per second.
    resolution: u64,
}

impl Defs {
    fn add(&mut self, d: Def) {
        match d.kind {
            shim::DEF_STRING => {
                self.strings.insert(d.id, d.text);
            }
            shim::DEF_REGION => {
                self.regions.insert(d.id, (d.a, d.c));
            }
            shim::DEF_LOCATION_GROUP => self.location_groups.push((d.id, d.b)),
            shim::DEF_LOCATION => self.locations.push((d.id, d.b, d.d)),
            shim::DEF_GROUP => {
                self.groups.insert(d.id, (d.b, d.c, d.members));
            }
            shim::DEF_COMM => self.comms.push((d.id, d.a, d.b)),
            shim::DEF_CLOCK => self.resolution = d.a,
            _ => {}
        }
    }

    fn string(&self, id: u64) -> &str {
        self.strings.get(&id).map_or("", String::as_str)
    }

    /// The ranks' locations and the communicators.
    fn layout(&self, name: &str) -> Result<Layout> {
        let at = |what: &str| Location::file(format!("{name}, {what}"));
        // MPI_COMM_WORLD's locations, in rank order, when the trace says them; else the
        // first thread of every process.
        let world = self
            .groups
            .values()
            .find(|(t, p, _)| *t == GROUP_COMM_LOCATIONS && *p == PARADIGM_MPI);
        let locations: Vec<u64> = match world {
            Some((_, _, members)) => members.clone(),
            None => self
                .location_groups
                .iter()
                .filter(|(_, t)| *t == LOCATION_GROUP_PROCESS)
                .filter_map(|(g, _)| {
                    self.locations
                        .iter()
                        .find(|(_, t, lg)| lg == g && *t == LOCATION_CPU_THREAD)
                        .map(|l| l.0)
                })
                .collect(),
        };
        if locations.is_empty() {
            return Err(Error::input(
                at("global definitions"),
                "no MPI process: the trace defines no MPI communication locations (group of type COMM_LOCATIONS) and no process with a thread",
            ));
        }
        let n = u32::try_from(locations.len())
            .map_err(|_| Error::input(at("global definitions"), "more than 2^32 ranks"))?;
        let mut rank_of = HashMap::new();
        for (r, l) in locations.iter().enumerate() {
            if !self.locations.iter().any(|x| x.0 == *l) {
                return Err(Error::input(
                    at("global definitions").with_field("members"),
                    format!("rank {r}'s location {l} is not defined"),
                ));
            }
            if rank_of.insert(*l, r as u32).is_some() {
                return Err(Error::input(
                    at("global definitions").with_field("members"),
                    format!("location {l} is rank {r} and an earlier rank too"),
                ));
            }
        }
        if self.resolution == 0 {
            return Err(Error::input(
                at("global definitions").with_field("timerResolution"),
                "no clock properties (timer resolution): times cannot be read",
            ));
        }
        let mut comms = HashMap::new();
        let mut order = Vec::new();
        let mut world_seen = false;
        let mut next_handle = 1;
        for &(id, cname, group) in &self.comms {
            let cname = self.string(cname);
            let where_ = || at(&format!("communicator {id} ({cname})")).with_field("group");
            let Some((gtype, paradigm, members)) = self.groups.get(&group) else {
                return Err(Error::input(
                    where_(),
                    format!("group {group} is not defined"),
                ));
            };
            // Another paradigm's communicators carry no MPI message: Score-P defines its
            // measurement system's ("Process x Threads CPU Locations") before
            // MPI_COMM_WORLD, over every process.
            if *paradigm != PARADIGM_MPI && *paradigm != PARADIGM_UNKNOWN {
                continue;
            }
            order.push(id);
            let comm = match *gtype {
                GROUP_COMM_SELF => Comm {
                    kind: CommKind::SelfComm,
                    members: Vec::new(),
                },
                GROUP_COMM_LOCATIONS => Comm {
                    kind: CommKind::World,
                    members: (0..n).collect(),
                },
                GROUP_COMM_GROUP => {
                    let mut ranks = Vec::with_capacity(members.len());
                    for &m in members {
                        match u32::try_from(m).ok().filter(|&m| m < n) {
                            Some(m) if !ranks.contains(&m) => ranks.push(m),
                            _ => {
                                return Err(Error::input(
                                    where_(),
                                    format!(
                                        "member {m} of group {group} is not a rank of MPI_COMM_WORLD's {n} (or appears twice)"
                                    ),
                                ))
                            }
                        }
                    }
                    let everyone = ranks.iter().copied().eq(0..n);
                    let kind = if everyone && !world_seen {
                        world_seen = true;
                        CommKind::World
                    } else if everyone {
                        next_handle += 1;
                        CommKind::Dup(next_handle - 1)
                    } else {
                        next_handle += 1;
                        CommKind::Split(next_handle - 1)
                    };
                    Comm {
                        kind,
                        members: ranks,
                    }
                }
                t => {
                    return Err(Error::input(
                        where_(),
                        format!("group {group} has type {t}, not a communicator group"),
                    ))
                }
            };
            comms.insert(id, comm);
        }
        Ok(Layout {
            locations,
            rank_of,
            comms,
            order,
        })
    }
}

/// How an OTF2 communicator becomes an acesim one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CommKind {
    /// The world (handle 0).
    World,
    /// Everyone again, made by comm_dup of the world (this handle).
    Dup(u32),
    /// Some ranks, made by comm_split of the world (this handle).
    Split(u32),
    /// MPI_COMM_SELF (no traffic).
    SelfComm,
}

struct Comm {
    kind: CommKind,
    /// World ranks, in communicator order.
    members: Vec<u32>,
}

impl Comm {
    fn handle(&self) -> Option<u32> {
        match self.kind {
            CommKind::World => Some(0),
            CommKind::Dup(h) | CommKind::Split(h) => Some(h),
            CommKind::SelfComm => None,
        }
    }
}

struct Layout {
    /// Each rank's location.
    locations: Vec<u64>,
    rank_of: HashMap<u64, u32>,
    comms: HashMap<u64, Comm>,
    /// Communicator ids in definition order.
    order: Vec<u64>,
}

/// A request of the trace: its acesim handle and the operation that started it.
struct Req {
    handle: u32,
    op: usize,
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
    /// Operations dropped at the end (cancelled or never completed requests).
    dropped: Vec<usize>,
    /// The rank's location.
    location: u64,
}

struct Converter<'a> {
    name: &'a str,
    defs: &'a Defs,
    layout: &'a Layout,
    opts: &'a TraceOptions,
    ignore: HashSet<String>,
    prog: Program,
    summary: TraceSummary,
    file: u32,
    current: Option<RankState>,
}

impl<'a> Converter<'a> {
    fn new(
        name: &'a str,
        defs: &'a Defs,
        layout: &'a Layout,
        opts: &'a TraceOptions,
        ignore: HashSet<String>,
    ) -> Self {
        let n = layout.locations.len() as u32;
        let mut prog = Program::new(n);
        let file = prog.file_id(name);
        let mut summary = TraceSummary {
            ranks: n,
            windows: vec![0; n as usize],
            format: "OTF2",
            ..Default::default()
        };
        // Every communicator is made at the start, from the world, on every rank.
        for r in 0..n {
            let loc = SrcLoc { file, line: 0 };
            for id in &layout.order {
                let c = &layout.comms[id];
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
                prog.comm_handles[r as usize] =
                    prog.comm_handles[r as usize].max(c.handle().unwrap_or(0) + 1);
                prog.ops[r as usize].push(Op { kind, loc });
            }
        }
        Converter {
            name,
            defs,
            layout,
            opts,
            ignore,
            prog,
            summary,
            file,
            current: None,
        }
    }

    fn error(&self, ev: &Event, field: &str, message: impl Into<String>) -> Error {
        let rank = self.current.as_ref().map_or(0, |s| s.rank);
        Error::input(
            Location::file(format!(
                "{}, rank {rank} (location {}), event {}",
                self.name, ev.location, ev.position
            ))
            .with_field(field),
            message,
        )
    }

    fn state(&mut self) -> &mut RankState {
        self.current.as_mut().expect("a rank is being read")
    }

    fn push(&mut self, ev: &Event, kind: OpKind) -> usize {
        let loc = SrcLoc {
            file: self.file,
            line: u32::try_from(ev.position).unwrap_or(u32::MAX),
        };
        let r = self.state().rank as usize;
        self.prog.ops[r].push(Op { kind, loc });
        self.prog.ops[r].len() - 1
    }

    /// Picoseconds of `ticks` timer ticks.
    fn ps(&self, ticks: u64) -> Ps {
        let ps = u128::from(ticks) * 1_000_000_000_000 / u128::from(self.defs.resolution);
        ps.min(u128::from(Ps::MAX)) as Ps
    }

    fn event(&mut self, ev: &Event) -> Result<()> {
        if self.current.as_ref().map(|s| s.location) != Some(ev.location) {
            self.end_rank();
            let Some(&rank) = self.layout.rank_of.get(&ev.location) else {
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
                    let rank = self.state().rank;
                    let h = self.prog.new_handle(rank);
                    self.message(ev, send, peer, comm, Some(h));
                    self.state().done.push(h);
                } else {
                    self.message(ev, send, peer, comm, None);
                }
            }
            shim::EV_ISEND => {
                let (comm, peer) = self.p2p(ev, true)?;
                self.check_new(ev)?;
                let rank = self.state().rank;
                let h = self.prog.new_handle(rank);
                let op = self.message(ev, true, peer, comm, Some(h));
                self.state()
                    .requests
                    .insert(ev.request, Req { handle: h, op });
            }
            shim::EV_IRECV_REQUEST => {
                self.check_new(ev)?;
                let rank = self.state().rank;
                let h = self.prog.new_handle(rank);
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
                    let r = self.state().rank as usize;
                    let op = &mut self.prog.ops[r][req.op];
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
                    self.prog.ops[self.current.as_ref().map_or(0, |s| s.rank as usize)][req.op]
                        .kind,
                    OpKind::Isend { .. }
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
                self.state().dropped.push(req.op);
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
        let Some(&(name, paradigm)) = self.defs.regions.get(&u64::from(ev.region)) else {
            return Err(self.error(ev, "region", format!("region {} is not defined", ev.region)));
        };
        let name = self.defs.string(name);
        let mpi = paradigm == PARADIGM_MPI || name.starts_with("MPI_");
        let ignored = mpi && self.ignore.contains(&short(name));
        if mpi && self.state().mpi_depth == 0 {
            let key: &'static str = labels::NAMES
                .iter()
                .find(|n| **n == name)
                .copied()
                .unwrap_or("MPI (other calls)");
            *self.summary.calls.entry(key).or_default() += 1;
            let s = self.state();
            // MPI_Init, which the replay does not charge, is left out of the window.
            if matches!(name, "MPI_Init" | "MPI_Init_thread") {
                s.in_init = true;
            } else {
                s.first_enter.get_or_insert(ev.time);
            }
            if name == "MPI_Finalize" {
                s.finalize_enter.get_or_insert(ev.time);
            }
            if let Some(prev) = s.last_leave {
                let gap = ev.time.saturating_sub(prev);
                self.compute(ev, gap);
            }
            let s = self.state();
            s.sendrecv = name.starts_with("MPI_Sendrecv");
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
        if ps == 0 || ps < self.opts.compute_threshold {
            return;
        }
        let scaled = (ps as f64 * self.opts.compute_scale).round();
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
    fn flush(&mut self, ev: &Event) {
        let done = std::mem::take(&mut self.state().done);
        match done.as_slice() {
            [] => {}
            [h] => {
                self.push(ev, OpKind::Wait { req: *h });
            }
            hs => {
                let list = self.prog.req_list(hs);
                self.push(
                    ev,
                    OpKind::WaitAll {
                        list,
                        count: hs.len() as u32,
                    },
                );
            }
        }
    }

    /// The communicator handle and peer of a message event, checked.
    fn p2p(&self, ev: &Event, send: bool) -> Result<(u32, u32)> {
        let comm = self.comm(ev)?;
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

    fn comm(&self, ev: &Event) -> Result<&'a Comm> {
        self.layout.comms.get(&u64::from(ev.comm)).ok_or_else(|| {
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
        let comm = self.comm(ev)?;
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
        let call = self.prog.coll_calls.len() as u32;
        self.prog.coll_calls.push(CollCall {
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
    fn end_rank(&mut self) {
        let Some(mut s) = self.current.take() else {
            return;
        };
        let r = s.rank as usize;
        if !s.done.is_empty() {
            let hs = std::mem::take(&mut s.done);
            let loc = self.prog.ops[r].last().map_or(
                SrcLoc {
                    file: self.file,
                    line: 0,
                },
                |o| o.loc,
            );
            let list = self.prog.req_list(&hs);
            self.prog.ops[r].push(Op {
                kind: OpKind::WaitAll {
                    list,
                    count: hs.len() as u32,
                },
                loc,
            });
        }
        let mut drop: HashSet<usize> = s.dropped.into_iter().collect();
        drop.extend(
            s.requests
                .values()
                .filter(|q| {
                    matches!(
                        self.prog.ops[r][q.op].kind,
                        OpKind::Irecv {
                            src: ANY_SOURCE,
                            size: 0,
                            ..
                        }
                    )
                })
                .map(|q| q.op),
        );
        if !drop.is_empty() {
            let mut i = 0;
            self.prog.ops[r].retain(|_| {
                i += 1;
                !drop.contains(&(i - 1))
            });
        }
        if let (Some(a), Some(b)) = (s.first_enter, s.finalize_enter.or(s.last_leave)) {
            self.summary.windows[r] = self.ps(b.saturating_sub(a));
        }
    }

    fn finish(mut self) -> Result<(Program, TraceSummary)> {
        self.end_rank();
        if self.summary.windows.iter().any(|&w| w > 0) {
            self.prog.traced_windows = Some(self.summary.windows.clone());
        }
        Ok((self.prog, self.summary))
    }
}
