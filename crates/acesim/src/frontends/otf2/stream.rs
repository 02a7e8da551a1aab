//! An OTF2 trace replayed as the run reaches its events (`program::stream`): read once for
//! the skeleton (its collectives and communicators, every event checked), then each rank's
//! events again, a window at a time, while its rank runs. The first ranks to start (64,
//! `super::KEPT_OPEN`) keep their location open between windows; the others open it for
//! each window and seek to the first event not yet read, so that thousands of ranks do not
//! hold thousands of open files and read buffers (a reader holds a chunk of the trace).

use super::convert::{self, Converter, Shared};
use super::shim::Archive;
use crate::error::{Error, Location, Result};
use crate::frontends::dumpi::{TraceOptions, TraceSummary};
use crate::program::ops::{Op, Program};
use crate::program::sink::{Skeleton, Window};
use crate::program::stream::{RankStream, StreamSource, Streamed};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Reads the trace whose anchor file is `path` for its skeleton, returning the program
/// that reads each rank's events again, `events` at a time, as it runs, `kept_open` ranks
/// keeping their location open between windows.
pub fn read_in_windows(
    path: &Path,
    opts: &TraceOptions,
    events: u64,
    kept_open: usize,
) -> Result<(Program, TraceSummary)> {
    let (shared, archive) = Shared::open(path, opts)?;
    let shared = Arc::new(shared);
    let mut prog = Program::new(shared.ranks());
    let (summary, last) = convert::convert_all(&shared, archive, Skeleton(&mut prog))?;
    convert::finish_program(&shared, &mut prog, &summary);
    let file_id = prog.file_id(&shared.name);
    prog.stream = Some(Streamed::new(Arc::new(Otf2Source {
        shared,
        file_id,
        last,
        events: events.max(1),
        kept_open: Arc::new(AtomicUsize::new(0)),
        keep_at_most: kept_open,
    })));
    Ok((prog, summary))
}

struct Otf2Source {
    shared: Arc<Shared>,
    file_id: u32,
    /// The position of each rank's last event read by the first reading.
    last: Vec<u64>,
    events: u64,
    /// Ranks whose location is open between windows, and how many may be.
    kept_open: Arc<AtomicUsize>,
    keep_at_most: usize,
}

impl StreamSource for Otf2Source {
    fn open(&self, rank: u32) -> Result<Box<dyn RankStream>> {
        let window = Window::new(self.file_id);
        Ok(Box::new(Otf2Rank {
            conv: Converter::new(self.shared.clone(), window, Some(rank)),
            shared: self.shared.clone(),
            rank,
            location: self.shared.layout.locations[rank as usize],
            last: self.last[rank as usize],
            read: 0,
            events: self.events,
            done: false,
            archive: None,
            kept_open: self.kept_open.clone(),
            keep_at_most: self.keep_at_most,
            keeps: false,
        }))
    }
}

/// One rank's events, converted a window at a time as its rank runs.
struct Otf2Rank {
    conv: Converter<Window>,
    shared: Arc<Shared>,
    rank: u32,
    location: u64,
    /// The position of its last event read by the first reading, and the events read.
    last: u64,
    read: u64,
    events: u64,
    done: bool,
    /// The archive, opened at the next event to read, while the rank keeps it.
    archive: Option<Archive>,
    kept_open: Arc<AtomicUsize>,
    keep_at_most: usize,
    keeps: bool,
}

impl Otf2Rank {
    /// Converts the next window of events; false at the end of the rank's events.
    fn next_window(&mut self) -> Result<bool> {
        if self.read >= self.last {
            self.close();
            return Ok(false);
        }
        let mut archive = match self.archive.take() {
            Some(a) => a,
            None => {
                let a = Archive::open(&self.shared.name)
                    .and_then(|mut a| a.open_location(self.location, self.read + 1).map(|()| a))
                    .map_err(|e| self.shared.library_error(e))?;
                if !self.keeps {
                    let before = self.kept_open.fetch_add(1, Ordering::Relaxed);
                    self.keeps = before < self.keep_at_most;
                    if !self.keeps {
                        self.kept_open.fetch_sub(1, Ordering::Relaxed);
                    }
                }
                a
            }
        };
        let mut failure = None;
        let conv = &mut self.conv;
        let got = archive.read_more(self.location, self.events, &mut |ev| match conv.event(ev) {
            Ok(()) => true,
            Err(e) => {
                failure = Some(e);
                false
            }
        });
        if let Some(e) = failure {
            return Err(e);
        }
        let (n, _) = got.map_err(|e| self.shared.library_error(e))?;
        self.read += n;
        if n < self.events && self.read < self.last {
            return Err(Error::input(
                Location::file(format!(
                    "{}, rank {} (location {})",
                    self.shared.name, self.rank, self.location
                )),
                format!(
                    "the trace changed after it was first read: the rank's events end at {} of {}",
                    self.read, self.last
                ),
            ));
        }
        if self.keeps {
            self.archive = Some(archive);
        }
        Ok(true)
    }

    /// Closes the rank's archive for good.
    fn close(&mut self) {
        self.archive = None;
        if std::mem::take(&mut self.keeps) {
            self.kept_open.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Otf2Rank {
    fn drop(&mut self) {
        self.close();
    }
}

impl RankStream for Otf2Rank {
    fn next_ops(&mut self, ops: &mut Vec<Op>, lists: &mut Vec<u32>) -> Result<bool> {
        // The window may hold operations already (the communicators made at the start).
        while !self.done && self.conv.sink.ops.is_empty() {
            if !self.next_window()? {
                self.done = true;
                self.conv.end_rank();
            }
        }
        self.conv.sink.hand_over(ops, lists);
        Ok(!ops.is_empty())
    }
}
