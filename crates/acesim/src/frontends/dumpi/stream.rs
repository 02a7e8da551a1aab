//! A DUMPI trace replayed as the run reaches its calls (`program::stream`): read once for
//! its skeleton (collective calls and communicator creations, and every check the reader
//! makes), then each rank's file again, a window of records at a time, while it runs. Between
//! two windows a rank's file is closed and its buffer dropped, so that thousands of ranks
//! (a job repeated to fill a machine) hold neither descriptors nor buffers.

use super::convert::{RankConverter, TraceOptions};
use super::records::RankFile;
use super::Meta;
use crate::error::Result;
use crate::program::ops::Op;
use crate::program::sink::Window;
use crate::program::stream::{RankStream, StreamSource, Streamed};
use std::collections::HashSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::Arc;

/// Records converted per window: enough that reopening the file costs nothing, few enough
/// that a window is a few hundred kilobytes.
const WINDOW_RECORDS: usize = 4096;

/// A file opened when read and closed between windows, resuming where it was.
pub struct Reopen {
    path: PathBuf,
    file: Option<File>,
    pos: u64,
}

impl Reopen {
    fn file(&mut self) -> std::io::Result<&mut File> {
        let f = match self.file.take() {
            Some(f) => f,
            None => {
                let mut f = File::open(&self.path)?;
                f.seek(SeekFrom::Start(self.pos))?;
                f
            }
        };
        Ok(self.file.insert(f))
    }

    fn close(&mut self) {
        self.file = None;
    }
}

impl Read for Reopen {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file()?.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Reopen {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.pos = self.file()?.seek(to)?;
        Ok(self.pos)
    }
}

/// Opens the ranks of one trace for a run.
struct DumpiSource {
    meta: Meta,
    opts: TraceOptions,
    ignore: HashSet<u16>,
    /// Each rank's file id in the program's locations.
    file_ids: Vec<u32>,
}

impl StreamSource for DumpiSource {
    fn open(&self, rank: u32) -> Result<Box<dyn RankStream>> {
        let path = self.meta.rank_file(rank);
        let name = path.display().to_string();
        let inner = Reopen {
            path,
            file: None,
            pos: 0,
        };
        let file = RankFile::open(inner, &name)?;
        let file_id = self.file_ids[rank as usize];
        let window = Window::new(file_id);
        let conv = RankConverter::new(file, window, rank, file_id, &self.opts, &self.ignore);
        Ok(Box::new(DumpiRank { conv, done: false }))
    }
}

struct DumpiRank {
    conv: RankConverter<Reopen, Window>,
    done: bool,
}

impl RankStream for DumpiRank {
    fn next_ops(&mut self, ops: &mut Vec<Op>, lists: &mut Vec<u32>) -> Result<bool> {
        // The run's last window comes back to be refilled (its memory reused).
        self.conv.sink.hand_over(ops, lists);
        // Records that make no operation (local calls) are read on to the next that does.
        let mut read = 0;
        while !self.done && (read < WINDOW_RECORDS || self.conv.sink.ops.is_empty()) {
            self.done = !self.conv.convert_next()?;
            read += 1;
        }
        let parked = self.conv.file.bytes.park()?;
        parked.close();
        self.conv.sink.hand_over(ops, lists);
        Ok(!ops.is_empty())
    }
}

/// The stream of the trace of `meta` whose ranks' files have ids `file_ids` in the
/// program's locations.
pub fn streamed(
    meta: Meta,
    opts: &TraceOptions,
    ignore: &HashSet<u16>,
    file_ids: Vec<u32>,
) -> Streamed {
    Streamed::new(Arc::new(DumpiSource {
        meta,
        opts: opts.clone(),
        ignore: ignore.clone(),
        file_ids,
    }))
}
