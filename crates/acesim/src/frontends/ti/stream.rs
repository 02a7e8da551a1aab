//! A SimGrid trace of one file per rank replayed as the run reaches its actions
//! (`program::stream`): each file read once for the skeleton (its collectives, every line
//! checked), then again, a window of lines at a time, while its rank runs. A shared file (all
//! ranks in one) is read the same way, its ranks' lines picked out of it (`shared`).

use super::actions::FileText;
use super::convert::{self, Converter};
use super::files::{self, TraceFile};
use super::shared;
use crate::error::{Error, Result};
use crate::frontends::dumpi::{TraceOptions, TraceSummary};
use crate::program::ops::{Op, Program};
use crate::program::sink::{Skeleton, Window};
use crate::program::stream::{RankStream, StreamSource, Streamed};
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::Arc;

/// Lines converted per window.
const WINDOW_LINES: u32 = 4096;

/// Reads the trace at `path` for its skeleton, returning the program that reads the rest
/// as it runs.
pub fn read_streamed(
    path: &std::path::Path,
    opts: &TraceOptions,
) -> Result<(Program, TraceSummary)> {
    let files = files::trace_files_checked(path)?;
    if let [one] = &files[..] {
        if one.rank.is_none() {
            return read_shared(one, path, opts);
        }
    }
    let ranks = files.len() as u32;
    let mut prog = Program::new(ranks);
    let mut conv = Converter::with_sink(ranks, opts, Skeleton(&mut prog));
    for f in &files {
        // A window at a time here too: a file's lines, split into words, take ten times
        // its text.
        let mut windows = LineWindows::new(f);
        while windows.read()? {
            convert::convert_lines(&mut conv, &windows.text(), f.rank, ranks)?;
        }
    }
    let (_, summary) = conv.finish();
    let file_ids = files.iter().map(|f| prog.file_id(&f.name)).collect();
    prog.stream = Some(Streamed::new(Arc::new(TiSource {
        files,
        file_ids,
        ranks,
        opts: opts.clone(),
    })));
    Ok((prog, summary))
}

/// A shared file's skeleton, read a window at a time, and the program that picks each
/// rank's lines out of it as the run goes. A file that is not a well-formed trace is read
/// whole, as `ti::read` does, for its error.
fn read_shared(
    f: &TraceFile,
    path: &std::path::Path,
    opts: &TraceOptions,
) -> Result<(Program, TraceSummary)> {
    let Some(spans) = shared::spans(f)? else {
        return super::read(path, opts);
    };
    let ranks = spans.len() as u32;
    let mut prog = Program::new(ranks);
    let mut conv = Converter::with_sink(ranks, opts, Skeleton(&mut prog));
    let mut windows = LineWindows::new(f);
    while windows.read()? {
        convert::convert_lines(&mut conv, &windows.text(), None, ranks)?;
    }
    let (_, summary) = conv.finish();
    let file_id = prog.file_id(&f.name);
    let source = shared::SharedSource::new(f.clone(), file_id, spans, opts.clone());
    prog.stream = Some(Streamed::new(Arc::new(source)));
    Ok((prog, summary))
}

struct TiSource {
    files: Vec<TraceFile>,
    file_ids: Vec<u32>,
    ranks: u32,
    opts: TraceOptions,
}

impl StreamSource for TiSource {
    fn open(&self, rank: u32) -> Result<Box<dyn RankStream>> {
        let window = Window::new(self.file_ids[rank as usize]);
        Ok(Box::new(TiRank {
            conv: Converter::one_rank(rank, self.ranks, &self.opts, window),
            rank,
            ranks: self.ranks,
            windows: LineWindows::new(&self.files[rank as usize]),
            done: false,
        }))
    }
}

/// A file read a window of whole lines at a time, closed between windows.
struct LineWindows {
    path: PathBuf,
    name: String,
    /// Bytes and lines read before the window.
    pos: u64,
    lines: u32,
    first_line: u32,
    chunk: String,
}

impl LineWindows {
    fn new(f: &TraceFile) -> Self {
        LineWindows {
            path: f.path.clone(),
            name: f.name.clone(),
            pos: 0,
            lines: 0,
            first_line: 0,
            chunk: String::new(),
        }
    }

    /// Reads the next window; false at the end of the file.
    fn read(&mut self) -> Result<bool> {
        let io = |e| Error::io(&self.name, e);
        let mut file = File::open(&self.path).map_err(io)?;
        file.seek(SeekFrom::Start(self.pos)).map_err(io)?;
        let mut reader = BufReader::new(file);
        self.chunk.clear();
        self.first_line = self.lines;
        let mut n = 0;
        while n < WINDOW_LINES {
            let read = reader.read_line(&mut self.chunk).map_err(io)?;
            if read == 0 {
                break;
            }
            self.pos += read as u64;
            n += 1;
        }
        self.lines += n;
        Ok(n > 0)
    }

    /// The window's text, where errors point.
    fn text(&self) -> FileText<'_> {
        FileText {
            name: &self.name,
            text: &self.chunk,
            first_line: self.first_line,
        }
    }
}

/// One rank's file, converted a window at a time as its rank runs.
struct TiRank {
    conv: Converter<Window>,
    rank: u32,
    ranks: u32,
    windows: LineWindows,
    done: bool,
}

impl RankStream for TiRank {
    fn next_ops(&mut self, ops: &mut Vec<Op>, lists: &mut Vec<u32>) -> Result<bool> {
        self.conv.prog.hand_over(ops, lists);
        while !self.done && self.conv.prog.ops.is_empty() {
            if !self.windows.read()? {
                self.done = true;
                self.conv.end_rank(self.rank);
                break;
            }
            let t = self.windows.text();
            convert::convert_lines(&mut self.conv, &t, Some(self.rank), self.ranks)?;
        }
        self.conv.prog.hand_over(ops, lists);
        Ok(!ops.is_empty())
    }
}
