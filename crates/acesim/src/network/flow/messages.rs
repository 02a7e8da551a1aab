//! A message's life in the flow model.
//!
//! It waits for its NIC's send DMA engine (one message at a time, in order). When its DMA
//! starts, its timing alone on its route is computed (`pipeline`), the injection link busy
//! with the NIC's earlier messages as long as they need it alone: when its send DMA is done,
//! when it lands, and the work of its bottleneck. Its flow starts when the NIC's previous
//! message has done its work (a NIC's packets leave in order, one message after the other).
//! While it moves it is a flow of the max-min solver: at rate `r` against `r*` alone, its
//! work advances `r / r*` picoseconds a picosecond. Each milestone comes when the work
//! reaches the point it had alone, plus the time it had alone past the end of the work (the
//! last packet's way to memory). Alone, every time is the packet model's; shared, the work
//! stretches.

use super::pipeline::Shape;
use super::state::*;
use crate::engine::Schedule;
use crate::ids::NONE;
use crate::network::interface::Notice;
use crate::units::Ps;

impl FlowNetwork {
    /// A new message of `kind`, queued on its NIC's send engine. A queued message is only
    /// its request until its DMA starts: a NIC may hold thousands. (Control packets, which
    /// need no DMA, are not messages: `control`.)
    pub(super) fn send_message(
        &mut self,
        q: &mut impl Schedule<FlowEvent>,
        now: Ps,
        (src_nic, dst_nic): (u32, u32),
        payload: u64,
        token: u64,
        kind: Kind,
    ) {
        self.active += 1;
        let request = Pending {
            token,
            dst_nic,
            payload,
            kind,
        };
        if self.tx_busy[src_nic as usize] {
            self.tx_queue.push_back(src_nic, request);
            return;
        }
        self.tx_busy[src_nic as usize] = true;
        let id = self.new_message(now, src_nic, request);
        self.start(q, now, id);
    }

    /// The message of `request` from `src_nic`, in a free slot.
    fn new_message(&mut self, now: Ps, src_nic: u32, request: Pending) -> u32 {
        let Pending {
            token,
            dst_nic,
            payload,
            kind,
        } = request;
        let packets = payload.div_ceil(self.params.max_payload).max(1);
        let wire = payload + packets * self.params.header;
        let m = Message {
            token,
            kind,
            src_nic,
            dst_nic,
            payload,
            packets,
            wire,
            route_at: 0,
            route_len: 0,
            hops: 0,
            minimal: true,
            timing: Default::default(),
            flow: NONE,
            alone: 0.0,
            rate: 0.0,
            progress: 0.0,
            updated: now,
            started: now,
            activated: now,
            tx_done: false,
            version: 0,
        };
        // A slot's version goes on from its last message's: a `Reach` that message left
        // behind (its rate changed since) must not match the new message.
        let free = self.free_messages.pop();
        let version = free.map_or(0, |id| self.messages[id as usize].version.wrapping_add(1));
        crate::ids::place(&mut self.messages, free, Message { version, ..m })
    }

    /// Message `m` starts: its first DMA now.
    fn start(&mut self, q: &mut impl Schedule<FlowEvent>, now: Ps, m: u32) {
        let (src, dst, kind) = {
            let msg = &self.messages[m as usize];
            (msg.src_nic, msg.dst_nic, msg.kind)
        };
        self.notices.push(Notice::TxStarted {
            token: self.messages[m as usize].token,
        });
        let mut links = std::mem::take(&mut self.route_links);
        let route = self.route(src, dst, &mut links);
        let (at, len) = self.store_route(&links);
        let p = &self.params;
        let msg = &self.messages[m as usize];
        let shape = Shape {
            packets: msg.packets,
            full: msg.payload.min(p.max_payload),
            last: msg.payload - (msg.packets - 1) * p.max_payload,
            header: p.header,
            dma: match kind {
                Kind::Data => Some(self.dma_rate()),
                Kind::Injected => None,
            },
            queue: p.injection_queue,
            rx_dma: kind == Kind::Data,
            link_busy: self.inject_free[src as usize].saturating_sub(now),
        };
        let topo = &self.topo;
        let classes = links.iter().map(|&l| topo.link_kind(l));
        let t = self.timings.timing(&shape, classes, &self.kinds);
        self.count_route(self.messages[m as usize].wire, &links, &shape);
        self.route_links = links;
        let msg = &mut self.messages[m as usize];
        (msg.route_at, msg.route_len, msg.hops, msg.minimal) = (at, len, route.hops, route.minimal);
        msg.timing = t;
        msg.started = now;
        self.inject_free[src as usize] = now + t.injected;
        if self.moving[src as usize] == NONE {
            self.activate(q, now, m);
        } else {
            // Its DMA runs while the NIC's earlier message moves: it ends as it would alone.
            self.messages[m as usize].tx_done = true;
            q.at(
                now + t.tx_done,
                FlowEvent::Deliver {
                    msg: m,
                    what: Milestone::TxDone,
                },
            );
            self.waiting.push_back(src, m);
        }
    }

    /// Message `m`'s flow starts: it shares its resources from now on.
    fn activate(&mut self, q: &mut impl Schedule<FlowEvent>, now: Ps, m: u32) {
        if self.is_one_packet(m) {
            self.send_packet(q, now, m);
            return;
        }
        let src = self.messages[m as usize].src_nic;
        let mut uses = std::mem::take(&mut self.uses);
        self.uses_of(m, &mut uses);
        let msg = &mut self.messages[m as usize];
        msg.activated = now;
        msg.updated = now;
        msg.progress = 0.0;
        let t = msg.timing;
        if t.work == 0 || uses.is_empty() {
            // Nothing to share (a zero-byte message between two NICs of a node): its
            // milestones are those it has alone, and the NIC's next message may move.
            if !msg.tx_done {
                msg.tx_done = true;
                let at = (msg.started + t.tx_done).max(now);
                q.at(
                    at,
                    FlowEvent::Deliver {
                        msg: m,
                        what: Milestone::TxDone,
                    },
                );
            }
            let at = (msg.started + t.landed).max(now);
            q.at(
                at,
                FlowEvent::Deliver {
                    msg: m,
                    what: Milestone::Landed,
                },
            );
            self.uses = uses;
            return;
        }
        let (flow, alone) = self.solver.add_flow_alone(&uses);
        self.uses = uses;
        if self.flow_message.len() <= flow as usize {
            self.flow_message.resize(flow as usize + 1, NONE);
        }
        self.flow_message[flow as usize] = m;
        let msg = &mut self.messages[m as usize];
        (msg.flow, msg.alone, msg.rate) = (flow, alone, 0.0);
        self.moving[src as usize] = m;
        let rate = self.solver.rate(flow);
        if rate > 0.0 {
            // It fits where it goes: its rate is set, nobody else's changes.
            self.messages[m as usize].rate = rate;
            self.schedule_reach(q, now, m);
        }
        if self.solver.is_dirty() {
            self.solve_soon();
        }
    }

    /// The NIC's waiting messages start, up to the first one that moves as a flow.
    fn next_flow(&mut self, q: &mut impl Schedule<FlowEvent>, now: Ps, nic: u32) {
        self.moving[nic as usize] = NONE;
        while self.moving[nic as usize] == NONE {
            let Some(next) = self.waiting.pop_front(nic) else {
                break;
            };
            self.activate(q, now, next);
        }
    }

    /// The payload DMA rate, or the memory bandwidth when that is lower.
    pub(super) fn dma_rate(&self) -> u64 {
        let d = self.params.dma_rate;
        self.params.memory_bandwidth.map_or(d, |m| m.min(d))
    }

    /// Keeps a route's links for the message that takes it (in a slot of that length
    /// freed by an earlier message, else at the end).
    fn store_route(&mut self, links: &[u32]) -> (u32, u32) {
        let len = links.len() as u32;
        if let Some(at) = self.free_routes.get_mut(len as usize).and_then(Vec::pop) {
            self.routes[at as usize..(at + len) as usize].copy_from_slice(links);
            return (at, len);
        }
        let at = self.routes.len() as u32;
        self.routes.extend_from_slice(links);
        (at, len)
    }

    /// What a message adds to the statistics of the links it crosses.
    pub(super) fn count_route(&mut self, wire: u64, links: &[u32], shape: &Shape) {
        let n = shape.packets.max(1);
        let key = (n, shape.full, shape.last, shape.header);
        // A route's links come in runs of one kind (the network's between the NIC links),
        // and a run's messages in a few shapes: the busy time is looked up once a run.
        let mut last: Option<(u8, Ps)> = None;
        for &l in links {
            let kind = self.topo.link_kind(l);
            let busy = match last {
                Some((k, busy)) if k == kind => busy,
                _ => {
                    let busy = self.busy_times.busy(kind, key, &self.kinds);
                    last = Some((kind, busy));
                    busy
                }
            };
            let s = &mut self.link_counts[l as usize];
            s.bytes += wire;
            s.packets += n;
            s.busy_ps += busy;
        }
        self.stats.counters.packet_hops += n * links.len() as u64;
        if !links.is_empty() {
            self.stats.counters.bytes_injected += wire;
        }
    }

    /// A solve once this picosecond's events are all handled (`Network::at_picosecond_end`):
    /// one for all of its changes.
    fn solve_soon(&mut self) {
        self.solve_due = true;
    }

    /// New rates for the flows the changes reached: each one's work so far is counted at
    /// its old rate, and its next milestone moves.
    pub(super) fn on_solve(&mut self, q: &mut impl Schedule<FlowEvent>, now: Ps) {
        self.solve_due = false;
        if !self.solver.is_dirty() {
            return;
        }
        let mut changed = std::mem::take(&mut self.changed);
        self.solver.solve(&mut changed);
        // In flow order: which of two messages ending at the same picosecond is handled
        // first must not depend on how the solver searched.
        changed.sort_unstable();
        if let Some(c) = &mut self.coupling {
            c.start();
        }
        for &f in &changed {
            let m = self.flow_message[f as usize];
            let rate = self.solver.rate(f);
            let msg = &mut self.messages[m as usize];
            // Work is counted again from now only when the rate changes: a message's
            // arithmetic follows its own rates, not which flows a solve happened to reach.
            if (rate - msg.rate).abs() <= msg.rate * SAME_RATE {
                continue;
            }
            msg.progress = advance(msg, now);
            msg.updated = now;
            msg.rate = rate;
            msg.version = msg.version.wrapping_add(1);
            if let Some(c) = &mut self.coupling {
                c.changed(msg.src_nic, msg.dst_nic);
            }
            self.schedule_reach(q, now, m);
        }
        if let Some(c) = &mut self.coupling {
            c.end(now);
        }
        self.changed = changed;
        if self.checks {
            self.check_rates();
        }
    }

    /// The event of message `m`'s next milestone of work, at its current rate.
    fn schedule_reach(&mut self, q: &mut impl Schedule<FlowEvent>, now: Ps, m: u32) {
        let msg = &self.messages[m as usize];
        let (target, _) = next_target(msg);
        let left = (target - msg.progress).max(0.0);
        let dt = if msg.rate >= msg.alone {
            // At the rate it has alone the work advances a picosecond a picosecond.
            left.ceil()
        } else if msg.rate > 0.0 {
            (left * msg.alone / msg.rate).ceil()
        } else {
            return; // stopped: a later solve moves it
        };
        let at = now + dt as Ps;
        q.at(
            at,
            FlowEvent::Reach {
                msg: m,
                version: msg.version,
            },
        );
    }

    /// Message `m` reached its milestone of work (if the event is still its latest).
    pub(super) fn on_reach(
        &mut self,
        q: &mut impl Schedule<FlowEvent>,
        now: Ps,
        m: u32,
        version: u32,
    ) {
        let msg = &mut self.messages[m as usize];
        if msg.version != version || msg.flow == NONE {
            return;
        }
        let (target, extra) = next_target(msg);
        msg.progress = target;
        msg.updated = now;
        if !msg.tx_done {
            msg.tx_done = true;
            q.at(
                now + extra.tx,
                FlowEvent::Deliver {
                    msg: m,
                    what: Milestone::TxDone,
                },
            );
            if target < msg.timing.work as f64 {
                // The send DMA is done before the work: on to the end of the work.
                self.schedule_reach(q, now, m);
                return;
            }
        }
        // The work is done: the rest of the way is latency, and the resources are free.
        let flow = msg.flow;
        let (src, activated) = (msg.src_nic, msg.activated);
        msg.flow = NONE;
        q.at(
            now + extra.landed,
            FlowEvent::Deliver {
                msg: m,
                what: Milestone::Landed,
            },
        );
        self.solver.remove_flow(flow);
        self.flow_message[flow as usize] = NONE;
        self.trace_activity(m, activated, now);
        if self.solver.is_dirty() {
            self.solve_soon();
        }
        self.next_flow(q, now, src);
    }

    /// A milestone is due: its notice goes to the runtime.
    pub(super) fn on_deliver(
        &mut self,
        q: &mut impl Schedule<FlowEvent>,
        now: Ps,
        m: u32,
        what: Milestone,
    ) {
        let msg = &self.messages[m as usize];
        let token = msg.token;
        match what {
            Milestone::TxDone => {
                self.notices.push(Notice::TxDone { token });
                let src = msg.src_nic;
                match self.tx_queue.pop_front(src) {
                    Some(next) => {
                        let id = self.new_message(now, src, next);
                        self.start(q, now, id);
                    }
                    None => self.tx_busy[src as usize] = false,
                }
            }
            Milestone::Landed => {
                if self.checks && now < msg.started + msg.timing.landed && self.violation.is_none()
                {
                    self.violation = Some(format!(
                        "flow model: a message of {} bytes landed at {now} ps, before its time alone ({} ps after its DMA started at {} ps)",
                        msg.payload, msg.timing.landed, msg.started
                    ));
                }
                let msg = &self.messages[m as usize];
                let hops = (msg.hops as u64 * msg.packets) as u32;
                self.notices.push(Notice::Landed { token, hops });
                self.count_landed(m);
                self.finish(m);
            }
        }
    }

    /// The NIC statistics of a landed message.
    fn count_landed(&mut self, m: u32) {
        let msg = &self.messages[m as usize];
        if msg.route_len == 0 {
            self.stats.counters.bytes_local += msg.payload;
            return;
        }
        self.stats.counters.bytes_delivered += msg.wire;
        let n = msg.packets;
        let src = &mut self.stats.nics[msg.src_nic as usize];
        src.injected_packets += n;
        src.delivered_packets += n;
        src.hops += msg.hops as u64 * n;
        src.minimal_packets += if msg.minimal { n } else { 0 };
        self.stats.nics[msg.dst_nic as usize].ejected_packets += n;
    }

    /// The message is over: its slot and its route's are free.
    fn finish(&mut self, m: u32) {
        let msg = &self.messages[m as usize];
        let (at, len) = (msg.route_at, msg.route_len as usize);
        if len > 0 {
            if self.free_routes.len() <= len {
                self.free_routes.resize(len + 1, Vec::new());
            }
            self.free_routes[len].push(at);
        }
        self.active -= 1;
        self.free_messages.push(m);
    }

    /// Tracing: the message's links were busy while it moved.
    pub(super) fn trace_activity(&mut self, m: u32, from: Ps, to: Ps) {
        let Some(act) = &mut self.stats.link_activity else {
            return;
        };
        let msg = &self.messages[m as usize];
        for i in msg.route_at..msg.route_at + msg.route_len {
            let a = &mut act[self.routes[i as usize] as usize];
            match a.last_mut() {
                Some(last) if last.1 >= from => last.1 = last.1.max(to),
                _ => a.push((from, to)),
            }
        }
    }

    /// Checks: no resource over its capacity, every flow limited by a full resource on
    /// which no flow is faster.
    fn check_rates(&mut self) {
        if self.violation.is_some() {
            return;
        }
        if let Some((r, load, cap)) = self.solver.overloaded() {
            self.violation = Some(format!(
                "flow model: resource {r} carries {load} bytes/ps, more than its {cap}"
            ));
        } else if let Some(f) = self.solver.unbottlenecked() {
            self.violation = Some(format!(
                "flow model: flow {f} has no bottleneck (a full resource on which no flow is faster)"
            ));
        }
    }
}

/// Relative change of a message's rate below which a solve leaves it as it was: rates
/// solved again in another order differ in their last bits, and a picosecond over a
/// second is 1e-12.
const SAME_RATE: f64 = 1e-12;

/// Work done by now at the message's current rate.
fn advance(msg: &Message, now: Ps) -> f64 {
    let dt = (now - msg.updated) as f64;
    if msg.rate >= msg.alone {
        msg.progress + dt
    } else {
        msg.progress + dt * msg.rate / msg.alone
    }
}

/// Where a message's milestones fall past the end of its work.
struct Extra {
    tx: Ps,
    landed: Ps,
}

/// The work at which the message's next milestone comes (its send DMA's end, if that is
/// still to come and comes before the end of the work, else the end of the work), and how
/// long after the work each milestone comes: what it had alone, counted from when its flow
/// started.
fn next_target(msg: &Message) -> (f64, Extra) {
    let t = msg.timing;
    let waited = msg.activated - msg.started;
    let after_work = |at: Ps| at.saturating_sub(waited).saturating_sub(t.work);
    let extra = Extra {
        tx: after_work(t.tx_done),
        landed: after_work(t.landed),
    };
    let tx = t.tx_done.saturating_sub(waited);
    let target = if !msg.tx_done && tx < t.work {
        tx
    } else {
        t.work
    };
    (target as f64, extra)
}
