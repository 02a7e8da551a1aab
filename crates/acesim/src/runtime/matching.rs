//! MPI matching: a receive takes the first envelope of its context, source and tag (with
//! wildcards) from the unexpected queue, or waits in the posted queue; envelopes from one
//! sender are matched in the order they were sent (non-overtaking).

use super::state::*;
use crate::engine::Schedule;
use crate::network::Network;
use crate::program::{ANY, NONE};
use crate::units::Ps;
use std::collections::hash_map::Entry;

impl Runtime {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn post_recv<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        rank: u32,
        src: i64,
        tag: i64,
        ctx: u32,
        op: u32,
    ) -> u32 {
        let record = RecvRecord {
            rank,
            src,
            tag,
            ctx,
            posted: now,
            xfer: NONE,
            complete: Stamp::NOT_YET,
            op,
        };
        // A collective step's receive (odd contexts) takes the slot of a finished one; the
        // program's own stay in posting order (they are the results' receives) unless no
        // records are kept.
        let free = if ctx % 2 == 1 || self.summary_only {
            self.free_recvs.pop()
        } else {
            None
        };
        let id = crate::ids::place(&mut self.recvs, free, record);
        if self.split.is_some() {
            self.placed_recv(id);
        }
        let rv = &self.recvs[id as usize];
        let st = &self.ranks[rank as usize];
        match st
            .unexpected
            .iter()
            .position(|&x| Self::matches(rv, &self.xfers[x as usize]))
        {
            Some(i) => {
                let x = self.ranks[rank as usize].unexpected.remove(i);
                self.matched(q, net, now, id, x);
            }
            None => self.ranks[rank as usize].posted.push(id),
        }
        id
    }

    /// An envelope (eager data, or a rendezvous request) reached its receiver: match it, in
    /// send order per (sender, context).
    pub(super) fn envelope<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        xfer: u32,
    ) {
        let x = &self.xfers[xfer as usize];
        let (key, seq) = ((x.src_rank, x.dst_rank, x.ctx), x.seq);
        let Some((mut want, mut drained)) = self.take_turn(key, seq) else {
            self.early.entry(key).or_default().insert(seq, xfer);
            return;
        };
        let mut next = xfer;
        loop {
            self.match_envelope(q, net, now, next);
            // (Most runs never have an envelope ahead of its turn: no lookup then.)
            if self.early.is_empty() || drained {
                break;
            }
            let Some(x) = self.early.get_mut(&key).and_then(|m| m.remove(&want)) else {
                break;
            };
            let Some(turn) = self.take_turn(key, want) else {
                break;
            };
            (next, (want, drained)) = (x, turn);
        }
        if self.early.get(&key).is_some_and(|m| m.is_empty()) {
            self.early.remove(&key);
        }
    }

    /// Counts envelope `seq` of pair `key` (sender, receiver, context) as arrived if it is
    /// the pair's next (`None`: it is ahead of its turn): the pair's count of arrivals, and
    /// whether every message sent on it has now arrived. Then both counts are dropped, to
    /// start again from 0 with the next message, so that a run keeps counts only for pairs
    /// with messages in flight (an all-to-all on 2,704 ranks has 7.3 million pairs). One
    /// lookup an envelope. A partition that did not count the sends (they were made in
    /// another) counts arrivals only, and keeps them.
    fn take_turn(&mut self, key: (u32, u32, u32), seq: u32) -> Option<(u32, bool)> {
        match self.seq.entry(key) {
            Entry::Occupied(mut e) => {
                let s = e.get_mut();
                if seq != s.received {
                    return None;
                }
                s.received += 1;
                let (received, drained) = (s.received, s.sent == s.received);
                if drained {
                    e.remove();
                }
                Some((received, drained))
            }
            Entry::Vacant(v) => {
                let received = u32::from(seq == 0);
                v.insert(Seq { sent: 0, received });
                (seq == 0).then_some((received, false))
            }
        }
    }

    pub(super) fn match_envelope<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        xfer: u32,
    ) {
        let dst = self.xfers[xfer as usize].dst_rank as usize;
        let x = &self.xfers[xfer as usize];
        match self.ranks[dst]
            .posted
            .iter()
            .position(|&rv| Self::matches(&self.recvs[rv as usize], x))
        {
            Some(i) => {
                let rv = self.ranks[dst].posted.remove(i);
                self.matched(q, net, now, rv, xfer);
            }
            None => self.ranks[dst].unexpected.push(xfer),
        }
    }

    pub(super) fn matches(rv: &RecvRecord, x: &Xfer) -> bool {
        rv.ctx == x.ctx
            && (rv.src == ANY || rv.src == x.src_rank as i64)
            && (rv.tag == ANY || rv.tag == x.tag)
    }

    /// A receive has its message: eager data completes it (after the receive overhead);
    /// a rendezvous request makes the receiver pull the data.
    pub(super) fn matched<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        recv: u32,
        xfer: u32,
    ) {
        self.recvs[recv as usize].xfer = xfer;
        self.xfers[xfer as usize].recv = recv;
        let x = &self.xfers[xfer as usize];
        if x.rendezvous {
            let (src, dst) = (x.src_nic, x.dst_nic);
            self.send_control(q, net, now, (dst, src), xfer, REQUEST);
        } else {
            self.complete_recv_after_overhead(q, now, recv);
        }
    }

    pub(super) fn complete_recv_after_overhead(
        &mut self,
        q: &mut impl Schedule<RtEvent>,
        now: Ps,
        recv: u32,
    ) {
        if self.p.recv_overhead == 0 {
            self.finish_recv(q, now, recv);
        } else {
            q.at(
                now + self.p.recv_overhead,
                RtEvent::RecvDone { recv: recv.into() },
            );
        }
    }
}
