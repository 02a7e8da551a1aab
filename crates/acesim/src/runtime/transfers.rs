//! Puts, gets and messages: issued on a NIC, handed to the network, and moved along their
//! protocol as the network reports (RDMA: landed, then acknowledged; messages: eager data,
//! or a request-to-send and a get once the receive is posted).

use super::partition::LOCAL;
use super::state::*;
use crate::engine::Schedule;
use crate::network::{Network, Notice};
use crate::program::NONE;
use crate::units::Ps;

impl Runtime {
    /// NIC index used by `rank` for its next transfer.
    pub(super) fn nic_index(&mut self, rank: u32, nic: u32) -> u32 {
        let nics = self.p.nics_per_node;
        if nic != NONE {
            return nic; // checked against nic.count before the run
        }
        if self.p.nic_by_rank {
            return self.placement.local[rank as usize] % nics;
        }
        let st = &mut self.ranks[rank as usize];
        let i = st.nic_next % nics;
        st.nic_next += 1;
        i
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn new_xfer(
        &mut self,
        now: Ps,
        rank: u32,
        kind: XferKind,
        peer: u32,
        size: u64,
        tag: i64,
        nic: u32,
        ctx: u32,
        op: u32,
    ) -> u32 {
        let (src_rank, dst_rank) = match kind {
            XferKind::Put | XferKind::Msg => (rank, peer),
            XferKind::Get => (peer, rank),
        };
        let index = self.nic_index(rank, nic);
        let nics = self.p.nics_per_node;
        // By rank, each side uses the NIC of its own index on its node.
        let (si, di) = if self.p.nic_by_rank && nic == NONE {
            (
                self.placement.local[src_rank as usize] % nics,
                self.placement.local[dst_rank as usize] % nics,
            )
        } else {
            (index, index)
        };
        let seq = if kind == XferKind::Msg {
            let s = self.seq.entry((src_rank, dst_rank, ctx)).or_default();
            s.sent += 1;
            s.sent - 1
        } else {
            0
        };
        let coll = self.ranks[rank as usize].collective().unwrap_or(NONE);
        let x = Xfer {
            kind,
            rank,
            src_rank,
            dst_rank,
            size,
            tag,
            src_nic: self.placement.node[src_rank as usize] * nics + si,
            dst_nic: self.placement.node[dst_rank as usize] * nics + di,
            issue: now,
            dma_start: Stamp::NOT_YET,
            landed: Stamp::NOT_YET,
            complete: Stamp::NOT_YET,
            ctx,
            seq,
            rendezvous: kind == XferKind::Msg && size > self.p.eager_threshold,
            recv: NONE,
            op,
            coll,
            sender_waited: false,
            receiver_waited: false,
        };
        // A collective step takes the slot of a finished one; the program's own transfers
        // stay in issue order (they are the results' operations) unless none are kept.
        let free = if coll == NONE {
            self.program_transfers += 1;
            self.summary_only.then(|| self.free_xfers.pop()).flatten()
        } else {
            let c = &mut self.colls[coll as usize];
            c.messages += 1;
            c.bytes += size;
            self.free_xfers.pop()
        };
        let id = crate::ids::place(&mut self.xfers, free, x);
        if self.split.is_some() {
            self.placed_xfer(id);
        }
        id
    }

    /// Transfer `id` of a collective (or of the program, when no records are kept) is
    /// retired if it is complete and both its ends are done with it: its record and its
    /// receive's are free for later transfers.
    pub(super) fn try_retire(&mut self, id: u32) {
        if self.keeps(id) {
            return;
        }
        let x = &self.xfers[id as usize];
        if self.is_mirror(id) {
            // The other end's record, here: its receive completed and was waited for (a
            // put's and a get's mirrors retire as their last leg leaves, in `on_notice`).
            if x.kind == XferKind::Msg
                && x.receiver_waited
                && x.recv != NONE
                && self.recvs[x.recv as usize].complete.is_some()
            {
                self.free_recvs.push(x.recv);
                self.retire_named(id);
            }
            return;
        }
        if x.complete.is_none() || !x.sender_waited {
            return;
        }
        if self.name_of(id) != LOCAL {
            // Issued here, its other end elsewhere: the sender's side is all there is here.
            self.retire_named(id);
            return;
        }
        match x.kind {
            // Acknowledged: it has landed, and its target's polls count tags, not records.
            // A get's data is in its issuer's memory; its target holds no record of it.
            XferKind::Put | XferKind::Get => {}
            // Its receive completed and the receiver's wait consumed it: the data is in memory.
            XferKind::Msg if x.receiver_waited && x.recv != NONE => {
                self.free_recvs.push(x.recv);
            }
            _ => return,
        }
        self.free_xfers.push(id);
    }

    pub(super) fn submit<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        xfer: u32,
    ) {
        let x = &self.xfers[xfer as usize];
        let (src, dst, size) = (x.src_nic, x.dst_nic, x.size);
        match x.kind {
            XferKind::Put => self.send_data(q, net, now, (src, dst), size, xfer, DATA),
            XferKind::Msg if !x.rendezvous => {
                self.send_data(q, net, now, (src, dst), size, xfer, DATA)
            }
            XferKind::Msg => self.send_control(q, net, now, (src, dst), xfer, ACK_OR_RTS),
            XferKind::Get => self.send_control(q, net, now, (dst, src), xfer, REQUEST),
        }
    }

    /// Reacts to what the network reports.
    pub fn on_notice<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        notice: Notice,
    ) {
        let tok = match notice {
            Notice::TxStarted { token }
            | Notice::TxDone { token }
            | Notice::Landed { token, .. }
            | Notice::ControlArrived { token } => token,
        };
        let (xfer, part) = self.resolve(tok);
        let kind = self.xfers[xfer as usize].kind;
        match (kind, notice, part) {
            (_, Notice::TxStarted { .. }, _) => {
                let x = &mut self.xfers[xfer as usize];
                x.dma_start.set_once(now);
            }
            // Messages: the data has left memory (sender done); the data or the
            // request-to-send arrived; the receiver asks for rendezvous data.
            (XferKind::Msg, Notice::TxDone { .. }, DATA) => self.finish_xfer(q, now, xfer),
            (XferKind::Msg, Notice::Landed { .. }, DATA) => {
                self.xfers[xfer as usize].landed.set(now);
                if self.xfers[xfer as usize].rendezvous {
                    let rv = self.xfers[xfer as usize].recv;
                    self.complete_recv_after_overhead(q, now, rv);
                } else {
                    self.envelope(q, net, now, xfer);
                }
            }
            (XferKind::Msg, Notice::ControlArrived { .. }, ACK_OR_RTS) => {
                self.envelope(q, net, now, xfer)
            }
            (XferKind::Msg, Notice::ControlArrived { .. }, REQUEST) => {
                let x = &self.xfers[xfer as usize];
                let (src, dst, size) = (x.src_nic, x.dst_nic, x.size);
                self.send_data(q, net, now, (src, dst), size, xfer, DATA);
            }
            // Puts: landed (polls may return), then the acknowledgement completes them.
            (XferKind::Put, Notice::Landed { .. }, DATA) => {
                let x = &mut self.xfers[xfer as usize];
                x.landed.set(now);
                let (dst_rank, tag, src_nic, dst_nic) = (x.dst_rank, x.tag, x.src_nic, x.dst_nic);
                let d = dst_rank as usize;
                *self.ranks[d].landed.entry(tag).or_insert(0) += 1;
                if self.ranks[d].wait == Wait::Tag(tag) {
                    // The woken poll consumes this put.
                    self.check_wake(q, now, d);
                    if let Some(n) = self.ranks[d].landed.get_mut(&tag) {
                        *n -= 1;
                    }
                    self.ranks[d].advance();
                }
                self.send_control(q, net, now, (dst_nic, src_nic), xfer, ACK_OR_RTS);
                // A mirror's side of a put ends with the acknowledgement.
                if self.is_mirror(xfer) && !self.keeps(xfer) {
                    self.retire_named(xfer);
                }
            }
            // A mirror's side of a get ends as its data leaves memory.
            (XferKind::Get, Notice::TxDone { .. }, GET_DATA)
                if self.is_mirror(xfer) && !self.keeps(xfer) =>
            {
                self.retire_named(xfer)
            }
            (XferKind::Put, Notice::ControlArrived { .. }, ACK_OR_RTS)
            | (XferKind::Get, Notice::Landed { .. }, GET_DATA) => {
                if part == GET_DATA {
                    self.xfers[xfer as usize].landed.set(now);
                }
                if self.p.overhead == 0 {
                    self.finish_xfer(q, now, xfer);
                } else {
                    q.at(now + self.p.overhead, RtEvent::Finish { xfer: xfer.into() });
                }
            }
            (XferKind::Get, Notice::ControlArrived { .. }, REQUEST) => {
                let x = &self.xfers[xfer as usize];
                let (src, dst, size) = (x.src_nic, x.dst_nic, x.size);
                self.send_data(q, net, now, (src, dst), size, xfer, GET_DATA);
            }
            _ => {}
        }
    }

    pub(super) fn finish_xfer(&mut self, q: &mut impl Schedule<RtEvent>, now: Ps, xfer: u32) {
        let x = &mut self.xfers[xfer as usize];
        x.complete.set(now);
        let (rank, op) = (x.rank, x.op);
        self.awaited_done(rank as usize, xfer);
        self.request_done(q, now, rank, op);
    }

    pub(super) fn finish_recv(&mut self, q: &mut impl Schedule<RtEvent>, now: Ps, recv: u32) {
        let rv = &mut self.recvs[recv as usize];
        rv.complete.set(now);
        let (rank, op) = (rv.rank, rv.op);
        self.awaited_done(rank as usize, recv | RECV_BIT);
        self.request_done(q, now, rank, op);
    }

    /// A request of `rank` completed: its dependency-graph operation completes, or the
    /// rank wakes if that is what it waited for.
    pub(super) fn request_done(
        &mut self,
        q: &mut impl Schedule<RtEvent>,
        now: Ps,
        rank: u32,
        op: u32,
    ) {
        self.last_activity = self.last_activity.max(now);
        if op != NONE {
            self.complete_op(q, now, rank, op);
        } else {
            self.check_wake(q, now, rank as usize);
        }
    }
}
