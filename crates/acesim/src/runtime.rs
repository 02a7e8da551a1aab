//! Ranks executing their programs against the network: RDMA put/get semantics (NSIM-ACE),
//! polling, completion, compute and regions.
//!
//! A put: the rank pays the library overhead `T_pp`, then the NIC DMAs the data out
//! (FIFO, one message per NIC at a time) and the packets cross the network; when the last
//! packet is in the target's memory (`T_end`) the put has *landed* (a `poll` there may
//! return) and the target NIC sends a control packet back; the put *completes* `T_pp`
//! after that control packet arrives. A get: after `T_pp` the requester's NIC sends a
//! control packet; on arrival the remote NIC DMAs the data out and sends it; the get
//! completes `T_pp` after its last packet is in the requester's memory.

use crate::engine::EventQueue;
use crate::sim::Event;

type Queue = EventQueue<Event>;
use crate::network::{Network, Notice};
use crate::program::{Op, OpKind, Program, NONE};
use crate::units::Ps;
use std::collections::HashMap;
use std::fmt;

#[derive(Debug, Clone, Copy)]
pub enum RtEvent {
    /// A rank's compute or overhead is over: run its next operations.
    Resume { rank: u32 },
    /// The library overhead of a transfer is paid: hand it to the NIC.
    Submit { xfer: u32 },
    /// The completion overhead of a transfer is paid.
    Finish { xfer: u32 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XferKind {
    Put,
    Get,
}

/// One put or get and the times of its phases (picoseconds; `None` = did not happen).
#[derive(Debug, Clone)]
pub struct Xfer {
    pub kind: XferKind,
    /// The rank that issued it.
    pub rank: u32,
    /// Source and destination of the data.
    pub src_rank: u32,
    pub dst_rank: u32,
    pub size: u64,
    pub tag: i64,
    pub src_nic: u32,
    pub dst_nic: u32,
    pub issue: Ps,
    pub dma_start: Option<Ps>,
    /// Last byte in the destination's memory (`T_end`).
    pub landed: Option<Ps>,
    pub complete: Option<Ps>,
}

// Token parts: which leg of a transfer a network message is.
const PUT_DATA: u64 = 0;
const PUT_ACK: u64 = 1;
const GET_REQUEST: u64 = 2;
const GET_DATA: u64 = 3;

fn token(xfer: u32, part: u64) -> u64 {
    ((xfer as u64) << 2) | part
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// Running, or waiting for a scheduled Resume.
    No,
    Tag(i64),
    Xfer(u32),
}

#[derive(Debug, Clone)]
struct RankState {
    pc: usize,
    wait: Wait,
    finish: Option<Ps>,
    nic_next: u32,
    /// Handle index -> transfer id.
    handles: Vec<u32>,
    /// Landed puts not yet consumed by a poll, by tag.
    landed: HashMap<i64, u32>,
    regions: Vec<(u32, Ps)>,
}

/// A closed region on one rank.
#[derive(Debug, Clone)]
pub struct RegionRecord {
    pub rank: u32,
    pub region: u32,
    pub begin: Ps,
    pub end: Ps,
}

/// Why a run could not finish.
#[derive(Debug, Clone)]
pub struct DeadlockReport {
    pub time: Ps,
    /// (rank, what it waits for, operation, source location)
    pub blocked: Vec<(u32, String, String, String)>,
    pub network: Option<String>,
}

impl fmt::Display for DeadlockReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "deadlock: the program can never finish ({} ranks blocked at {})",
            self.blocked.len(),
            crate::units::format_time(self.time)
        )?;
        for (rank, why, op, loc) in self.blocked.iter().take(50) {
            writeln!(f, "  rank {rank}: `{op}` at {loc} waits for {why}")?;
        }
        if self.blocked.len() > 50 {
            writeln!(f, "  ... and {} more ranks", self.blocked.len() - 50)?;
        }
        if let Some(n) = &self.network {
            writeln!(f, "  network: {n}")?;
        }
        Ok(())
    }
}

pub struct Runtime {
    pub program: Program,
    overhead: Ps,
    nics_per_node: u32,
    ranks: Vec<RankState>,
    pub xfers: Vec<Xfer>,
    pub regions: Vec<RegionRecord>,
    /// Node of each rank (one rank per node in this version).
    rank_node: Vec<u32>,
    pub last_activity: Ps,
}

impl Runtime {
    pub fn new(program: Program, overhead: Ps, nics_per_node: u32) -> Runtime {
        let ranks = (0..program.ranks as usize)
            .map(|r| RankState {
                pc: 0,
                wait: Wait::No,
                finish: None,
                nic_next: 0,
                handles: vec![NONE; program.handles[r] as usize],
                landed: HashMap::new(),
                regions: Vec::new(),
            })
            .collect();
        let rank_node = (0..program.ranks).collect();
        Runtime {
            program,
            overhead,
            nics_per_node,
            ranks,
            xfers: Vec::new(),
            regions: Vec::new(),
            rank_node,
            last_activity: 0,
        }
    }

    pub fn rank_finish(&self, rank: u32) -> Option<Ps> {
        self.ranks[rank as usize].finish
    }

    /// Starts every rank at time 0.
    pub fn start(&mut self, q: &mut Queue) {
        for rank in 0..self.program.ranks {
            q.schedule(0, Event::Rt(RtEvent::Resume { rank }));
        }
    }

    pub fn handle(&mut self, q: &mut Queue, net: &mut Network, now: Ps, ev: RtEvent) {
        match ev {
            RtEvent::Resume { rank } => self.run(q, net, now, rank),
            RtEvent::Submit { xfer } => self.submit(q, net, now, xfer),
            RtEvent::Finish { xfer } => self.finish_xfer(q, now, xfer),
        }
    }

    fn nic_of(&self, rank: u32, index: u32) -> u32 {
        self.rank_node[rank as usize] * self.nics_per_node + index
    }

    /// Runs `rank` from its current operation until it blocks, computes or ends.
    fn run(&mut self, q: &mut Queue, net: &mut Network, now: Ps, rank: u32) {
        let r = rank as usize;
        loop {
            let Some(op) = self.program.ops[r].get(self.ranks[r].pc).copied() else {
                self.ranks[r].finish = Some(now);
                self.last_activity = self.last_activity.max(now);
                return;
            };
            match op.kind {
                OpKind::Compute { ps } => {
                    self.ranks[r].pc += 1;
                    if ps > 0 {
                        q.schedule(now + ps, Event::Rt(RtEvent::Resume { rank }));
                        return;
                    }
                }
                OpKind::Put {
                    dst,
                    size,
                    tag,
                    handle,
                    nic,
                } => {
                    if self.issue(
                        q,
                        net,
                        now,
                        rank,
                        XferKind::Put,
                        dst,
                        size,
                        tag,
                        handle,
                        nic,
                    ) {
                        return;
                    }
                }
                OpKind::Get {
                    src,
                    size,
                    handle,
                    nic,
                } => {
                    if self.issue(q, net, now, rank, XferKind::Get, src, size, 0, handle, nic) {
                        return;
                    }
                }
                OpKind::Poll { tag } => {
                    let st = &mut self.ranks[r];
                    match st.landed.get_mut(&tag) {
                        Some(n) if *n > 0 => {
                            *n -= 1;
                            st.pc += 1;
                        }
                        _ => {
                            st.wait = Wait::Tag(tag);
                            return;
                        }
                    }
                }
                OpKind::Complete { handle } => {
                    let x = self.ranks[r].handles[handle as usize];
                    if self.xfers[x as usize].complete.is_some() {
                        self.ranks[r].pc += 1;
                    } else {
                        self.ranks[r].wait = Wait::Xfer(x);
                        return;
                    }
                }
                OpKind::RegionBegin { region } => {
                    self.ranks[r].regions.push((region, now));
                    self.ranks[r].pc += 1;
                }
                OpKind::RegionEnd { region } => {
                    let st = &mut self.ranks[r];
                    st.pc += 1;
                    if let Some((open, begin)) = st.regions.pop() {
                        debug_assert_eq!(open, region, "schedule reader checks nesting");
                        self.regions.push(RegionRecord {
                            rank,
                            region,
                            begin,
                            end: now,
                        });
                    }
                }
            }
        }
    }

    /// Issues a put (to `peer`) or a get (from `peer`). Returns true when the rank must wait
    /// for its library overhead before going on.
    #[allow(clippy::too_many_arguments)]
    fn issue(
        &mut self,
        q: &mut Queue,
        net: &mut Network,
        now: Ps,
        rank: u32,
        kind: XferKind,
        peer: u32,
        size: u64,
        tag: i64,
        handle: u32,
        nic: u32,
    ) -> bool {
        let st = &mut self.ranks[rank as usize];
        let index = if nic == NONE {
            // Round-robin over the node's NICs.
            let i = st.nic_next % self.nics_per_node;
            st.nic_next += 1;
            i
        } else {
            nic % self.nics_per_node
        };
        st.pc += 1;
        let (src_rank, dst_rank) = match kind {
            XferKind::Put => (rank, peer),
            XferKind::Get => (peer, rank),
        };
        let id = self.xfers.len() as u32;
        self.xfers.push(Xfer {
            kind,
            rank,
            src_rank,
            dst_rank,
            size,
            tag,
            src_nic: self.nic_of(src_rank, index),
            dst_nic: self.nic_of(dst_rank, index),
            issue: now,
            dma_start: None,
            landed: None,
            complete: None,
        });
        if handle != NONE {
            self.ranks[rank as usize].handles[handle as usize] = id;
        }
        if self.overhead == 0 {
            self.submit(q, net, now, id);
            false
        } else {
            q.schedule(now + self.overhead, Event::Rt(RtEvent::Submit { xfer: id }));
            q.schedule(now + self.overhead, Event::Rt(RtEvent::Resume { rank }));
            true
        }
    }

    fn submit(&mut self, q: &mut Queue, net: &mut Network, now: Ps, xfer: u32) {
        let x = &self.xfers[xfer as usize];
        match x.kind {
            XferKind::Put => {
                net.send_data(q, now, x.src_nic, x.dst_nic, x.size, token(xfer, PUT_DATA))
            }
            XferKind::Get => {
                net.send_control(q, now, x.dst_nic, x.src_nic, token(xfer, GET_REQUEST))
            }
        }
    }

    /// Wakes `rank` if it waits for `what`.
    fn wake_if(&mut self, q: &mut Queue, now: Ps, rank: u32, what: Wait) -> bool {
        let st = &mut self.ranks[rank as usize];
        if st.wait == what {
            st.wait = Wait::No;
            q.schedule(now, Event::Rt(RtEvent::Resume { rank }));
            true
        } else {
            false
        }
    }

    fn finish_xfer(&mut self, q: &mut Queue, now: Ps, xfer: u32) {
        self.xfers[xfer as usize].complete = Some(now);
        self.last_activity = self.last_activity.max(now);
        let rank = self.xfers[xfer as usize].rank;
        self.wake_if(q, now, rank, Wait::Xfer(xfer));
    }

    /// Reacts to what the network reports.
    pub fn on_notice(&mut self, q: &mut Queue, net: &mut Network, now: Ps, notice: Notice) {
        let tok = match notice {
            Notice::TxStarted { token }
            | Notice::TxDone { token }
            | Notice::Landed { token }
            | Notice::ControlArrived { token } => token,
        };
        let xfer = (tok >> 2) as u32;
        let part = tok & 3;
        match (notice, part) {
            (Notice::TxStarted { .. }, _) => self.xfers[xfer as usize].dma_start = Some(now),
            (Notice::TxDone { .. }, _) => {}
            (Notice::Landed { .. }, PUT_DATA) => {
                let x = &mut self.xfers[xfer as usize];
                x.landed = Some(now);
                let (dst_rank, tag, src_nic, dst_nic) = (x.dst_rank, x.tag, x.src_nic, x.dst_nic);
                if self.wake_if(q, now, dst_rank, Wait::Tag(tag)) {
                    // The woken poll consumes this put.
                    self.ranks[dst_rank as usize].pc += 1;
                } else {
                    *self.ranks[dst_rank as usize].landed.entry(tag).or_insert(0) += 1;
                }
                net.send_control(q, now, dst_nic, src_nic, token(xfer, PUT_ACK));
            }
            (Notice::ControlArrived { .. }, PUT_ACK) | (Notice::Landed { .. }, GET_DATA) => {
                if part == GET_DATA {
                    self.xfers[xfer as usize].landed = Some(now);
                }
                if self.overhead == 0 {
                    self.finish_xfer(q, now, xfer);
                } else {
                    q.schedule(now + self.overhead, Event::Rt(RtEvent::Finish { xfer }));
                }
            }
            (Notice::ControlArrived { .. }, GET_REQUEST) => {
                let x = &self.xfers[xfer as usize];
                net.send_data(q, now, x.src_nic, x.dst_nic, x.size, token(xfer, GET_DATA));
            }
            _ => {}
        }
    }

    /// `Some(report)` if some rank has not finished.
    pub fn deadlock(&self, now: Ps, net: &Network) -> Option<DeadlockReport> {
        let mut blocked = Vec::new();
        for (r, st) in self.ranks.iter().enumerate() {
            if st.finish.is_some() {
                continue;
            }
            let op: Option<&Op> = self.program.ops[r].get(st.pc);
            let (op_text, loc) = op.map_or(("(end)".to_string(), "-".to_string()), |o| {
                (
                    self.program.describe_op(o),
                    self.program.describe_loc(o.loc),
                )
            });
            let why = match st.wait {
                Wait::Tag(t) => format!("a put with tag {t} that no rank sends (or that was consumed by an earlier poll)"),
                Wait::Xfer(x) => {
                    let x = &self.xfers[x as usize];
                    format!("its {:?} to/from rank {} to complete", x.kind, if x.kind == XferKind::Put { x.dst_rank } else { x.src_rank })
                }
                Wait::No => "an event that never came".to_string(),
            };
            blocked.push((r as u32, why, op_text, loc));
        }
        if blocked.is_empty() && net.live_packets == 0 {
            return None;
        }
        Some(DeadlockReport {
            time: now,
            blocked,
            network: net.stuck_summary(),
        })
    }

    /// Puts that landed but were never polled, per (rank, tag).
    pub fn unpolled(&self) -> Vec<(u32, i64, u32)> {
        let mut v: Vec<(u32, i64, u32)> = self
            .ranks
            .iter()
            .enumerate()
            .flat_map(|(r, st)| {
                st.landed
                    .iter()
                    .filter(|(_, &n)| n > 0)
                    .map(move |(&t, &n)| (r as u32, t, n))
            })
            .collect();
        v.sort_unstable();
        v
    }
}
