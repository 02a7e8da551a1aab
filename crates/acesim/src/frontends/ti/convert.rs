//! Actions turned into operations: messages and their requests, collective calls on the
//! world, compute from flops.

use crate::error::Result;
use crate::frontends::dumpi::{TraceOptions, TraceSummary};
use crate::frontends::ti::actions::{Action, Dt, FileText, Line, Word};
use crate::program::ops::{CollCall, Message, Op, OpKind, Program, SrcLoc};
use crate::program::sink::Sink;
use crate::units::Ps;
use std::collections::VecDeque;

/// Picoseconds in a second.
const PS_PER_S: f64 = 1e12;

/// What one rank's conversion keeps between lines.
#[derive(Debug, Default)]
pub struct RankState {
    /// Bytes of the default datatype: MPI_BYTE (1) until an `init` with an argument makes
    /// it MPI_DOUBLE (8), as SimGrid's `InitAction`.
    double: bool,
    /// Pending requests by (source, destination, tag), oldest first (SimGrid's
    /// `RequestStorage`).
    requests: Vec<((i64, i64, i64), VecDeque<u32>)>,
    /// Where the rank's last action was (its final wait's location).
    last: Option<SrcLoc>,
    /// Handles of completed requests, taken again by later ones: a rank uses as many as
    /// it has requests pending, not one per request.
    free_handles: Vec<u32>,
}

impl RankState {
    fn pending(&self) -> usize {
        self.requests.iter().map(|(_, q)| q.len()).sum()
    }

    fn queue(&mut self, key: (i64, i64, i64)) -> &mut VecDeque<u32> {
        match self.requests.iter().position(|(k, _)| *k == key) {
            Some(i) => &mut self.requests[i].1,
            None => {
                self.requests.push((key, VecDeque::new()));
                let last = self.requests.len() - 1;
                &mut self.requests[last].1
            }
        }
    }
}

/// Converts the lines of the trace's files into operations for `sink` (by default a whole
/// program).
pub struct Converter<S = Program> {
    pub prog: S,
    pub summary: TraceSummary,
    opts: TraceOptions,
    /// Each rank's state; only the one rank's, when converting one (`one_rank`).
    ranks: Vec<RankState>,
    one_rank: Option<u32>,
}

impl Converter {
    pub fn new(ranks: u32, opts: &TraceOptions) -> Self {
        Converter::with_sink(ranks, opts, Program::new(ranks))
    }
}

impl<S: Sink> Converter<S> {
    /// A converter of rank `rank` alone, of a trace of `ranks` ranks, writing to `sink`
    /// (a rank read as the run goes holds its own state, not every rank's).
    pub fn one_rank(rank: u32, ranks: u32, opts: &TraceOptions, sink: S) -> Self {
        Converter {
            prog: sink,
            summary: TraceSummary {
                ranks,
                ..Default::default()
            },
            opts: opts.clone(),
            ranks: vec![RankState::default()],
            one_rank: Some(rank),
        }
    }

    fn state(&mut self, r: u32) -> &mut RankState {
        let i = self.slot(r);
        &mut self.ranks[i]
    }

    /// Where rank `r`'s state is.
    fn slot(&self, r: u32) -> usize {
        match self.one_rank {
            Some(_) => 0,
            None => r as usize,
        }
    }

    /// A converter of a trace of `ranks` ranks writing to `sink`.
    pub fn with_sink(ranks: u32, opts: &TraceOptions, sink: S) -> Self {
        Converter {
            prog: sink,
            summary: TraceSummary {
                ranks,
                windows: vec![0; ranks as usize],
                ..Default::default()
            },
            opts: opts.clone(),
            ranks: (0..ranks).map(|_| RankState::default()).collect(),
            one_rank: None,
        }
    }

    /// Adds one line's action to its rank.
    pub fn line(&mut self, file: &FileText, line: &Line, action: Action) -> Result<()> {
        let r = line.rank;
        let loc = SrcLoc {
            file: self.prog.file_id(file.name),
            line: line.number,
        };
        self.state(r).last = Some(loc);
        let name = line.words[1].text;
        if let Some(n) = crate::frontends::ti::actions::NAMES
            .iter()
            .find(|n| **n == name)
        {
            *self.summary.calls.entry(n).or_default() += 1;
        }
        let at = |i: usize| line.words.get(i).copied().unwrap_or(line.words[1]);
        let c = Ctx { file, loc, rank: r };
        let Some(action) = self.collective(&c, action, &at)? else {
            return Ok(());
        };
        self.point_to_point(&c, action, &at)
    }

    /// A set-up, point-to-point or time action; `at(i)` is the line's `i`-th word.
    fn point_to_point<'w>(
        &mut self,
        c: &Ctx,
        action: Action,
        at: &dyn Fn(usize) -> Word<'w>,
    ) -> Result<()> {
        let r = c.rank;
        match action {
            Action::Init { double } => self.state(r).double = double,
            Action::Nothing => {}
            Action::Send {
                blocking,
                dst,
                tag,
                count,
                dt,
            } => {
                let size = self.bytes(c, count, dt, at(4))?;
                self.message_kept(c, true, dst, size, tag, !blocking);
            }
            Action::Recv {
                blocking,
                src,
                tag,
                count,
                dt,
            } => {
                let size = self.bytes(c, count, dt, at(4))?;
                self.message_kept(c, false, src, size, tag, !blocking);
            }
            Action::Wait { src, dst, tag } => {
                let state = self.state(r);
                let pending = state.pending();
                let req = state.queue((src, dst, tag)).pop_front();
                state.requests.retain(|(_, q)| !q.is_empty());
                let Some(req) = req else {
                    let why = match pending {
                        0 => "no isend or irecv of this rank is pending".to_string(),
                        n => format!(
                            "none of this rank's {n} pending requests is a message from rank {src} to rank {dst} with tag {tag}"
                        ),
                    };
                    return Err(c.file.error(
                        at(2),
                        "src",
                        format!("wait {src} {dst} {tag} has nothing to wait for: {why} (a wait names an earlier isend's or irecv's source, destination and tag)"),
                    ));
                };
                self.push(c, OpKind::Wait { req });
                self.state(r).free_handles.push(req);
            }
            Action::Test { src, dst, tag } => {
                // A test of a request that is not pending does nothing (as in SimGrid); a
                // tested request stays pending for a later wait.
                let state = self.state(r);
                let front = state
                    .requests
                    .iter()
                    .find(|(k, _)| *k == (src, dst, tag))
                    .and_then(|(_, q)| q.front().copied());
                if let Some(req) = front {
                    self.push(c, OpKind::Test { req });
                }
            }
            Action::WaitAll => self.wait_all(c),
            Action::SendRecv {
                send,
                dst,
                recv,
                src,
                dt1,
                dt2,
            } => {
                let ss = self.bytes(c, send, dt1, at(2))?;
                let rs = self.bytes(c, recv, dt2, at(4))?;
                // Two requests of the call's own, waited for at once (SimGrid's tags are 0).
                let a = self.message(c, true, dst, ss, 0, true);
                let b = self.message(c, false, src, rs, 0, true);
                let list = self.prog.req_list(&[a, b]);
                self.push(c, OpKind::WaitAll { list, count: 2 });
                self.state(r).free_handles.extend([b, a]);
            }
            Action::Compute { flops } => self.flops(c, flops, at(2))?,
            Action::Sleep { seconds } => {
                let ps = (seconds * PS_PER_S).round();
                if ps >= 1.0 {
                    self.push(c, OpKind::Compute { ps: ps as Ps });
                }
            }
            // Collectives: `collective` took them.
            _ => {}
        }
        Ok(())
    }

    /// A collective action, added to its rank; any other action is given back.
    fn collective<'w>(
        &mut self,
        c: &Ctx,
        action: Action,
        at: &dyn Fn(usize) -> Word<'w>,
    ) -> Result<Option<Action>> {
        match action {
            Action::Barrier => self.coll(c, "barrier", 0, 0, Vec::new()),
            Action::Bcast { count, root, dt } => {
                let size = self.bytes(c, count, dt, at(2))?;
                self.coll(c, "bcast", size, root, Vec::new());
            }
            Action::Reduce {
                count,
                flops,
                root,
                dt,
            } => {
                let size = self.bytes(c, count, dt, at(2))?;
                self.coll(c, "reduce", size, root, Vec::new());
                self.flops(c, flops, at(3))?;
            }
            Action::Allreduce { count, flops, dt } => {
                let size = self.bytes(c, count, dt, at(2))?;
                self.coll(c, "allreduce", size, 0, Vec::new());
                self.flops(c, flops, at(3))?;
            }
            Action::Scan {
                exclusive,
                count,
                flops,
                dt,
            } => {
                let size = self.bytes(c, count, dt, at(2))?;
                let kind = if exclusive { "exscan" } else { "scan" };
                self.coll(c, kind, size, 0, Vec::new());
                self.flops(c, flops, at(3))?;
            }
            Action::Alltoall { send, dt1, .. } => {
                let size = self.bytes(c, send, dt1, at(2))?;
                self.coll(c, "alltoall", size, 0, Vec::new());
            }
            Action::Gather {
                all,
                send,
                root,
                dt1,
                ..
            } => {
                let size = self.bytes(c, send, dt1, at(2))?;
                let kind = if all { "allgather" } else { "gather" };
                self.coll(c, kind, size, root, Vec::new());
            }
            Action::Scatter {
                recv, root, dt2, ..
            } => {
                let size = self.bytes(c, recv, dt2, at(3))?;
                self.coll(c, "scatter", size, root, Vec::new());
            }
            Action::Gatherv {
                all,
                send,
                recvcounts,
                root,
                dt1,
                dt2,
            } => {
                let sizes = self.all_bytes(c, &recvcounts, dt2, at(3))?;
                if all {
                    self.coll(c, "allgatherv", total(&sizes), 0, sizes);
                } else {
                    let size = self.bytes(c, send, dt1, at(2))?;
                    self.coll(c, "gatherv", size, root, sizes);
                }
            }
            Action::Scatterv {
                sendcounts,
                recv,
                root,
                dt1,
                dt2,
            } => {
                let sizes = self.all_bytes(c, &sendcounts, dt1, at(2))?;
                let size = self.bytes(c, recv, dt2, at(2 + sendcounts.len()))?;
                self.coll(c, "scatterv", size, root, sizes);
            }
            Action::ReduceScatter {
                recvcounts,
                flops,
                dt,
            } => {
                let sizes = self.all_bytes(c, &recvcounts, dt, at(2))?;
                self.coll(c, "reduce_scatter", total(&sizes), 0, sizes);
                self.flops(c, flops, at(2 + recvcounts.len()))?;
            }
            Action::Alltoallv {
                sendcounts,
                recvcounts,
                dt1,
                dt2,
            } => {
                let mut sizes = self.all_bytes(c, &sendcounts, dt1, at(3))?;
                let sent = total(&sizes);
                sizes.extend(self.all_bytes(c, &recvcounts, dt2, at(4 + sendcounts.len()))?);
                self.coll(c, "alltoallv", sent, 0, sizes);
            }
            other => return Ok(Some(other)),
        }
        Ok(None)
    }

    /// Ends every rank: the requests still pending are waited for (as SimGrid's replay
    /// does after a rank's last action).
    pub fn finish(mut self) -> (S, TraceSummary) {
        match self.one_rank {
            Some(r) => self.end_rank(r),
            None => (0..self.ranks.len() as u32).for_each(|r| self.end_rank(r)),
        }
        (self.prog, self.summary)
    }

    /// Ends rank `r`: its pending requests are waited for after its last action.
    pub fn end_rank(&mut self, r: u32) {
        if let Some(loc) = self.state(r).last {
            let file = FileText::whole("", "");
            let c = Ctx {
                file: &file,
                loc,
                rank: r,
            };
            self.wait_all(&c);
        }
    }

    fn push(&mut self, c: &Ctx, kind: OpKind) {
        self.prog.push(c.rank, Op { kind, loc: c.loc });
    }

    /// Bytes of `count` elements of `dt` (the rank's default when not given).
    fn bytes(&self, c: &Ctx, count: u64, dt: Dt, word: Word) -> Result<u64> {
        let size = dt.unwrap_or(if self.ranks[self.slot(c.rank)].double {
            8
        } else {
            1
        });
        count.checked_mul(size).ok_or_else(|| {
            c.file.error(
                word,
                "size",
                format!("{count} elements of {size} bytes do not fit in 64 bits"),
            )
        })
    }

    fn all_bytes(&self, c: &Ctx, counts: &[u64], dt: Dt, first: Word) -> Result<Vec<u64>> {
        counts
            .iter()
            .map(|&n| self.bytes(c, n, dt, first))
            .collect()
    }

    /// A message; a non-blocking one (`nonblocking`) gets a request, which it returns.
    fn message(
        &mut self,
        c: &Ctx,
        send: bool,
        peer: u32,
        size: u64,
        tag: i64,
        nonblocking: bool,
    ) -> u32 {
        if send {
            self.summary.p2p_bytes = self.summary.p2p_bytes.saturating_add(size);
        }
        let req = nonblocking.then(|| match self.state(c.rank).free_handles.pop() {
            Some(h) => h,
            None => self.prog.new_handle(c.rank),
        });
        let m = Message {
            send,
            peer: i64::from(peer),
            size,
            tag,
            comm: 0,
            req,
        };
        self.push(c, m.op());
        req.unwrap_or(crate::ids::NONE)
    }

    /// A message whose request (non-blocking) is kept by its source, destination and tag
    /// until a wait, test or waitall names it.
    fn message_kept(
        &mut self,
        c: &Ctx,
        send: bool,
        peer: u32,
        size: u64,
        tag: i64,
        nonblocking: bool,
    ) {
        let h = self.message(c, send, peer, size, tag, nonblocking);
        if nonblocking {
            let me = i64::from(c.rank);
            let key = if send {
                (me, i64::from(peer), tag)
            } else {
                (i64::from(peer), me, tag)
            };
            self.state(c.rank).queue(key).push_back(h);
        }
    }

    fn wait_all(&mut self, c: &Ctx) {
        let state = self.state(c.rank);
        let hs: Vec<u32> = state
            .requests
            .drain(..)
            .flat_map(|(_, q)| q.into_iter())
            .collect();
        if !hs.is_empty() {
            let list = self.prog.req_list(&hs);
            self.push(
                c,
                OpKind::WaitAll {
                    list,
                    count: hs.len() as u32,
                },
            );
            self.state(c.rank).free_handles.extend(hs.iter().rev());
        }
    }

    /// Compute for `flops` at `--flops`, scaled by `--compute-scale`.
    fn flops(&mut self, c: &Ctx, flops: f64, word: Word) -> Result<()> {
        if flops == 0.0 {
            return Ok(());
        }
        let Some(rate) = self.opts.flops else {
            return Err(c.file.error(
                word,
                "flops",
                format!(
                    "{flops} flops need a host speed to become time: give --flops RATE (e.g. --flops 1Gf, SimGrid's notation, or flop/s; flops=RATE in Python)"
                ),
            ));
        };
        let ps = (flops / rate * PS_PER_S * self.opts.compute_scale).round();
        if !ps.is_finite() || ps >= u64::MAX as f64 {
            return Err(c.file.error(
                word,
                "flops",
                format!("{flops} flops at {rate} flop/s is too long a time"),
            ));
        }
        let ps = ps as Ps;
        if ps > 0 && ps >= self.opts.compute_threshold {
            self.push(c, OpKind::Compute { ps });
        }
        Ok(())
    }

    fn coll(&mut self, c: &Ctx, kind: &str, size: u64, root: u32, sizes: Vec<u64>) {
        self.summary.collective_calls += 1;
        let call = self.prog.coll_call(CollCall {
            kind: kind.to_string(),
            algorithm: String::new(),
            transport: String::new(),
            size,
            root,
            segment: 0,
            comm: 0,
            sizes,
        });
        self.push(c, OpKind::Coll { call });
    }
}

/// Where the current action is.
struct Ctx<'a, 'b> {
    file: &'a FileText<'b>,
    loc: SrcLoc,
    rank: u32,
}

/// The bytes of all blocks (saturating: the run's memory check refuses such a call).
fn total(sizes: &[u64]) -> u64 {
    sizes.iter().fold(0u64, |a, &b| a.saturating_add(b))
}

/// Converts the lines of `t`, the file (or part of the file) of rank `rank`.
pub fn convert_lines<S: Sink>(
    conv: &mut Converter<S>,
    t: &FileText,
    rank: Option<u32>,
    ranks: u32,
) -> Result<()> {
    let lines = t.lines()?;
    only_its_rank(t, rank, &lines)?;
    for l in &lines {
        let action = crate::frontends::ti::actions::parse(t, l, ranks)?;
        conv.line(t, l, action)?;
    }
    Ok(())
}

/// Every line of rank `rank`'s own file (`None`: a shared file) is for that rank.
pub fn only_its_rank(t: &FileText, rank: Option<u32>, lines: &[Line]) -> Result<()> {
    if let (Some(r), Some(l)) = (rank, lines.iter().find(|l| Some(l.rank) != rank)) {
        return Err(t.error(
            l.words[0],
            "rank",
            format!(
                "a line for rank {} in rank {r}'s trace file (the list gives one file per rank, in rank order)",
                l.rank
            ),
        ));
    }
    Ok(())
}
