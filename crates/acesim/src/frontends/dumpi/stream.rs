//! A DUMPI trace replayed as the run reaches its calls (`program::stream`): read once for
//! its skeleton (collective calls and communicator creations, and every check the reader
//! makes), then each rank's file again, a window of records at a time, while it runs. Between
//! two windows a rank's file is closed and its buffer dropped, so that thousands of ranks
//! (a job repeated to fill a machine) hold neither descriptors nor buffers.

use super::convert::{RankConverter, Sink, TraceOptions};
use super::records::RankFile;
use super::Meta;
use crate::error::Result;
use crate::program::ops::{CollCall, Op, Program};
use crate::program::stream::{is_structural, RankStream, StreamSource, Streamed};
use std::collections::HashSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::Arc;

/// Records converted per window: enough that reopening the file costs nothing, few enough
/// that a window is a few hundred kilobytes.
const WINDOW_RECORDS: usize = 4096;

/// Keeps what linking needs (collective calls, communicator creations) and counts the
/// handles; drops the rest, which the run reads again.
pub struct Skeleton<'a>(pub &'a mut Program);

impl Sink for Skeleton<'_> {
    fn push(&mut self, rank: u32, op: Op) {
        if is_structural(&op.kind) {
            self.0.ops[rank as usize].push(op);
        }
    }
    fn req_list(&mut self, _reqs: &[u32]) -> u32 {
        0
    }
    fn new_handle(&mut self, rank: u32) -> u32 {
        self.0.new_handle(rank)
    }
    fn coll_call(&mut self, call: CollCall) -> u32 {
        self.0.coll_call(call)
    }
    fn new_comm_handle(&mut self, rank: u32) -> u32 {
        self.0.new_comm_handle(rank)
    }
}

/// One rank's window: its operations and request lists; handles are numbered as the
/// skeleton's reading numbered them (the same records in the same order).
struct Window {
    ops: Vec<Op>,
    lists: Vec<u32>,
    handles: u32,
    comm_handles: u32,
}

impl Sink for Window {
    fn push(&mut self, _rank: u32, op: Op) {
        self.ops.push(op);
    }
    fn req_list(&mut self, reqs: &[u32]) -> u32 {
        self.lists.extend_from_slice(reqs);
        (self.lists.len() - reqs.len()) as u32
    }
    fn new_handle(&mut self, _rank: u32) -> u32 {
        self.handles += 1;
        self.handles - 1
    }
    fn coll_call(&mut self, _call: CollCall) -> u32 {
        0 // replaced by the linked skeleton
    }
    fn new_comm_handle(&mut self, _rank: u32) -> u32 {
        self.comm_handles += 1;
        self.comm_handles - 1
    }
}

/// A file opened when read and closed between windows, resuming where it was.
pub struct Reopen {
    path: PathBuf,
    file: Option<File>,
    pos: u64,
}

impl Reopen {
    fn file(&mut self) -> std::io::Result<&mut File> {
        if self.file.is_none() {
            let mut f = File::open(&self.path)?;
            f.seek(SeekFrom::Start(self.pos))?;
            self.file = Some(f);
        }
        Ok(self.file.as_mut().expect("opened above"))
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
        let window = Window {
            ops: Vec::new(),
            lists: Vec::new(),
            handles: 0,
            comm_handles: 1,
        };
        let file_id = self.file_ids[rank as usize];
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
        let w = &mut self.conv.sink;
        std::mem::swap(&mut w.ops, ops);
        std::mem::swap(&mut w.lists, lists);
        w.ops.clear();
        w.lists.clear();
        // Records that make no operation (local calls) are read on to the next that does.
        let mut read = 0;
        while !self.done && (read < WINDOW_RECORDS || self.conv.sink.ops.is_empty()) {
            self.done = !self.conv.convert_next()?;
            read += 1;
        }
        let parked = self.conv.file.bytes.park()?;
        parked.close();
        let w = &mut self.conv.sink;
        std::mem::swap(&mut w.ops, ops);
        std::mem::swap(&mut w.lists, lists);
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
