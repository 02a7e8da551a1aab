//! Conservative parallel simulation: the partitions of a run advance together, window by
//! window, each on its own thread.
//!
//! A window ends at the next multiple of the **grid**, a time no longer than the smallest
//! latency of a link between two partitions. An event that one partition schedules for
//! another is therefore never due before the window ends: it is handed over at the end of
//! the window, with its key, and sorts into the other partition's queue exactly where one
//! queue would have put it. Windows with no event are skipped: the next starts at the
//! earliest event of any partition.
//!
//! The windows, and so the points at which a run may stop, depend on the grid and on the
//! events alone, never on how many partitions there are: one partition runs the same
//! windows on the calling thread, without synchronising.

use crate::units::Ps;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

/// One partition of a run.
pub trait Partition: Send {
    /// An event handed to another partition.
    type Crossing: Send;
    /// What a partition reports after each window, for the stop rule and progress.
    type Tally: Copy + Send + Default;

    /// The time of its earliest pending event.
    fn next_time(&self) -> Option<Ps>;

    /// Handles every event before `end`; events due in partition `p` go to `out[p]`.
    /// An error stops every partition after this window.
    fn run_until(&mut self, end: Ps, out: &mut [Vec<Self::Crossing>]) -> Result<(), String>;

    /// Takes the events other partitions handed it (in the order of their partitions).
    fn receive(&mut self, from: &mut Vec<Self::Crossing>);

    /// Every event handed to it this window has been received (a partition that holds
    /// them until then takes them now).
    fn received(&mut self) {}

    fn tally(&self) -> Self::Tally;
}

/// A partition's clock moves from `last` to `now` after a window: an error if it went
/// back (a broken event order).
pub fn advance_clock(last: &mut Ps, now: Ps) -> Result<(), String> {
    if now < *last {
        return Err(format!("event time went back from {last} ps to {now} ps"));
    }
    *last = now;
    Ok(())
}

/// How a run advanced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowCount {
    /// Windows with at least one event.
    pub windows: u64,
    /// Events handed from one partition to another.
    pub crossings: u64,
    /// The end of the last window run (0 if none).
    pub reached: Ps,
}

/// What sees the end of every window and the partitions' tallies.
pub type Watch<'a, T> = &'a mut (dyn FnMut(Ps, &[T]) + Send);

/// When the windows stop.
pub struct Bounds<'a, T> {
    /// Windows end at multiples of it (at least 1 ps).
    pub grid: Ps,
    /// No event after it is handled.
    pub limit: Ps,
    /// Asked at the end of every window with its end and every partition's tally: true
    /// stops the run there.
    pub stop: &'a (dyn Fn(Ps, &[T]) -> bool + Sync),
    /// `stop` is false at every time before this one: a lone partition runs up to it in
    /// long windows.
    pub no_stop_before: Ps,
}

/// Grids a lone partition's long window spans at most (so that `watch` still sees it
/// advance).
const LONG_WINDOW: Ps = 4096;

/// Runs `parts` window by window until none has an event left, the limit passes or
/// `bounds.stop` says so; `watch` sees the end of each window and the tallies (on the
/// first partition's thread). Returns the counts, or the first error.
pub fn run_windows<P: Partition>(
    parts: &mut [P],
    bounds: &Bounds<'_, P::Tally>,
    watch: Watch<'_, P::Tally>,
) -> Result<WindowCount, String> {
    match parts {
        [one] => run_alone(one, bounds, watch),
        _ => run_threads(parts, bounds, watch),
    }
}

/// The end of the window that starts at `start`: the next multiple of the grid, and never
/// past the limit.
pub(crate) fn window_end(start: Ps, grid: Ps, limit: Ps) -> Ps {
    let grid = grid.max(1);
    (start / grid + 1)
        .saturating_mul(grid)
        .min(limit.saturating_add(1))
}

fn run_alone<P: Partition>(
    part: &mut P,
    bounds: &Bounds<'_, P::Tally>,
    watch: Watch<'_, P::Tally>,
) -> Result<WindowCount, String> {
    let mut count = WindowCount::default();
    let mut out = vec![Vec::new()];
    while let Some(start) = part.next_time() {
        if start > bounds.limit {
            break;
        }
        let grid = bounds.grid.max(1);
        let mut end = window_end(start, grid, bounds.limit);
        // Nothing crosses and no window before `no_stop_before` can stop the run: one long
        // window to the last grid line before it gives the same run as many short ones.
        let quiet_until = (bounds.no_stop_before.saturating_sub(1) / grid) * grid;
        if end < quiet_until {
            end = quiet_until.min(end.saturating_add((LONG_WINDOW - 1) * grid));
        }
        part.run_until(end, &mut out)?;
        debug_assert!(out[0].is_empty(), "a lone partition handed itself an event");
        count.windows += 1;
        count.reached = end;
        let tally = [part.tally()];
        watch(end, &tally);
        if (bounds.stop)(end, &tally) {
            break;
        }
    }
    Ok(count)
}

/// What the partitions' threads share: a mailbox per ordered pair, each partition's next
/// time and tally, and whether one failed.
struct Shared<C, T> {
    parts: usize,
    /// `mail[from * parts + to]`.
    mail: Vec<Mutex<Vec<C>>>,
    next: Vec<AtomicU64>,
    tallies: Vec<Mutex<T>>,
    failed: AtomicBool,
    barrier: SpinBarrier,
}

/// A barrier that spins before it sleeps: the threads of a run meet twice a window, often
/// every few microseconds, where a barrier that sleeps at once costs tens of them. A
/// thread that has spun long enough (more threads than free cores) sleeps instead.
struct SpinBarrier {
    threads: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
    sleepers: Mutex<()>,
    wake: Condvar,
}

/// Spins before a waiting thread sleeps.
const SPINS: u32 = 4096;

impl SpinBarrier {
    fn new(threads: usize) -> SpinBarrier {
        SpinBarrier {
            threads,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            sleepers: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            // The last to arrive opens the barrier, reset for next time.
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            // Taking the lock orders this after any sleeper's last look.
            drop(self.sleepers.lock().unwrap_or_else(PoisonError::into_inner));
            self.wake.notify_all();
            return;
        }
        for _ in 0..SPINS {
            if self.generation.load(Ordering::Acquire) != generation {
                return;
            }
            std::hint::spin_loop();
        }
        let mut guard = self.sleepers.lock().unwrap_or_else(PoisonError::into_inner);
        while self.generation.load(Ordering::Acquire) == generation {
            guard = self
                .wake
                .wait(guard)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl<C, T: Copy> Shared<C, T> {
    fn publish<P: Partition<Crossing = C, Tally = T>>(&self, me: usize, part: &P) {
        let next = part.next_time().unwrap_or(Ps::MAX);
        self.next[me].store(next, Ordering::Relaxed);
        *self.tallies[me]
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = part.tally();
    }

    /// The earliest next time of all partitions, and their tallies.
    fn gather(&self) -> (Ps, Vec<T>) {
        let next = self
            .next
            .iter()
            .map(|n| n.load(Ordering::Relaxed))
            .min()
            .unwrap_or(Ps::MAX);
        let tallies = self
            .tallies
            .iter()
            .map(|t| *t.lock().unwrap_or_else(PoisonError::into_inner))
            .collect();
        (next, tallies)
    }
}

fn run_threads<P: Partition>(
    parts: &mut [P],
    bounds: &Bounds<'_, P::Tally>,
    watch: Watch<'_, P::Tally>,
) -> Result<WindowCount, String> {
    let n = parts.len();
    let shared = Shared {
        parts: n,
        mail: (0..n * n).map(|_| Mutex::new(Vec::new())).collect(),
        next: (0..n).map(|_| AtomicU64::new(Ps::MAX)).collect(),
        tallies: (0..n).map(|_| Mutex::new(P::Tally::default())).collect(),
        failed: AtomicBool::new(false),
        barrier: SpinBarrier::new(n),
    };
    let mut results: Vec<Result<WindowCount, String>> = Vec::new();
    std::thread::scope(|s| {
        let mut watch = Some(watch);
        let handles: Vec<_> = parts
            .iter_mut()
            .enumerate()
            .map(|(me, part)| {
                let shared = &shared;
                let watch = watch.take();
                s.spawn(move || worker(me, part, shared, bounds, watch))
            })
            .collect();
        results = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a partition's thread panicked".into()))
            })
            .collect();
    });
    let mut total = WindowCount::default();
    for r in results {
        let c = r?;
        total.windows = c.windows;
        total.reached = c.reached;
        total.crossings += c.crossings;
    }
    Ok(total)
}

/// The loop of partition `me`'s thread. Every thread takes the same decisions from the
/// same shared figures, so they stop together.
fn worker<P: Partition>(
    me: usize,
    part: &mut P,
    shared: &Shared<P::Crossing, P::Tally>,
    bounds: &Bounds<'_, P::Tally>,
    mut watch: Option<Watch<'_, P::Tally>>,
) -> Result<WindowCount, String> {
    let n = shared.parts;
    let mut out: Vec<Vec<P::Crossing>> = (0..n).map(|_| Vec::new()).collect();
    let mut count = WindowCount::default();
    let mut error = None;
    shared.publish(me, part);
    shared.barrier.wait();
    loop {
        let (start, _) = shared.gather();
        if start == Ps::MAX || start > bounds.limit || shared.failed.load(Ordering::Relaxed) {
            break;
        }
        let end = window_end(start, bounds.grid, bounds.limit);
        // A partition that fails, even by a panic, still meets the others at the barriers,
        // so that they all stop after this window instead of waiting for it forever.
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            part.run_until(end, &mut out)
        }));
        let failure = match ran {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e),
            Err(panic) => Some(format!(
                "partition {me} failed: {}",
                panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("a panic")
            )),
        };
        if let Some(e) = failure {
            error = Some(e);
            shared.failed.store(true, Ordering::Relaxed);
        }
        for (to, events) in out.iter_mut().enumerate() {
            if !events.is_empty() {
                count.crossings += events.len() as u64;
                let mut mail = shared.mail[me * n + to]
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                mail.append(events);
            }
        }
        shared.barrier.wait();
        for from in 0..n {
            let mut mail = shared.mail[from * n + me]
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if !mail.is_empty() {
                part.receive(&mut mail);
                mail.clear();
            }
        }
        shared.publish(me, part);
        shared.barrier.wait();
        count.windows += 1;
        count.reached = end;
        let (_, tallies) = shared.gather();
        if let Some(w) = watch.as_mut() {
            w(end, &tallies);
        }
        if (bounds.stop)(end, &tallies) {
            break;
        }
    }
    match error {
        Some(e) => Err(e),
        None => Ok(count),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring of partitions passing a token: each handles it and hands it to the next,
    /// one latency later, until it has gone round `laps` times.
    struct Ring {
        me: usize,
        parts: usize,
        latency: Ps,
        pending: Vec<(Ps, u32)>,
        handled: Vec<(Ps, u32)>,
        laps: u32,
    }

    impl Partition for Ring {
        type Crossing = (Ps, u32);
        type Tally = u64;
        fn next_time(&self) -> Option<Ps> {
            self.pending.iter().map(|p| p.0).min()
        }
        fn run_until(&mut self, end: Ps, out: &mut [Vec<(Ps, u32)>]) -> Result<(), String> {
            while let Some(i) = self.pending.iter().position(|p| p.0 < end) {
                let (t, hop) = self.pending.remove(i);
                self.handled.push((t, hop));
                if hop + 1 < self.laps * self.parts as u32 {
                    let to = (self.me + 1) % self.parts;
                    let next = (t + self.latency, hop + 1);
                    if to == self.me {
                        self.pending.push(next);
                    } else {
                        out[to].push(next);
                    }
                }
            }
            Ok(())
        }
        fn receive(&mut self, from: &mut Vec<(Ps, u32)>) {
            self.pending.append(from);
        }
        fn tally(&self) -> u64 {
            self.handled.len() as u64
        }
    }

    fn ring(parts: usize, grid: Ps, stop_after: u64) -> (Vec<(Ps, u32)>, WindowCount) {
        let mut ring: Vec<Ring> = (0..parts)
            .map(|me| Ring {
                me,
                parts,
                latency: 1000,
                pending: if me == 0 { vec![(5, 0)] } else { Vec::new() },
                handled: Vec::new(),
                laps: 3,
            })
            .collect();
        let stop = move |_: Ps, t: &[u64]| t.iter().sum::<u64>() >= stop_after;
        let bounds = Bounds {
            grid,
            limit: Ps::MAX,
            stop: &stop,
            no_stop_before: 0,
        };
        let count = run_windows(&mut ring, &bounds, &mut |_, _| {}).expect("runs");
        let mut handled: Vec<(Ps, u32)> = ring.into_iter().flat_map(|r| r.handled).collect();
        handled.sort();
        (handled, count)
    }

    #[test]
    fn partitions_on_threads_handle_what_one_does() {
        for parts in [1, 2, 3] {
            let (handled, count) = ring(parts, 1000, u64::MAX);
            let want: Vec<(Ps, u32)> = (0..3 * parts as u32)
                .map(|h| (5 + 1000 * h as Ps, h))
                .collect();
            assert_eq!(handled, want, "{parts} partitions");
            // One event per window: every window from 0..1000 to the last one's.
            assert_eq!(count.windows, 3 * parts as u64);
            assert_eq!(
                count.crossings,
                if parts == 1 { 0 } else { 3 * parts as u64 - 1 }
            );
        }
    }

    #[test]
    fn every_partition_stops_at_the_same_window() {
        for parts in [1, 2, 4] {
            let (handled, count) = ring(parts, 1000, 2);
            assert_eq!(handled.len(), 2, "{parts} partitions");
            assert_eq!(count.reached, 2000);
        }
    }

    /// A partition with an event every 1000 ps that panics at its third.
    struct Boom {
        me: usize,
        next: Ps,
    }

    impl Partition for Boom {
        type Crossing = ();
        type Tally = ();
        fn next_time(&self) -> Option<Ps> {
            Some(self.next)
        }
        fn run_until(&mut self, end: Ps, _: &mut [Vec<()>]) -> Result<(), String> {
            while self.next < end {
                assert!(self.me != 1 || self.next < 3000, "boom");
                self.next += 1000;
            }
            Ok(())
        }
        fn receive(&mut self, _: &mut Vec<()>) {}
        fn tally(&self) {}
    }

    #[test]
    fn a_partition_that_panics_stops_every_thread() {
        let mut parts: Vec<Boom> = (0..3).map(|me| Boom { me, next: 0 }).collect();
        let never = |_: Ps, _: &[()]| false;
        let bounds = Bounds {
            grid: 1000,
            limit: Ps::MAX,
            stop: &never,
            no_stop_before: 0,
        };
        let e = run_windows(&mut parts, &bounds, &mut |_, _| {}).unwrap_err();
        assert!(e.contains("partition 1 failed: boom"), "{e}");
    }

    #[test]
    fn windows_end_on_the_grid_and_at_the_limit() {
        assert_eq!(window_end(0, 600, Ps::MAX), 600);
        assert_eq!(window_end(599, 600, Ps::MAX), 600);
        assert_eq!(window_end(600, 600, Ps::MAX), 1200);
        assert_eq!(window_end(650, 600, 700), 701);
        assert_eq!(window_end(7, 0, Ps::MAX), 8);
    }
}
