//! Sequential programs: a rank runs one operation after another; non-blocking ones cost
//! their overhead and return, blocking ones suspend the rank until what they wait for
//! holds.

use super::state::*;
use crate::engine::Schedule;
use crate::network::Network;
use crate::program::{source_rank, Op, OpKind, NONE};
use crate::units::Ps;

/// What a rank does after one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Go on to the next operation now.
    Next,
    /// It computes, pays an overhead or blocks: a later event resumes it.
    Stop,
}

impl Runtime {
    /// Starts every rank at time 0, each in its own name (`origin`).
    pub fn start(&mut self, q: &mut impl Schedule<RtEvent>) {
        for rank in 0..self.program.ranks {
            if !self.runs_here(rank) {
                continue;
            }
            let r = rank as usize;
            q.set_origin(self.origin(RtEvent::Resume { rank: rank.into() }));
            if self.ranks[r].dag.is_some() {
                let n = self.program.ops[r].len() as u32;
                for op in 0..n {
                    let dag = self.ranks[r].dag.as_ref().expect("dag rank");
                    if dag.ops[op as usize].need == 0 {
                        self.make_ready(q, 0, rank, op);
                    }
                }
                if let Some(dag) = self.ranks[r].dag.as_mut() {
                    if dag.wake_at == 0 {
                        continue; // make_ready scheduled its Resume
                    }
                    dag.wake_at = 0;
                }
            }
            q.at(0, RtEvent::Resume { rank: rank.into() });
        }
    }

    /// The entities whose events the runtime handles: its ranks.
    pub fn entities(&self) -> u32 {
        self.program.ranks
    }

    /// The rank that handles `ev`: what it schedules meanwhile is keyed by it (the origin
    /// of `engine::queue`).
    #[inline]
    pub fn origin(&self, ev: RtEvent) -> u32 {
        match ev {
            RtEvent::Resume { rank } => rank.get(),
            RtEvent::Submit { xfer } | RtEvent::Finish { xfer } | RtEvent::Local { xfer, .. } => {
                self.xfers[xfer.get() as usize].rank
            }
            RtEvent::RecvDone { recv } => self.recvs[recv.get() as usize].rank,
        }
    }

    pub fn handle<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        ev: RtEvent,
    ) {
        match ev {
            RtEvent::Resume { rank } => {
                let rank = rank.get();
                if self.ranks[rank as usize].dag.is_some() {
                    self.run_dag(q, net, now, rank)
                } else {
                    self.run(q, net, now, rank)
                }
            }
            RtEvent::Submit { xfer } => self.submit(q, net, now, xfer.get()),
            RtEvent::Finish { xfer } => self.finish_xfer(q, now, xfer.get()),
            RtEvent::RecvDone { recv } => self.finish_recv(q, now, recv.get()),
            RtEvent::Local { xfer, part, what } => {
                self.on_local(q, net, now, (xfer.get(), part, what))
            }
        }
    }

    /// Runs a sequential rank from its current operation until it blocks, computes or ends.
    pub(super) fn run<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        rank: u32,
    ) {
        let r = rank as usize;
        loop {
            let Some(kind) = self.fetch(now, r) else {
                self.done(rank, now);
                return;
            };
            if self.step(q, net, now, rank, kind) == Step::Stop {
                return;
            }
        }
    }

    /// The operation rank `r` is at, entering and leaving collective calls on the way (their
    /// steps are generated as the rank reaches them); `None` at the end of its program.
    #[inline]
    fn fetch(&mut self, now: Ps, r: usize) -> Option<OpKind> {
        loop {
            if let Some(c) = self.ranks[r].in_coll.as_deref() {
                if let Some(op) = c.current() {
                    return Some(op.kind);
                }
                if !self.next_round(r) {
                    self.leave_collective(now, r);
                }
                continue;
            }
            let Some(&op) = self.program.ops[r].get(self.ranks[r].pc) else {
                if self.refill(r) {
                    continue;
                }
                return None;
            };
            match op.kind {
                OpKind::Collective { id, call, me } => {
                    self.enter_collective(r, (id, call, me), op.loc, now)
                }
                kind => return Some(kind),
            }
        }
    }

    /// Rank `r` of a streamed program is past its window: the next one, from its start.
    #[cold]
    fn refill(&mut self, r: usize) -> bool {
        let Some(streams) = self.streams.as_mut() else {
            return false;
        };
        let program = std::sync::Arc::make_mut(&mut self.program);
        let mut window = std::mem::take(&mut program.ops[r]);
        let more = streams.refill(program, r, &mut window);
        program.ops[r] = window;
        self.ranks[r].pc = 0;
        more
    }

    /// The operation rank `r` is at: a step of its collective, or of its program.
    pub(super) fn current_op(&self, r: usize) -> Option<Op> {
        let st = &self.ranks[r];
        match st.in_coll.as_deref() {
            Some(c) => c.current(),
            None => self.program.ops[r].get(st.pc).copied(),
        }
    }

    /// Executes operation `kind` of sequential rank `rank`: whether the rank goes on to its
    /// next operation now, or stops (it computes, pays an overhead or blocks).
    #[inline]
    fn step<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        rank: u32,
        kind: OpKind,
    ) -> Step {
        let r = rank as usize;
        let stop = |s: bool| if s { Step::Stop } else { Step::Next };
        match kind {
            OpKind::Compute { ps } => {
                self.ranks[r].advance();
                if ps == 0 {
                    return Step::Next;
                }
                self.compute(q, rank, 0, now, ps);
                Step::Stop
            }
            OpKind::Put {
                dst,
                size,
                tag,
                handle,
                nic,
            } => {
                let x = (XferKind::Put, dst, size, tag, nic, 0, handle);
                stop(self.start_xfer(q, net, now, rank, x, self.p.overhead))
            }
            OpKind::Get {
                src,
                size,
                handle,
                nic,
            } => {
                let x = (XferKind::Get, src, size, 0, nic, 0, handle);
                stop(self.start_xfer(q, net, now, rank, x, self.p.overhead))
            }
            OpKind::Poll { tag } => self.poll(now, r, tag),
            OpKind::Complete { handle: req } | OpKind::Wait { req } => {
                let e = self.ranks[r].handles[req as usize];
                self.wait_for(now, r, Wait::Req(e))
            }
            OpKind::WaitAll { .. } => self.wait_for(now, r, Wait::All),
            OpKind::WaitAny { .. } => self.wait_for(now, r, Wait::Any),
            OpKind::Test { .. } => {
                self.ranks[r].advance();
                Step::Next
            }
            OpKind::Isend {
                dst,
                size,
                tag,
                comm,
                req,
            } => {
                let x = (XferKind::Msg, dst, size, tag, NONE, comm, req);
                stop(self.start_xfer(q, net, now, rank, x, self.p.send_overhead))
            }
            OpKind::Irecv {
                src,
                tag,
                comm,
                req,
                ..
            } => {
                self.ranks[r].advance();
                let id = self.post_recv(q, net, now, rank, source_rank(src), tag, comm, NONE);
                self.set_handle(r, req, id | RECV_BIT);
                Step::Next
            }
            OpKind::Send {
                dst,
                size,
                tag,
                comm,
            } => {
                // Blocking: issue once (paying the overhead), then wait for completion.
                if self.ranks[r].inflight == NONE {
                    let kind = XferKind::Msg;
                    let id = self.new_xfer(now, rank, kind, dst, size, tag, NONE, comm, NONE);
                    self.ranks[r].inflight = id;
                    if self.pay_overhead(q, net, now, rank, 0, id, self.p.send_overhead) {
                        return Step::Stop;
                    }
                }
                self.finish_blocking(now, r)
            }
            OpKind::Recv { src, tag, comm, .. } => {
                if self.ranks[r].inflight == NONE {
                    let id = self.post_recv(q, net, now, rank, source_rank(src), tag, comm, NONE);
                    self.ranks[r].inflight = id | RECV_BIT;
                }
                self.finish_blocking(now, r)
            }
            OpKind::RegionBegin { region } => {
                self.ranks[r].regions.push((region, now));
                self.ranks[r].advance();
                Step::Next
            }
            OpKind::RegionEnd { region } => {
                self.close_region(now, rank, region);
                Step::Next
            }
            // Linking removes these (an unlinked program never reaches the runtime), and
            // `fetch` enters linked collectives.
            OpKind::Coll { .. }
            | OpKind::CommSplit { .. }
            | OpKind::CommDup { .. }
            | OpKind::Collective { .. } => {
                self.ranks[r].advance();
                Step::Next
            }
        }
    }

    /// `poll(tag)`: consumes a put with `tag` that has landed here, or blocks for one.
    fn poll(&mut self, now: Ps, r: usize, tag: i64) -> Step {
        let st = &mut self.ranks[r];
        match st.landed.get_mut(&tag) {
            Some(n) if *n > 0 => {
                *n -= 1;
                st.advance();
                Step::Next
            }
            _ => {
                self.block(r, now, Wait::Tag(tag));
                Step::Stop
            }
        }
    }

    /// A wait for one request, all or any of a list: passes if it holds, else blocks.
    fn wait_for(&mut self, now: Ps, r: usize, wait: Wait) -> Step {
        self.ranks[r].wait = wait;
        // A rank woken at a `WaitAll` resumes there: its list was found done, it stays so.
        if wait == Wait::All && !std::mem::take(&mut self.ranks[r].all_done) {
            self.count_awaited(r);
        }
        let ok = self.satisfied(r);
        self.ranks[r].wait = Wait::No;
        if ok {
            self.ranks[r].advance();
            Step::Next
        } else {
            self.block(r, now, wait);
            Step::Stop
        }
    }

    /// A request (handle `h`, entry `e`) of a wait inside a collective of rank `r` is done:
    /// it is consumed (its handle cleared: nothing refers to it again), and its transfer is
    /// retired if both ends are done with it. This happens as the request completes, while
    /// its records are at hand, not when the wait passes: the wait passes once all are done.
    fn consume(&mut self, r: usize, h: u32, e: u32) {
        self.ranks[r].handles[h as usize] = NONE;
        self.release_request(e);
    }

    /// A blocking send or receive already issued: done when its request is.
    fn finish_blocking(&mut self, now: Ps, r: usize) -> Step {
        let e = self.ranks[r].inflight;
        if !self.req_done(e) {
            self.block(r, now, Wait::Req(e));
            return Step::Stop;
        }
        self.ranks[r].inflight = NONE;
        self.ranks[r].advance();
        if self.summary_only {
            self.release_request(e);
        }
        Step::Next
    }

    fn close_region(&mut self, now: Ps, rank: u32, region: u32) {
        let st = &mut self.ranks[rank as usize];
        st.advance();
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

    /// Issues a non-blocking transfer of the current operation and pays its overhead;
    /// true if the rank waits for that overhead.
    pub(super) fn start_xfer<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        rank: u32,
        x: XferArgs,
        overhead: Ps,
    ) -> bool {
        let (kind, peer, size, tag, nic, ctx, handle) = x;
        let r = rank as usize;
        self.ranks[r].advance();
        let id = self.new_xfer(now, rank, kind, peer, size, tag, nic, ctx, NONE);
        self.set_handle(r, handle, id);
        self.pay_overhead(q, net, now, rank, 0, id, overhead)
    }

    pub(super) fn set_handle(&mut self, r: usize, handle: u32, e: u32) {
        if handle != NONE {
            let old = std::mem::replace(&mut self.ranks[r].handles[handle as usize], e);
            if self.summary_only {
                self.release_request(old);
            }
        }
    }

    /// Request `e` can no longer be named (its wait in a collective passed, its handle was
    /// reused, or its blocking call returned): its transfer is retired once its other end
    /// is done too, unless it is a record the results keep (`try_retire`).
    fn release_request(&mut self, e: u32) {
        if e == NONE {
            return;
        }
        let xfer = if e & RECV_BIT != 0 {
            let x = self.recvs[(e & !RECV_BIT) as usize].xfer;
            if x == NONE {
                return; // never matched: it stays posted
            }
            self.xfers[x as usize].receiver_waited = true;
            x
        } else {
            self.xfers[e as usize].sender_waited = true;
            e
        };
        self.try_retire(xfer);
    }

    pub(super) fn done(&mut self, rank: u32, now: Ps) {
        let pending: Vec<u32> = self.ranks[rank as usize]
            .handles
            .iter()
            .copied()
            .filter(|&e| !self.req_done(e))
            .collect();
        if let Some(&first) = pending.first() {
            self.unfinished.push(UnfinishedRequests {
                rank,
                count: pending.len() as u32,
                first: self.describe_req(first),
            });
        }
        if self.summary_only {
            // A finished rank names none of its requests again: the records of those that
            // completed are free for reuse (and a run across processes does not send them).
            for e in std::mem::take(&mut self.ranks[rank as usize].handles) {
                self.release_request(e);
            }
        }
        self.ranks[rank as usize].finish = Some(now);
        self.finished += 1;
        self.last_activity = self.last_activity.max(now);
    }

    pub(super) fn req_done(&self, e: u32) -> bool {
        if e == NONE {
            return true;
        }
        if e & RECV_BIT != 0 {
            self.recvs[(e & !RECV_BIT) as usize].complete.is_some()
        } else {
            self.xfers[e as usize].complete.is_some()
        }
    }

    /// The request list of the operation rank `r` is at (WaitAll/WaitAny): in the program's
    /// request lists, or in its collective's round.
    pub(super) fn current_list(&self, r: usize) -> &[u32] {
        &self.request_lists(r)[self.current_range(r)]
    }

    /// Where that list lies in the request lists its operation indexes.
    fn current_range(&self, r: usize) -> std::ops::Range<usize> {
        match self.current_op(r).map(|o| o.kind) {
            Some(OpKind::WaitAll { list, count } | OpKind::WaitAny { list, count }) => {
                list as usize..(list + count) as usize
            }
            _ => 0..0,
        }
    }

    /// The request lists rank `r`'s operations index: its collective round's, or its
    /// program's.
    fn request_lists(&self, r: usize) -> &[u32] {
        match self.ranks[r].in_coll.as_deref() {
            Some(c) => &c.lists,
            None => match &self.streams {
                Some(s) => &s.lists[r],
                None => &self.program.req_lists,
            },
        }
    }

    pub(super) fn satisfied(&self, r: usize) -> bool {
        let st = &self.ranks[r];
        match st.wait {
            Wait::No => true,
            Wait::Tag(t) => st.landed.get(&t).is_some_and(|&n| n > 0),
            Wait::Req(e) => self.req_done(e),
            Wait::All => st.wait_left == 0,
            Wait::Any => self
                .current_list(r)
                .iter()
                .any(|&h| self.req_done(st.handles[h as usize])),
        }
    }

    /// Suspends rank `r` at the current operation, charging the wait to `cat`.
    pub(super) fn block(&mut self, r: usize, now: Ps, wait: Wait) {
        let st = &mut self.ranks[r];
        st.wait = wait;
        st.blocked_since = now;
    }

    /// Category blocked time of rank `r` goes to: its collective, else its operation.
    pub(super) fn blocked_category(&self, r: usize) -> usize {
        let st = &self.ranks[r];
        if let Some(call) = st.collective() {
            return category(&self.program.collectives[call as usize].kind);
        }
        match self.current_op(r).map(|o| o.kind) {
            Some(OpKind::Poll { .. }) => category("poll"),
            Some(OpKind::Complete { .. }) => category("complete"),
            Some(OpKind::Send { .. }) => category("send"),
            Some(OpKind::Recv { .. }) => category("recv"),
            _ => category("wait"),
        }
    }

    /// Wakes rank `r` if what it waits for now holds.
    /// Marks the requests of rank `r`'s `WaitAll` list that are still to complete, and
    /// counts them (`request_done` counts them down).
    fn count_awaited(&mut self, r: usize) {
        let mut left = 0;
        let in_collective = self.ranks[r].in_coll.is_some();
        for i in self.current_range(r) {
            let h = self.request_lists(r)[i];
            let e = self.ranks[r].handles[h as usize];
            if self.req_done(e) {
                if in_collective {
                    self.consume(r, h, e);
                }
                continue;
            }
            let (table, at) = match e & RECV_BIT != 0 {
                true => (&mut self.awaited_recvs, (e & !RECV_BIT) as usize),
                false => (&mut self.awaited_xfers, e as usize),
            };
            if table.len() <= at {
                table.resize(at + 1, Awaited::NO);
            }
            if table[at] == Awaited::NO {
                table[at] = match in_collective {
                    true => Awaited::consuming(h),
                    false => Awaited::YES,
                };
                left += 1;
            }
        }
        self.ranks[r].wait_left = left;
    }

    /// Request `e` of rank `r` completed: one fewer for its `WaitAll`, if it counts on it.
    pub(super) fn awaited_done(&mut self, r: usize, e: u32) {
        let (table, at) = match e & RECV_BIT != 0 {
            true => (&mut self.awaited_recvs, (e & !RECV_BIT) as usize),
            false => (&mut self.awaited_xfers, e as usize),
        };
        if let Some(flag) = table.get_mut(at).filter(|f| **f != Awaited::NO) {
            let awaited = std::mem::replace(flag, Awaited::NO);
            self.ranks[r].wait_left -= 1;
            if let Some(h) = awaited.handle() {
                self.consume(r, h, e);
            }
        }
    }

    pub(super) fn check_wake(&mut self, q: &mut impl Schedule<RtEvent>, now: Ps, r: usize) {
        if self.ranks[r].wait == Wait::No || !self.satisfied(r) {
            return;
        }
        let cat = self.blocked_category(r);
        let since = self.ranks[r].blocked_since;
        self.record(r as u32, TraceKind::Blocked(cat as u8), since, now);
        let st = &mut self.ranks[r];
        st.stats.blocked_ps[cat] += now - st.blocked_since;
        st.all_done = st.wait == Wait::All;
        st.wait = Wait::No;
        q.at(
            now,
            RtEvent::Resume {
                rank: (r as u32).into(),
            },
        );
    }
}
