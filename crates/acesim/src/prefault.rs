//! Pages a growing array is about to fill, faulted in on another core.
//!
//! A page touched for the first time costs the toucher 1.6 to 4 µs on a virtual machine
//! (docs/performance.md, "Fresh pages"), and a million-rank run fills gigabytes of records
//! one at a time (transfers, messages, the solver's resources and flows). While a serial
//! run's event loop keeps one core busy, another can take those faults: as an array's
//! filled part crosses each 2 MiB of its capacity, the next `AHEAD` chunks are handed to a
//! helper thread, which asks the system to map them (`madvise(MADV_POPULATE_WRITE)`,
//! Linux 5.14 and later). That maps the pages without writing them: what the array holds
//! is untouched, a range freed or moved meanwhile is only a failed call, and at most
//! `AHEAD` chunks an array are mapped before they are used. Results do not depend on it.
//! `populate` maps a range at once on the caller's thread (a partition's own counters).
//!
//! Off unless a run turns it on (`Prefault::while_serial`), and a no-op where the system
//! lacks the call.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, OnceLock};

/// Chunks of an array's capacity handed over at once.
const CHUNK: usize = 2 << 20;
/// Chunks mapped ahead of the one being filled: the helper maps 2 MiB in about a
/// millisecond, the run fills it in tens.
const AHEAD: usize = 2;
const PAGE: usize = 4096;

static ON: AtomicBool = AtomicBool::new(false);
/// The system has no `MADV_POPULATE_WRITE` (found by the helper's first call).
static UNSUPPORTED: AtomicBool = AtomicBool::new(false);
static HELPER: OnceLock<Option<mpsc::Sender<(usize, usize)>>> = OnceLock::new();

/// Mapping ahead while it lives (a serial run on a machine with a core to spare).
pub struct Prefault {
    was: bool,
}

impl Prefault {
    /// On for a run that leaves cores idle: one not told its threads, on more than one core.
    pub fn while_serial(threads: Option<u32>) -> Prefault {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Prefault::set(threads.is_none() && cores > 1)
    }

    /// On or off until dropped.
    pub fn set(on: bool) -> Prefault {
        Prefault {
            was: ON.swap(on && SUPPORTED, Ordering::Relaxed),
        }
    }
}

impl Drop for Prefault {
    fn drop(&mut self) {
        ON.store(self.was, Ordering::Relaxed);
    }
}

const SUPPORTED: bool = cfg!(target_os = "linux");

/// `items` has just grown by one: if its filled part crossed into a new chunk, the chunks
/// after it are mapped ahead. Cheap otherwise (one division).
#[inline]
pub fn grew<T>(items: &Vec<T>) {
    let size = std::mem::size_of::<T>();
    if let Some(chunk) = entered(items.len(), size) {
        crossed(items.as_ptr() as usize, chunk, items.capacity() * size);
    }
}

/// The chunk that the `len`-th element of `size` bytes is the first to write in (its
/// last byte's chunk, when the element before ended in an earlier one).
#[inline(always)]
fn entered(len: usize, size: usize) -> Option<usize> {
    if size == 0 || len < 2 {
        return None;
    }
    let last = len * size - 1;
    let chunk = last / CHUNK;
    (chunk != (last - size) / CHUNK).then_some(chunk)
}

#[cold]
#[inline(never)]
fn crossed(base: usize, chunk: usize, capacity: usize) {
    if !ON.load(Ordering::Relaxed) || UNSUPPORTED.load(Ordering::Relaxed) {
        return;
    }
    let from = (chunk + 1) * CHUNK;
    let to = ((chunk + 1 + AHEAD) * CHUNK).min(capacity);
    if from >= to {
        return;
    }
    if let Some(helper) = HELPER.get_or_init(start) {
        // A helper that has stopped (the call is missing) leaves the pages to the run.
        let _ = helper.send((base + from, to - from));
    }
}

/// Maps the whole pages of `items` now, on this thread, as writing them would (the pages
/// at its two ends, shared with what lies around it, are left to the first write). For
/// zero pages a run reads before it writes them (counters added to): each would take two
/// faults, the second a copy whose stale mapping every other core running the process
/// must be told to drop. Contents are unchanged; a no-op where the system lacks the call.
pub fn populate<T>(items: &mut [T]) {
    if !UNSUPPORTED.load(Ordering::Relaxed)
        && !map(items.as_ptr() as usize, std::mem::size_of_val(items))
    {
        UNSUPPORTED.store(true, Ordering::Relaxed);
    }
}

/// `populate` for each run of the items whose index `keep` accepts (a partition's own
/// links, which lie in runs of consecutive ids).
pub fn populate_where<T>(items: &mut [T], keep: impl Fn(usize) -> bool) {
    let mut i = 0;
    while i < items.len() {
        if !keep(i) {
            i += 1;
            continue;
        }
        let start = i;
        while i < items.len() && keep(i) {
            i += 1;
        }
        populate(&mut items[start..i]);
    }
}

/// The helper thread, or none when it cannot be started.
fn start() -> Option<mpsc::Sender<(usize, usize)>> {
    let (tx, rx) = mpsc::channel::<(usize, usize)>();
    std::thread::Builder::new()
        .name("acesim-prefault".into())
        .spawn(move || {
            for (at, len) in rx {
                if !map(at, len) {
                    UNSUPPORTED.store(true, Ordering::Relaxed);
                    return;
                }
            }
        })
        .ok()?;
    Some(tx)
}

/// Maps the whole pages of `[at, at + len)`; `false` when the system cannot.
#[cfg(target_os = "linux")]
fn map(at: usize, len: usize) -> bool {
    let start = at.next_multiple_of(PAGE);
    let end = (at + len) / PAGE * PAGE;
    if start >= end {
        return true;
    }
    // SAFETY: populating maps pages as a write would, without writing; a range that is
    // no longer mapped (the array moved or was freed) fails with ENOMEM and is skipped.
    let r = unsafe {
        libc::madvise(
            start as *mut libc::c_void,
            end - start,
            libc::MADV_POPULATE_WRITE,
        )
    };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL)
}

#[cfg(not(target_os = "linux"))]
fn map(_: usize, _: usize) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// The switch is the process's: tests that turn it on take turns.
    static TURNS: Mutex<()> = Mutex::new(());

    /// Mapping ahead leaves what an array holds as it was, while it grows, moves and is
    /// freed.
    #[test]
    fn contents_stay_while_mapping_ahead() {
        let _turn = TURNS.lock().unwrap_or_else(|e| e.into_inner());
        let _on = Prefault::set(true);
        let mut v: Vec<u64> = Vec::new();
        for i in 0..3_000_000u64 {
            v.push(i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            grew(&v);
        }
        for (i, x) in v.iter().enumerate() {
            assert_eq!(*x, (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        }
        // A range that is gone is skipped, not an error.
        let gone = v.as_ptr() as usize;
        drop(v);
        assert!(map(gone, 8 * CHUNK));
    }

    /// Crossing into chunk 1 maps chunks 2 and 3 (the helper's work, waited for), and
    /// nothing past them. The block is a fresh mapping of its own (`ZeroPages`: a block
    /// from the allocator may reuse pages touched before).
    #[cfg(target_os = "linux")]
    #[test]
    fn the_chunks_ahead_are_mapped() {
        let len = 8 * CHUNK;
        let block = crate::zero_pages::ZeroPages::<u8>::new(len);
        let base = block.as_ptr() as usize;
        // SAFETY: the block's own mapping; 4 KiB pages, whatever the system's default.
        unsafe { libc::madvise(base as *mut libc::c_void, len, libc::MADV_NOHUGEPAGE) };
        let resident = |chunk: usize| -> usize {
            let mut pages = vec![0u8; CHUNK / PAGE];
            // SAFETY: the chunk lies in the mapping, page-aligned.
            let r = unsafe {
                libc::mincore(
                    (base + chunk * CHUNK) as *mut libc::c_void,
                    CHUNK,
                    pages.as_mut_ptr(),
                )
            };
            assert_eq!(r, 0);
            pages.iter().filter(|&&p| p & 1 == 1).count()
        };
        let _turn = TURNS.lock().unwrap_or_else(|e| e.into_inner());
        let _on = Prefault::set(true);
        assert_eq!(resident(2) + resident(3), 0);
        // An array of bytes filled into chunk 1, of capacity the whole mapping.
        crossed(base, entered(CHUNK + 1, 1).unwrap_or(0), len);
        let whole = CHUNK / PAGE;
        let unsupported = || UNSUPPORTED.load(Ordering::Relaxed);
        let mut waited = 0;
        while resident(3) < whole && waited < 500 && !unsupported() {
            std::thread::sleep(std::time::Duration::from_millis(2));
            waited += 1;
        }
        let seen = [0, 1, 2, 3, 4, 5].map(resident);
        drop(block);
        if unsupported() {
            return; // the system lacks MADV_POPULATE_WRITE
        }
        assert_eq!(seen, [0, 0, whole, whole, 0, 0]);
    }

    /// `populate` maps the whole pages of a slice at once, on the caller's thread, and
    /// leaves what the slice holds, its partial end pages and what lies outside as they were.
    #[cfg(target_os = "linux")]
    #[test]
    fn populate_maps_the_slices_whole_pages() {
        let pages = 16;
        let mut block = crate::zero_pages::ZeroPages::<u64>::new(pages * PAGE / 8);
        let base = block.as_ptr() as usize;
        // SAFETY: the block's own mapping; 4 KiB pages, whatever the system's default.
        unsafe {
            libc::madvise(
                base as *mut libc::c_void,
                pages * PAGE,
                libc::MADV_NOHUGEPAGE,
            )
        };
        let resident = || -> Vec<u8> {
            let mut v = vec![0u8; pages];
            // SAFETY: the block's pages, page-aligned.
            let r =
                unsafe { libc::mincore(base as *mut libc::c_void, pages * PAGE, v.as_mut_ptr()) };
            assert_eq!(r, 0);
            v.iter().map(|p| p & 1).collect()
        };
        // Page 3 is written before: it keeps its value.
        block[3 * PAGE / 8 + 5] = 77;
        // The slice starts in the middle of page 2 and ends in the middle of page 9.
        let (from, to) = (2 * PAGE / 8 + 100, 9 * PAGE / 8 + 7);
        populate(&mut block[from..to]);
        let seen = resident();
        assert_eq!(block[3 * PAGE / 8 + 5], 77);
        assert!(block
            .iter()
            .enumerate()
            .all(|(i, &x)| x == 0 || i == 3 * PAGE / 8 + 5));
        if UNSUPPORTED.load(Ordering::Relaxed) {
            return; // the system lacks MADV_POPULATE_WRITE
        }
        assert_eq!(seen, [0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]);
    }

    /// Only a crossing into a new chunk hands anything over.
    #[test]
    fn crossings_are_per_chunk() {
        for size in [8, 24, 96, 144] {
            let entries: Vec<(usize, usize)> = (0..=4 * CHUNK / size + 1)
                .filter_map(|len| entered(len, size).map(|c| (len, c)))
                .collect();
            // One per chunk, at the first element with a byte in it.
            assert_eq!(entries.len(), 4, "size {size}");
            for (k, &(len, chunk)) in entries.iter().enumerate() {
                assert_eq!(chunk, k + 1);
                assert!((len - 1) * size <= chunk * CHUNK && chunk * CHUNK < len * size);
            }
        }
        assert_eq!(entered(5, 0), None);
    }
}
