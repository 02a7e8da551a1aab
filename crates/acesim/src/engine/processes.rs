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
    /// Sends `bytes` to process `to`, which takes them with `receive(me)`: between two
    /// processes, messages arrive in the order they were sent. May wait until `to`
    /// receives them.
    fn send(&self, to: usize, bytes: &[u8]);
    /// The next bytes process `from` sent this one with `send`.
    fn receive(&self, from: usize) -> Vec<u8>;
    /// How many processes of the run (this one included) share this one's machine, and
    /// so its cores.
    fn on_this_machine(&self) -> usize {
        1
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

/// Bytes of encoding a process sends at a time when it streams a value to process 0: small
/// enough that no process holds a whole large encoding (nor MPI's 32-bit counts limit it),
/// large enough that a message costs little.
const CHUNK: usize = 8 << 20;

/// The first byte of a chunk: whether more chunks of the value follow, or it is the last,
/// or the sender could not encode the value.
const MORE: u8 = 0;
const LAST: u8 = 1;
const FAILED: u8 = 2;

/// `value` of every process, by process, on process 0 (`None` on the others). Each other
/// process sends its encoding in chunks as they fill, which process 0 receives while the
/// sender encodes the next: no sender holds its whole encoding (a run's records may take
/// gigabytes), and no message is larger than a chunk (MPI counts bytes in 32 bits).
pub fn gather_first<T: Serialize + DeserializeOwned>(
    ex: &dyn Exchange,
    value: T,
) -> Result<Option<Vec<T>>, String> {
    if ex.me() != 0 {
        let mut out = Chunks {
            ex,
            buf: vec![MORE],
        };
        let encoded = bincode::DefaultOptions::new().serialize_into(&mut out, &value);
        // The last chunk goes even on failure, so that process 0 does not wait for ever.
        out.buf[0] = if encoded.is_ok() { LAST } else { FAILED };
        ex.send(0, &out.buf);
        encoded.map_err(|e| format!("encoding for process 0: {e}"))?;
        return Ok(None);
    }
    // Process 0 keeps its own value as it is.
    let mut all = vec![value];
    let mut bytes = Vec::new();
    for from in 1..ex.count() {
        // The chunks are put end to end and decoded as one slice: decoding through a
        // reader, chunk by chunk as they came, took four times as long.
        bytes.clear();
        let end = loop {
            let chunk = ex.receive(from);
            match chunk.split_first() {
                Some((&MORE, rest)) => bytes.extend_from_slice(rest),
                Some((&LAST, rest)) => {
                    bytes.extend_from_slice(rest);
                    break LAST;
                }
                _ => break FAILED,
            }
        };
        if end == FAILED {
            return Err(format!("process {from} could not encode its results"));
        }
        all.push(decode(&bytes).map_err(|e| format!("{e} (from process {from})"))?);
    }
    Ok(Some(all))
}

/// The encoding of a value, sent to process 0 a chunk at a time: a full chunk goes when
/// more bytes come (so that the last one can say it is the last), and no chunk holds more
/// than `CHUNK` bytes of it.
struct Chunks<'a> {
    ex: &'a dyn Exchange,
    /// The chunk being filled, after its first byte.
    buf: Vec<u8>,
}

impl std::io::Write for Chunks<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.buf.len() > CHUNK {
            self.buf[0] = MORE;
            self.ex.send(0, &self.buf);
            self.buf.truncate(1);
        }
        // Long byte strings are cut too (`write_all` comes back for the rest).
        let n = bytes.len().min(CHUNK + 1 - self.buf.len());
        self.buf.extend_from_slice(&bytes[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::LocalExchange;

    /// Runs `f` on each member of a group of `n` played by threads, results by member.
    fn on_group<R: Send>(n: usize, f: impl Fn(&LocalExchange) -> R + Sync) -> Vec<R> {
        let group = LocalExchange::group(n);
        std::thread::scope(|s| {
            let handles: Vec<_> = group.iter().map(|ex| s.spawn(|| f(ex))).collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("member thread"))
                .collect()
        })
    }

    /// Values of several chunks each (numbers of 9 varint bytes) reach process 0 whole,
    /// in process order; the others get nothing.
    #[test]
    fn a_gather_streams_values_larger_than_a_chunk() {
        let value = |k: usize| -> Vec<u64> {
            (0..(2 * CHUNK / 9 + 12_345) as u64)
                .map(|i| (1 << 60) + i * 7 + k as u64)
                .collect()
        };
        let got = on_group(3, |ex| gather_first(ex, value(ex.me())).expect("gather"));
        let first = got[0].as_ref().expect("process 0 gathers");
        assert_eq!(first.len(), 3);
        for (k, v) in first.iter().enumerate() {
            assert_eq!(*v, value(k));
        }
        assert!(got[1].is_none() && got[2].is_none());
    }

    /// An exchange that remembers the longest message sent with `send`.
    struct Longest<'a>(&'a LocalExchange, std::sync::atomic::AtomicUsize);

    impl Exchange for Longest<'_> {
        fn me(&self) -> usize {
            self.0.me()
        }
        fn count(&self) -> usize {
            self.0.count()
        }
        fn all_to_all(&self, out: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
            self.0.all_to_all(out)
        }
        fn all_gather(&self, mine: Vec<u8>) -> Vec<Vec<u8>> {
            self.0.all_gather(mine)
        }
        fn send(&self, to: usize, bytes: &[u8]) {
            self.1
                .fetch_max(bytes.len(), std::sync::atomic::Ordering::Relaxed);
            self.0.send(to, bytes)
        }
        fn receive(&self, from: usize) -> Vec<u8> {
            self.0.receive(from)
        }
    }

    /// A value that ends exactly where a chunk is full, and an empty one, arrive too; no
    /// message carries more than a chunk, even of one long byte string.
    #[test]
    fn a_gather_streams_values_of_any_length() {
        for len in [0, 1, CHUNK - 9, CHUNK - 8, CHUNK, CHUNK + 1, 3 * CHUNK + 5] {
            let got = on_group(2, |ex| {
                let ex = Longest(ex, Default::default());
                let mine: Vec<u8> = vec![ex.me() as u8 + 1; len];
                let all = gather_first(&ex, mine).expect("gather");
                assert!(ex.1.into_inner() <= CHUNK + 1, "{len} bytes");
                all
            });
            let first = got[0].as_ref().expect("process 0 gathers");
            assert_eq!(first[1], vec![2u8; len], "{len} bytes");
        }
    }

    /// What process 0 cannot decode is an error, after it took the sender's last chunk
    /// (the sender does not wait for ever).
    #[test]
    fn an_undecodable_value_is_an_error_not_a_hang() {
        let got = on_group(2, |ex| match ex.me() {
            0 => gather_first::<String>(ex, String::new()).map(|_| ()),
            _ => gather_first(ex, vec![0xffu8; 3 * CHUNK]).map(|_| ()),
        });
        let e = got[0].as_ref().expect_err("bytes that are not UTF-8");
        assert!(e.contains("from process 1"), "{e}");
        assert!(got[1].is_ok());
    }
}
