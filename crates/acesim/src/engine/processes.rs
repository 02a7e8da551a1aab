//! The partitions of a run on several processes (one partition each), advancing in the
//! same windows as threads do (`engine::windows`), through a transport that moves bytes
//! between them: MPI, for a run across machines (`acesim traffic` under `mpirun`). The
//! engine knows only the [`Exchange`] trait; the command line implements it with MPI.
//!
//! Each window every process handles its events before the window's end, sends every
//! other process what it scheduled for it (an all-to-all), and all learn every process's
//! next time and tally (an all-gather), from which each takes the same decision: where the
//! next window starts and whether the run stops.

use crate::engine::windows::{window_end, Bounds, Partition, WindowCount};
use crate::units::Ps;
use bincode::Options;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Moves bytes between the processes of a run.
pub trait Exchange {
    /// This process, in `0..count()`.
    fn me(&self) -> usize;
    fn count(&self) -> usize;
    /// Sends `out[p]` to each process `p`; returns what each process sent this one, by
    /// process.
    fn all_to_all(&self, out: Vec<Vec<u8>>) -> Vec<Vec<u8>>;
    /// Every process's `mine`, by process.
    fn all_gather(&self, mine: Vec<u8>) -> Vec<Vec<u8>>;
    /// Every process's `mine`, by process, on process 0 (`None` on the others).
    fn gather(&self, mine: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        let all = self.all_gather(mine);
        (self.me() == 0).then_some(all)
    }
}

// Integers as varints: most counts and times sent are far below their type's range.
fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, String> {
    bincode::DefaultOptions::new()
        .serialize(value)
        .map_err(|e| format!("encoding for another process: {e}"))
}

fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    bincode::DefaultOptions::new()
        .deserialize(bytes)
        .map_err(|e| format!("decoding from another process: {e}"))
}

/// `value` of every process, by process.
pub fn gather_all<T: Serialize + DeserializeOwned>(
    ex: &dyn Exchange,
    value: &T,
) -> Result<Vec<T>, String> {
    ex.all_gather(encode(value)?)
        .iter()
        .map(|b| decode(b))
        .collect()
}

/// `value` of every process, by process, on process 0 (`None` on the others).
pub fn gather_first<T: Serialize + DeserializeOwned>(
    ex: &dyn Exchange,
    value: &T,
) -> Result<Option<Vec<T>>, String> {
    match ex.gather(encode(value)?) {
        Some(all) => all
            .iter()
            .map(|b| decode(b))
            .collect::<Result<_, _>>()
            .map(Some),
        None => Ok(None),
    }
}

/// Runs this process's partition `part` window by window with the others, until none has
/// an event left, the limit passes or `bounds.stop` says so; `watch` sees every window's
/// end on process 0. Every process returns the same counts.
pub fn run_processes<P>(
    part: &mut P,
    ex: &dyn Exchange,
    bounds: &Bounds<'_, P::Tally>,
    watch: &mut dyn FnMut(Ps, &[P::Tally]),
) -> Result<WindowCount, String>
where
    P: Partition,
    P::Crossing: Serialize + DeserializeOwned,
    P::Tally: Serialize + DeserializeOwned,
{
    let n = ex.count();
    let mut out: Vec<Vec<P::Crossing>> = (0..n).map(|_| Vec::new()).collect();
    let mut count = WindowCount::default();
    let mut status = gather_all(ex, &(part.next_time(), part.tally(), false))?;
    loop {
        let failed = status.iter().any(|s| s.2);
        let start = status.iter().filter_map(|s| s.0).min();
        let Some(start) = start.filter(|&s| s <= bounds.limit && !failed) else {
            break;
        };
        let end = window_end(start, bounds.grid, bounds.limit);
        let mut error = None;
        if let Err(e) = part.run_until(end, &mut out) {
            error = Some(e);
        }
        let mut bytes = Vec::with_capacity(n);
        for events in out.iter_mut() {
            count.crossings += events.len() as u64;
            bytes.push(encode(&*events)?);
            events.clear();
        }
        for (from, b) in ex.all_to_all(bytes).iter().enumerate() {
            if from != ex.me() {
                let mut events: Vec<P::Crossing> = decode(b)?;
                part.receive(&mut events);
            }
        }
        part.received();
        status = gather_all(ex, &(part.next_time(), part.tally(), error.is_some()))?;
        if let Some(e) = error {
            return Err(e);
        }
        count.windows += 1;
        count.reached = end;
        let tallies: Vec<P::Tally> = status.iter().map(|s| s.1).collect();
        if ex.me() == 0 {
            watch(end, &tallies);
        }
        if (bounds.stop)(end, &tallies) {
            break;
        }
    }
    if status.iter().any(|s| s.2) {
        return Err("another process of the run failed".into());
    }
    count.crossings = gather_all(ex, &count.crossings)?.iter().sum();
    Ok(count)
}
