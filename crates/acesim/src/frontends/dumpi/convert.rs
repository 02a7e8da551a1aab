//! One rank's call records turned into operations: messages, waits, collective calls,
//! communicator creations and the compute between calls.

use crate::error::{Error, Result};
use crate::frontends::dumpi::labels;
use crate::frontends::dumpi::records::{Call, RankFile, Record};
use crate::program::ops::{CollCall, Op, OpKind, SrcLoc, ANY, UNDEFINED};
use crate::program::sink::Sink;
use crate::units::Ps;
use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeMap, HashSet};
use std::io::{Read, Seek};

const COMM_NULL: u16 = 1;
const COMM_WORLD: u16 = 2;
const COMM_SELF: u16 = 3;
const REQUEST_NULL: i32 = 1;

/// How a trace is replayed.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceOptions {
    /// Calls skipped (they cost nothing), by name with or without `MPI_`.
    pub ignore_calls: Vec<String>,
    /// Factor on the compute between calls (0 drops it).
    pub compute_scale: f64,
    /// Gaps between calls shorter than this are not compute (SimGrid traces: compute
    /// shorter than this is dropped).
    pub compute_threshold: Ps,
    /// Host speed in flop/s, turning a SimGrid trace's flops into time (`--flops`).
    pub flops: Option<f64>,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            ignore_calls: Vec::new(),
            compute_scale: 1.0,
            compute_threshold: 0,
            flops: None,
        }
    }
}

/// What a trace holds, for `acesim trace info` and reports.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct TraceSummary {
    pub ranks: u32,
    /// Calls by name, over all ranks.
    pub calls: BTreeMap<&'static str, u64>,
    /// Bytes sent by point-to-point calls, over all ranks.
    pub p2p_bytes: u64,
    /// Collective calls, over all ranks.
    pub collective_calls: u64,
    /// Communicators created (split, dup, create), counted once per rank that joins one.
    pub comms_created: u64,
    /// Each rank's traced window in ps: its MPI region (MPI_Init's return to MPI_Finalize's
    /// entry), or from its first call's start to its last call's stop where those are absent.
    pub windows: Vec<Ps>,
    /// The DUMPI version of the rank files.
    pub version: [u8; 3],
    /// The trace format when it is neither DUMPI nor SimGrid's (`OTF2`).
    #[serde(skip_serializing_if = "str::is_empty")]
    pub format: &'static str,
}

impl TraceSummary {
    /// Adds what one rank's reading counted (its window after those before it).
    pub fn add(&mut self, rank: TraceSummary) {
        for (name, n) in rank.calls {
            *self.calls.entry(name).or_default() += n;
        }
        self.p2p_bytes = self.p2p_bytes.saturating_add(rank.p2p_bytes);
        self.collective_calls += rank.collective_calls;
        self.comms_created += rank.comms_created;
        self.windows.extend(rank.windows);
    }
}

/// A request of the trace: the acesim handle while it runs, and for a persistent request
/// the operation each start makes.
struct Req {
    active: Option<u32>,
    persistent: Option<(bool, i64, u64, i64, u32)>,
    started_at: u64,
    completed_at: Option<u64>,
}

/// A group: the ranks (in `base`) it holds, or all of `base`.
struct Group {
    base: u16,
    ranks: Option<Vec<i32>>,
}

/// Converts the records of rank `rank` into operations for `sink`, counting what it reads
/// in `summary`.
pub struct RankConverter<R, S> {
    pub file: RankFile<R>,
    pub sink: S,
    pub summary: TraceSummary,
    rank: u32,
    file_id: u32,
    opts: TraceOptions,
    ignore: HashSet<u16>,
    requests: HashMap<i32, Req>,
    comms: HashMap<u16, u32>,
    comm_ranks: HashMap<u16, i32>,
    groups: HashMap<u16, Group>,
    last_stop: Option<i64>,
    first_start: Option<i64>,
    finalize_start: Option<i64>,
    /// Records per label, added to the summary's counts by name at the end (a lookup by
    /// name per record cost a tenth of the reading).
    label_counts: Vec<u64>,
    /// Request handles whose requests completed, taken again by later requests: a rank
    /// uses as many handles as it has requests in flight, not one per request.
    free_handles: Vec<u32>,
}

impl<R: Read + Seek, S: Sink> RankConverter<R, S> {
    /// `file_id` names the rank's file in the operations' locations.
    pub fn new(
        file: RankFile<R>,
        sink: S,
        rank: u32,
        file_id: u32,
        opts: &TraceOptions,
        ignore: &HashSet<u16>,
    ) -> Self {
        RankConverter {
            file,
            sink,
            summary: TraceSummary::default(),
            rank,
            file_id,
            opts: opts.clone(),
            ignore: ignore.clone(),
            requests: HashMap::default(),
            comms: HashMap::from_iter([(COMM_WORLD, 0)]),
            comm_ranks: HashMap::from_iter([(COMM_WORLD, rank as i32)]),
            groups: HashMap::default(),
            last_stop: None,
            first_start: None,
            finalize_start: None,
            label_counts: Vec::new(),
            free_handles: Vec::new(),
        }
    }

    /// A request handle: one freed by an earlier completion, or a new one.
    fn handle(&mut self) -> u32 {
        match self.free_handles.pop() {
            Some(h) => h,
            None => self.sink.new_handle(self.rank),
        }
    }

    /// Reads every record of the rank; what it read is in `summary`.
    pub fn run(&mut self) -> Result<()> {
        while self.convert_next()? {}
        self.finish();
        Ok(())
    }

    /// Converts the next record; false at the end of the rank's records.
    pub fn convert_next(&mut self) -> Result<bool> {
        match self.file.next_record()? {
            Some(rec) => self.record(rec).map(|()| true),
            None => Ok(false),
        }
    }

    /// Adds the calls counted and the rank's traced window to `summary`.
    pub fn finish(&mut self) {
        for (label, &n) in self.label_counts.iter().enumerate() {
            if n > 0 {
                let name = labels::name(label as u16).unwrap_or("?");
                *self.summary.calls.entry(name).or_default() += n;
            }
        }
        self.label_counts.clear();
        let end = self.finalize_start.or(self.last_stop);
        let window = match (self.first_start, end) {
            (Some(a), Some(b)) if b > a => (b - a) as Ps * 1000,
            _ => 0,
        };
        self.summary.windows.push(window);
    }

    fn error(&self, message: impl Into<String>) -> Error {
        self.file.bytes.error(message)
    }

    fn push(&mut self, kind: OpKind) {
        let loc = SrcLoc {
            file: self.file_id,
            line: self.file.records as u32,
        };
        self.sink.push(self.rank, Op { kind, loc });
    }

    fn record(&mut self, rec: Record) -> Result<()> {
        let name = labels::name(rec.label).unwrap_or("?");
        let at = rec.label as usize;
        if self.label_counts.len() <= at {
            self.label_counts.resize(at + 1, 0);
        }
        self.label_counts[at] += 1;
        if let Some((start, stop)) = rec.wall {
            // The traced window is the MPI region (MPI_Init's return to MPI_Finalize's
            // entry) where the trace has them: the replay charges nothing for those two calls,
            // which take most of a short program's run.
            let init = matches!(name, "MPI_Init" | "MPI_Init_thread");
            self.first_start
                .get_or_insert(if init { stop.max(start) } else { start });
            if name == "MPI_Finalize" {
                self.finalize_start.get_or_insert(start);
            }
            if let Some(prev) = self.last_stop {
                self.compute(start - prev);
            }
            self.last_stop = Some(stop.max(start));
        }
        if self.ignore.contains(&rec.label) {
            return Ok(());
        }
        self.call(name, rec.call)
    }

    /// Compute for a gap of `ns` nanoseconds between two calls.
    fn compute(&mut self, ns: i64) {
        if ns <= 0 {
            return;
        }
        let ps = ns as Ps * 1000;
        if ps < self.opts.compute_threshold {
            return;
        }
        let scaled = (ps as f64 * self.opts.compute_scale).round() as Ps;
        if scaled > 0 {
            self.push(OpKind::Compute { ps: scaled });
        }
    }

    fn bytes(&self, count: i32, dtype: u16) -> Result<u64> {
        if count < 0 {
            return Err(self.error(format!("count {count} is negative: corrupt record")));
        }
        match self.file.type_sizes.get(dtype as usize) {
            Some(&s) => Ok(count as u64 * u64::from(s)),
            None => Err(self.error(format!(
                "unknown datatype {dtype}: the trace's datatype-size table has {} entries",
                self.file.type_sizes.len()
            ))),
        }
    }

    /// The bytes of a collective's per-rank counts, added up (an error past 2^64: the counts
    /// of a corrupt record).
    fn total(&self, sizes: &[u64]) -> Result<u64> {
        sizes
            .iter()
            .try_fold(0u64, |t, &s| t.checked_add(s))
            .ok_or_else(|| self.error("the counts add up to more than 2^64 bytes: corrupt record"))
    }

    /// The acesim handle of communicator `c`; `None` for MPI_COMM_SELF.
    fn comm(&self, c: u16) -> Result<Option<u32>> {
        if c == COMM_SELF {
            return Ok(None);
        }
        self.comms.get(&c).copied().map(Some).ok_or_else(|| {
            self.error(format!(
                "communicator {c} was never created on this rank (expected MPI_COMM_WORLD, {COMM_WORLD}, or a communicator that Comm_split, Comm_dup or Comm_create made before this record)"
            ))
        })
    }

    fn p2p_comm(&self, c: u16) -> Result<u32> {
        self.comm(c)?
            .ok_or_else(|| self.error("point-to-point messages on MPI_COMM_SELF are not modelled"))
    }

    fn dest(&self, d: i32) -> Result<u32> {
        u32::try_from(d).map_err(|_| {
            self.error(format!(
                "destination {d} is not a rank (expected 0 or more; a call to MPI_PROC_NULL, whose value DUMPI keeps as the MPI library's, is not read: --ignore-call skips the call)"
            ))
        })
    }

    fn source(&self, s: i32) -> Result<i64> {
        match s {
            -1 => Ok(ANY),
            s if s >= 0 => Ok(i64::from(s)),
            s => Err(self.error(format!("source {s} is not a rank or MPI_ANY_SOURCE (a call from MPI_PROC_NULL, whose value DUMPI keeps as the MPI library's, is not read: --ignore-call skips the call)"))),
        }
    }

    fn tag(t: i32) -> i64 {
        if t == -1 {
            ANY
        } else {
            i64::from(t)
        }
    }

    /// A fresh request for trace request `id`.
    fn start_request(
        &mut self,
        id: i32,
        persistent: Option<(bool, i64, u64, i64, u32)>,
    ) -> Result<u32> {
        let handle = self.handle();
        let at = self.file.records;
        if let Some(old) = self.requests.get(&id) {
            if old.active.is_some() && persistent.is_none() && old.persistent.is_none() {
                return Err(self.error(format!(
                    "request {id} is started again while the one started at record {} was never completed",
                    old.started_at
                )));
            }
        }
        self.requests.insert(
            id,
            Req {
                active: Some(handle),
                persistent,
                started_at: at,
                completed_at: None,
            },
        );
        Ok(handle)
    }

    fn message(&mut self, send: bool, peer: i64, size: u64, tag: i64, comm: u32, req: Option<u32>) {
        if send {
            self.summary.p2p_bytes = self.summary.p2p_bytes.saturating_add(size);
        }
        let m = crate::program::ops::Message {
            send,
            peer,
            size,
            tag,
            comm,
            req,
        };
        self.push(m.op());
    }

    fn complete(&mut self, ids: &[i32]) -> Result<()> {
        let mut handles = Vec::with_capacity(ids.len());
        let at = self.file.records;
        for &id in ids {
            if id == REQUEST_NULL {
                continue;
            }
            let Some(req) = self.requests.get_mut(&id) else {
                return Err(self.error(format!(
                    "request {id} is completed but was never started, or is already complete (expected a request an Isend, Irecv or Start made before this record and not completed since)"
                )));
            };
            match req.active.take() {
                Some(h) => {
                    handles.push(h);
                    req.completed_at = Some(at);
                    // A completed request is forgotten (its id may be reused), so that the
                    // table grows with the requests in flight, not with the trace; a
                    // persistent one stays for its next start.
                    if req.persistent.is_none() {
                        self.requests.remove(&id);
                    }
                }
                None => {
                    let msg = match req.completed_at {
                        Some(c) => format!(
                            "request {id} is completed twice: it was completed at record {c}"
                        ),
                        None => format!("request {id} is completed but was never started"),
                    };
                    return Err(self.error(msg));
                }
            }
        }
        match handles.as_slice() {
            [] => {}
            [h] => self.push(OpKind::Wait { req: *h }),
            hs => {
                let list = self.sink.req_list(hs);
                self.push(OpKind::WaitAll {
                    list,
                    count: hs.len() as u32,
                });
            }
        }
        // After their wait, the handles can name later requests.
        self.free_handles.extend(handles.iter().rev());
        Ok(())
    }

    fn coll(&mut self, kind: &str, size: u64, root: i32, comm: u16, sizes: Vec<u64>) -> Result<()> {
        let Some(comm) = self.comm(comm)? else {
            return Ok(()); // A collective on MPI_COMM_SELF moves nothing.
        };
        let root = u32::try_from(root).map_err(|_| {
            self.error(format!(
                "root {root} is not a rank (intercommunicators are not modelled)"
            ))
        })?;
        self.summary.collective_calls += 1;
        let call = self.sink.coll_call(CollCall {
            kind: kind.to_string(),
            algorithm: String::new(),
            transport: String::new(),
            size,
            root,
            segment: 0,
            comm,
            sizes,
        });
        self.push(OpKind::Coll { call });
        Ok(())
    }

    fn all_bytes(&self, counts: &[i32], types: &[u16]) -> Result<Vec<u64>> {
        counts
            .iter()
            .zip(types)
            .map(|(&c, &t)| self.bytes(c, t))
            .collect()
    }

    fn new_comm(&mut self, new: u16) -> u32 {
        let h = self.sink.new_comm_handle(self.rank);
        if new != COMM_NULL {
            self.comms.insert(new, h);
            self.summary.comms_created += 1;
        }
        h
    }

    fn call(&mut self, name: &str, call: Call) -> Result<()> {
        let Some(call) = self.collective(call)? else {
            return Ok(());
        };
        match call {
            Call::Local => {}
            Call::Unmodelled => {
                return Err(self.error(format!(
                    "acesim cannot model {name}; to skip it (it then costs nothing), give --ignore-call {name} (ignore_calls=[\"{name}\"] in Python)"
                )))
            }
            Call::Send { count, dtype, dest, tag, comm } => {
                let (size, comm, dst) = (self.bytes(count, dtype)?, self.p2p_comm(comm)?, self.dest(dest)?);
                self.message(true, i64::from(dst), size, i64::from(tag), comm, None);
            }
            Call::Recv { count, dtype, source, tag, comm } => {
                let (size, comm, src) = (self.bytes(count, dtype)?, self.p2p_comm(comm)?, self.source(source)?);
                self.message(false, src, size, Self::tag(tag), comm, None);
            }
            Call::Isend { count, dtype, dest, tag, comm, request } => {
                let (size, comm, dst) = (self.bytes(count, dtype)?, self.p2p_comm(comm)?, self.dest(dest)?);
                let req = self.start_request(request, None)?;
                self.message(true, i64::from(dst), size, i64::from(tag), comm, Some(req));
            }
            Call::Irecv { count, dtype, source, tag, comm, request } => {
                let (size, comm, src) = (self.bytes(count, dtype)?, self.p2p_comm(comm)?, self.source(source)?);
                let req = self.start_request(request, None)?;
                self.message(false, src, size, Self::tag(tag), comm, Some(req));
            }
            Call::Init { send, count, dtype, peer, tag, comm, request } => {
                let (size, comm) = (self.bytes(count, dtype)?, self.p2p_comm(comm)?);
                let (peer, tag) = if send {
                    (i64::from(self.dest(peer)?), i64::from(tag))
                } else {
                    (self.source(peer)?, Self::tag(tag))
                };
                let at = self.file.records;
                self.requests.insert(
                    request,
                    Req { active: None, persistent: Some((send, peer, size, tag, comm)), started_at: at, completed_at: None },
                );
            }
            Call::Start { requests } => {
                for id in requests {
                    let Some(p) = self.requests.get(&id).and_then(|r| r.persistent) else {
                        return Err(self.error(format!(
                            "request {id} is started but no Send_init or Recv_init made it"
                        )));
                    };
                    if self.requests[&id].active.is_some() {
                        return Err(self.error(format!("persistent request {id} is started while still active")));
                    }
                    let req = self.start_request(id, Some(p))?;
                    let (send, peer, size, tag, comm) = p;
                    self.message(send, peer, size, tag, comm, Some(req));
                }
            }
            Call::Sendrecv { send, recv, comm } => {
                let comm = self.p2p_comm(comm)?;
                let (ss, dst) = (self.bytes(send.0, send.1)?, self.dest(send.2)?);
                let (rs, src) = (self.bytes(recv.0, recv.1)?, self.source(recv.2)?);
                let a = self.handle();
                let b = self.handle();
                self.message(true, i64::from(dst), ss, i64::from(send.3), comm, Some(a));
                self.message(false, src, rs, Self::tag(recv.3), comm, Some(b));
                let list = self.sink.req_list(&[a, b]);
                self.push(OpKind::WaitAll { list, count: 2 });
                self.free_handles.extend([b, a]);
            }
            Call::Complete { requests } => self.complete(&requests)?,
            Call::RequestFree { request } => match self.requests.get_mut(&request) {
                Some(r) if r.persistent.is_some() => {
                    self.requests.remove(&request);
                }
                // The operation still runs; nobody waits for it, and its handle can name
                // a later request.
                Some(r) if r.active.is_some() => {
                    if let Some(h) = r.active.take() {
                        self.free_handles.push(h);
                    }
                }
                _ => {
                    return Err(self.error(format!(
                        "request {request} is freed but was never started or is already complete"
                    )))
                }
            },
            Call::CommSplit { old, color, key, new } => {
                let parent = self.split_parent(old)?;
                let color = if new == COMM_NULL || color < 0 { UNDEFINED } else { i64::from(color) };
                let result = self.new_comm(new);
                self.push(OpKind::CommSplit { parent, color, key: i64::from(key), result });
            }
            Call::CommDup { old, new } => {
                let parent = self.split_parent(old)?;
                let result = self.new_comm(new);
                self.push(OpKind::CommDup { parent, result });
            }
            Call::CommCreate { old, group, new } => {
                let parent = self.split_parent(old)?;
                let (color, key) = if new == COMM_NULL {
                    (UNDEFINED, 0)
                } else {
                    (0, self.position_in_group(group)?)
                };
                let result = self.new_comm(new);
                self.push(OpKind::CommSplit { parent, color, key, result });
            }
            Call::CommFree { comm } => {
                if comm != COMM_WORLD && self.comms.remove(&comm).is_none() {
                    return Err(self.error(format!("communicator {comm} is freed but was never created on this rank")));
                }
                self.comm_ranks.remove(&comm);
            }
            Call::CommRank { comm, rank } => {
                self.comm_ranks.insert(comm, rank);
            }
            Call::CommGroup { comm, group } => {
                self.groups.insert(group, Group { base: comm, ranks: None });
            }
            Call::GroupIncl { group, ranks, new } => {
                let Some(g) = self.groups.get(&group) else {
                    return Err(self.error(format!("group {group} was never made by Comm_group on this rank")));
                };
                let base = g.base;
                let ranks = match &g.ranks {
                    None => ranks,
                    Some(of) => ranks
                        .iter()
                        .map(|&i| usize::try_from(i).ok().and_then(|i| of.get(i)).copied())
                        .collect::<Option<Vec<i32>>>()
                        .ok_or_else(|| self.error("a rank of Group_incl is outside its group"))?,
                };
                self.groups.insert(new, Group { base, ranks: Some(ranks) });
            }
            // Collectives: `collective` took them.
            _ => {}
        }
        Ok(())
    }

    /// A collective call, added to the rank's operations; any other call is given back.
    fn collective(&mut self, call: Call) -> Result<Option<Call>> {
        match call {
            Call::Barrier { comm } => self.coll("barrier", 0, 0, comm, Vec::new())?,
            Call::Rooted {
                kind,
                count,
                dtype,
                root,
                comm,
            } => {
                let size = self.bytes(count, dtype)?;
                self.coll(kind, size, root, comm, Vec::new())?
            }
            Call::Gather {
                send,
                recv,
                root,
                comm,
                ..
            } => {
                // The root's receive count is each rank's block (its send may be in place).
                let (c, t) = recv.unwrap_or(send);
                let size = self.bytes(c, t)?;
                self.coll("gather", size, root, comm, Vec::new())?
            }
            Call::Scatter {
                recv,
                send,
                root,
                comm,
                ..
            } => {
                let (c, t) = send.unwrap_or(recv);
                let size = self.bytes(c, t)?;
                self.coll("scatter", size, root, comm, Vec::new())?
            }
            Call::Gatherv {
                send,
                recvcounts,
                recvtype,
                root,
                comm,
                ..
            } => {
                let size = self.bytes(send.0, send.1)?;
                let sizes = self.all_bytes(&recvcounts, &vec![recvtype; recvcounts.len()])?;
                self.coll("gatherv", size, root, comm, sizes)?
            }
            Call::Scatterv {
                recv,
                sendcounts,
                sendtype,
                root,
                comm,
                ..
            } => {
                let size = self.bytes(recv.0, recv.1)?;
                let sizes = self.all_bytes(&sendcounts, &vec![sendtype; sendcounts.len()])?;
                self.coll("scatterv", size, root, comm, sizes)?
            }
            Call::Uniform {
                kind,
                count,
                dtype,
                comm,
            } => {
                let size = self.bytes(count, dtype)?;
                self.coll(kind, size, 0, comm, Vec::new())?
            }
            Call::Allgatherv {
                recvcounts,
                recvtype,
                comm,
            } => {
                let sizes = self.all_bytes(&recvcounts, &vec![recvtype; recvcounts.len()])?;
                self.coll("allgatherv", self.total(&sizes)?, 0, comm, sizes)?
            }
            Call::Alltoallv {
                sendcounts,
                sendtypes,
                recvcounts,
                recvtypes,
                comm,
            } => {
                if sendcounts.len() != recvcounts.len()
                    || sendtypes.len() != sendcounts.len()
                    || recvtypes.len() != recvcounts.len()
                {
                    return Err(self.error("the send and receive counts and types have different lengths: corrupt record"));
                }
                let mut sizes = self.all_bytes(&sendcounts, &sendtypes)?;
                let sent = self.total(&sizes)?;
                sizes.extend(self.all_bytes(&recvcounts, &recvtypes)?);
                self.coll("alltoallv", sent, 0, comm, sizes)?
            }
            Call::ReduceScatter {
                recvcounts,
                dtype,
                comm,
            } => {
                let sizes = self.all_bytes(&recvcounts, &vec![dtype; recvcounts.len()])?;
                self.coll("reduce_scatter", self.total(&sizes)?, 0, comm, sizes)?
            }
            other => return Ok(Some(other)),
        }
        Ok(None)
    }

    /// The parent of a communicator creation (MPI_COMM_SELF cannot be one here).
    fn split_parent(&self, old: u16) -> Result<u32> {
        self.comm(old)?
            .ok_or_else(|| self.error("communicators made from MPI_COMM_SELF are not modelled"))
    }

    /// This rank's place in `group` (its rank in the new communicator).
    fn position_in_group(&self, group: u16) -> Result<i64> {
        let Some(g) = self.groups.get(&group) else {
            return Err(self.error(format!(
                "group {group} was never made by Comm_group or Group_incl on this rank"
            )));
        };
        let Some(&me) = self.comm_ranks.get(&g.base) else {
            return Err(self.error(format!(
                "this rank's rank in communicator {} (the base of group {group}) is not in the trace: it never called MPI_Comm_rank on it",
                g.base
            )));
        };
        match &g.ranks {
            None => Ok(i64::from(me)),
            Some(list) => list.iter().position(|&x| x == me).map(|p| p as i64).ok_or_else(|| {
                self.error(format!(
                    "the new communicator is given to this rank, but the group of Comm_create does not hold it (rank {me})"
                ))
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::ops::Program;
    use std::io::{BufReader, Cursor};

    /// Feeds `calls` (by name) to a converter for rank 0 of testbgp (its header and
    /// datatype table are real; the records are these), as records 1, 2, ...
    fn convert(calls: Vec<(&str, Call)>) -> Result<Program> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/dumpi/sst-macro-testbgp/testbgp-0000.bin"
        );
        let bytes = std::fs::read(path).expect("testbgp is in the repository");
        let file = RankFile::open(BufReader::new(Cursor::new(bytes)), "testbgp-0000.bin")?;
        let mut prog = Program::new(4);
        let opts = TraceOptions::default();
        let ignore = HashSet::new();
        let mut c = RankConverter::new(file, &mut prog, 0, 0, &opts, &ignore);
        for (name, call) in calls {
            c.file.records += 1;
            c.file.bytes.record = c.file.records;
            let label = labels::label(name).expect("a DUMPI call name");
            c.record(Record {
                label,
                wall: None,
                call,
            })?;
        }
        Ok(prog)
    }

    fn isend(request: i32) -> (&'static str, Call) {
        let call = Call::Isend {
            count: 4,
            dtype: 9,
            dest: 1,
            tag: 0,
            comm: COMM_WORLD,
            request,
        };
        ("MPI_Isend", call)
    }

    fn wait(request: i32) -> (&'static str, Call) {
        let call = Call::Complete {
            requests: vec![request],
        };
        ("MPI_Wait", call)
    }

    fn err(calls: Vec<(&str, Call)>) -> String {
        let e = convert(calls).expect_err("a bad trace");
        assert_eq!(e.exit_code(), 2, "{e}");
        e.to_string()
    }

    #[test]
    fn a_request_reused_after_completion_is_a_new_request() {
        let prog = convert(vec![isend(7), wait(7), isend(7), wait(7)]).unwrap();
        let waits = prog.ops[0]
            .iter()
            .filter(|op| matches!(op.kind, OpKind::Wait { .. }))
            .count();
        assert_eq!(waits, 2);
    }

    #[test]
    fn handles_are_taken_again_once_their_requests_completed() {
        // 100 rounds of two requests in flight use two handles, not 200.
        let mut calls = Vec::new();
        for i in 10..110 {
            calls.extend([isend(i), isend(1000 + i), wait(i), wait(1000 + i)]);
        }
        let prog = convert(calls).unwrap();
        assert_eq!(prog.handles[0], 2);
        // Each round's sends name the two handles.
        let sends: Vec<u32> = prog.ops[0]
            .iter()
            .filter_map(|op| match op.kind {
                OpKind::Isend { req, .. } => Some(req),
                _ => None,
            })
            .collect();
        assert_eq!(sends.len(), 200);
        assert!(
            sends.chunks(2).all(|c| c.contains(&0) && c.contains(&1)),
            "{sends:?}"
        );
        // Two requests still in flight keep their handles: a third is new.
        let prog = convert(vec![isend(11), isend(12), wait(11), isend(13), isend(14)]).unwrap();
        assert_eq!(prog.handles[0], 3);
    }

    #[test]
    fn a_request_completed_twice_names_both_records() {
        let e = err(vec![isend(7), wait(7), wait(7)]);
        assert!(e.contains("testbgp-0000.bin, record 3"), "{e}");
        assert!(e.contains("request 7"), "{e}");
        assert!(e.contains("never started, or is already complete"), "{e}");
    }

    #[test]
    fn a_persistent_request_completed_twice_says_when_it_was_completed() {
        let init = Call::Init {
            send: true,
            count: 1,
            dtype: 9,
            peer: 1,
            tag: 0,
            comm: COMM_WORLD,
            request: 5,
        };
        let start = Call::Start { requests: vec![5] };
        let e = err(vec![
            ("MPI_Send_init", init),
            ("MPI_Start", start),
            wait(5),
            wait(5),
        ]);
        assert!(e.contains("record 4"), "{e}");
        assert!(
            e.contains("request 5 is completed twice: it was completed at record 3"),
            "{e}"
        );
        let init = Call::Init {
            send: true,
            count: 1,
            dtype: 9,
            peer: 1,
            tag: 0,
            comm: COMM_WORLD,
            request: 6,
        };
        let e = err(vec![("MPI_Send_init", init), wait(6)]);
        assert!(
            e.contains("request 6 is completed but was never started"),
            "{e}"
        );
    }

    #[test]
    fn a_request_never_started_is_refused() {
        let e = err(vec![wait(12)]);
        assert!(e.contains("record 1"), "{e}");
        assert!(
            e.contains("request 12 is completed but was never started"),
            "{e}"
        );
        let e = err(vec![("MPI_Request_free", Call::RequestFree { request: 3 })]);
        assert!(
            e.contains("request 3 is freed but was never started"),
            "{e}"
        );
    }

    #[test]
    fn a_communicator_never_created_is_refused() {
        let send = Call::Send {
            count: 1,
            dtype: 9,
            dest: 1,
            tag: 0,
            comm: 44,
        };
        let e = err(vec![("MPI_Send", send)]);
        assert!(e.contains("record 1"), "{e}");
        assert!(
            e.contains("communicator 44 was never created on this rank"),
            "{e}"
        );
        let e = err(vec![("MPI_Comm_free", Call::CommFree { comm: 45 })]);
        assert!(
            e.contains("communicator 45 is freed but was never created"),
            "{e}"
        );
        let barrier = Call::Barrier { comm: 46 };
        let e = err(vec![("MPI_Barrier", barrier)]);
        assert!(e.contains("communicator 46 was never created"), "{e}");
        // Made by Comm_dup, it is known; freed, it is gone again.
        let dup = Call::CommDup {
            old: COMM_WORLD,
            new: 47,
        };
        let send = |comm| Call::Send {
            count: 1,
            dtype: 9,
            dest: 1,
            tag: 0,
            comm,
        };
        convert(vec![("MPI_Comm_dup", dup.clone()), ("MPI_Send", send(47))]).unwrap();
        let e = err(vec![
            ("MPI_Comm_dup", dup),
            ("MPI_Comm_free", Call::CommFree { comm: 47 }),
            ("MPI_Send", send(47)),
        ]);
        assert!(e.contains("record 3"), "{e}");
        assert!(e.contains("communicator 47 was never created"), "{e}");
    }
}
