//! A shared SimGrid trace (every rank's lines in one file, in no fixed order) replayed as
//! the run goes. One reading finds where each rank's lines start and end; during the run a
//! rank that needs lines scans the file from where it stopped, keeps its own lines, and
//! hands the lines it passes to the ranks they belong to, when it has seen every line of
//! theirs before them (the ranks of a time-ordered file move together, so one scan feeds
//! them all, as SimGrid's own replay does). Those queues are bounded: past the bound a rank
//! scans for itself, so memory stays bounded whatever the file's order (ranks one after
//! another, or interleaved).

use super::actions::FileText;
use super::convert::Converter;
use super::files::TraceFile;
use crate::error::{Error, Result};
use crate::frontends::dumpi::TraceOptions;
use crate::program::ops::Op;
use crate::program::sink::Window;
use crate::program::stream::{RankStream, StreamSource};
use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::sync::{Arc, Mutex};

/// Lines a rank converts at a time.
const WINDOW_LINES: usize = 4096;
/// Lines queued for one rank by other ranks' scans, and for all ranks together.
const RANK_QUEUE: usize = 2 * WINDOW_LINES;
const ALL_QUEUES: usize = 1 << 20;

/// Where a rank's lines are in the file: its first line starts at `first`, after `line`
/// lines; its last ends at `end`.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    first: Cursor,
    end: u64,
}

/// A place in the file: its byte offset and the lines before it.
#[derive(Debug, Clone, Copy, Default)]
struct Cursor {
    off: u64,
    line: u32,
}

/// The rank a line is for, `None` for an empty line or a comment; `Err` for a line that
/// does not start with a rank (the whole reading reports it).
fn line_rank(raw: &str) -> std::result::Result<Option<u32>, ()> {
    let t = raw.trim();
    if t.is_empty() || t.starts_with('#') {
        return Ok(None);
    }
    let word = t.split([' ', '\t', '\r']).next().unwrap_or("");
    word.parse().map(Some).map_err(|_| ())
}

/// Reads the next line into `raw`, moving `at` past it; the place where it starts, or
/// `None` at the end of the file.
fn next_line(
    reader: &mut impl BufRead,
    raw: &mut String,
    at: &mut Cursor,
) -> std::io::Result<Option<Cursor>> {
    raw.clear();
    let n = reader.read_line(raw)?;
    if n == 0 {
        return Ok(None);
    }
    let here = *at;
    *at = Cursor {
        off: at.off + n as u64,
        line: at.line + 1,
    };
    Ok(Some(here))
}

/// Each rank's span in the shared file `f`, or `None` when the file is not a well-formed
/// trace of ranks 0 to N-1 (then it is read whole, which reports why).
pub fn spans(f: &TraceFile) -> Result<Option<Vec<Span>>> {
    let Ok(file) = File::open(&f.path) else {
        return Ok(None);
    };
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut found: BTreeMap<u32, Span> = BTreeMap::new();
    let (mut raw, mut at) = (String::new(), Cursor::default());
    loop {
        let here = match next_line(&mut reader, &mut raw, &mut at) {
            Ok(Some(here)) => here,
            Ok(None) => break,
            Err(_) => return Ok(None),
        };
        match line_rank(&raw) {
            Ok(Some(r)) => {
                found
                    .entry(r)
                    .or_insert(Span {
                        first: here,
                        end: 0,
                    })
                    .end = at.off;
            }
            Ok(None) => {}
            Err(()) => return Ok(None),
        }
    }
    let n = found.len();
    if n == 0
        || found
            .keys()
            .next_back()
            .is_some_and(|&r| r as usize != n - 1)
    {
        return Ok(None);
    }
    Ok(Some(found.into_values().collect()))
}

/// A lock held by a thread that panicked.
fn poisoned<T>(_: T) -> Error {
    Error::Internal("a shared trace's reader panicked".into())
}

/// The streams of a shared file. Each set of cursors serves one job: a job repeated to
/// fill the machine opens every rank once per job.
pub struct SharedSource {
    pub file: TraceFile,
    pub file_id: u32,
    pub spans: Arc<[Span]>,
    pub opts: TraceOptions,
    jobs: Mutex<Vec<Arc<Mutex<Scanner>>>>,
}

impl SharedSource {
    pub fn new(file: TraceFile, file_id: u32, spans: Vec<Span>, opts: TraceOptions) -> Self {
        SharedSource {
            file,
            file_id,
            spans: spans.into(),
            opts,
            jobs: Mutex::new(Vec::new()),
        }
    }
}

impl StreamSource for SharedSource {
    fn open(&self, rank: u32) -> Result<Box<dyn RankStream>> {
        let ranks = self.spans.len() as u32;
        let mut jobs = self.jobs.lock().map_err(poisoned)?;
        let free = jobs
            .iter()
            .find(|s| s.lock().is_ok_and(|s| !s.opened[rank as usize]))
            .cloned();
        let scanner = match free {
            Some(s) => s,
            None => {
                let s = Arc::new(Mutex::new(Scanner::new(&self.spans)));
                jobs.push(s.clone());
                s
            }
        };
        scanner.lock().map_err(poisoned)?.opened[rank as usize] = true;
        Ok(Box::new(SharedRank {
            conv: Converter::one_rank(rank, ranks, &self.opts, Window::new(self.file_id)),
            rank,
            ranks,
            file: self.file.clone(),
            spans: self.spans.clone(),
            scanner,
            lines: Vec::new(),
            done: false,
        }))
    }
}

/// One job's reading of the shared file: each rank's cursor and the lines queued for it.
struct Scanner {
    cursors: Vec<Cursor>,
    queues: Vec<VecDeque<(u32, String)>>,
    queued: usize,
    /// The scan in which a rank's line could not be queued (its later lines cannot be
    /// either, in that scan).
    missed: Vec<u32>,
    scans: u32,
    opened: Vec<bool>,
}

impl Scanner {
    fn new(spans: &[Span]) -> Self {
        Scanner {
            cursors: spans.iter().map(|s| s.first).collect(),
            queues: (0..spans.len()).map(|_| VecDeque::new()).collect(),
            queued: 0,
            missed: vec![0; spans.len()],
            scans: 0,
            opened: vec![false; spans.len()],
        }
    }

    /// Up to a window of rank `r`'s next lines, with their line numbers, into `out`.
    fn next_lines(
        &mut self,
        r: usize,
        f: &TraceFile,
        spans: &[Span],
        out: &mut Vec<(u32, String)>,
    ) -> Result<()> {
        while out.len() < WINDOW_LINES {
            let Some(l) = self.queues[r].pop_front() else {
                break;
            };
            self.queued -= 1;
            out.push(l);
        }
        let start = self.cursors[r];
        if out.len() >= WINDOW_LINES || start.off >= spans[r].end {
            return Ok(());
        }
        let io = |e| Error::io(&f.name, e);
        let mut file = File::open(&f.path).map_err(io)?;
        file.seek(SeekFrom::Start(start.off)).map_err(io)?;
        let mut reader = BufReader::with_capacity(1 << 16, file);
        self.scans += 1;
        let (mut at, mut raw) = (start, String::new());
        while out.len() < WINDOW_LINES && at.off < spans[r].end {
            let Some(here) = next_line(&mut reader, &mut raw, &mut at).map_err(io)? else {
                break;
            };
            match line_rank(&raw) {
                Ok(Some(s)) if s as usize == r => out.push((at.line, raw.clone())),
                Ok(Some(s)) if (s as usize) < self.queues.len() => {
                    self.offer(s as usize, start.off, here.off, at, &raw)
                }
                // A line changed since the first reading: the conversion reports it.
                Err(()) => out.push((at.line, raw.clone())),
                _ => {}
            }
        }
        self.cursors[r] = at;
        Ok(())
    }

    /// Queues rank `s`'s line at `off` (ending at `after`), passed by a scan from
    /// `scan_start`, if every line of `s` before it is already queued or read.
    fn offer(&mut self, s: usize, scan_start: u64, off: u64, after: Cursor, raw: &str) {
        let c = self.cursors[s].off;
        if c > off || self.missed[s] == self.scans {
            return; // already read, or an earlier line of this scan was not queued
        }
        if c < scan_start || self.queues[s].len() >= RANK_QUEUE || self.queued >= ALL_QUEUES {
            self.missed[s] = self.scans;
            return;
        }
        self.queues[s].push_back((after.line, raw.to_string()));
        self.queued += 1;
        self.cursors[s] = after;
    }
}

/// One rank of a shared file, converted a window at a time as its rank runs.
struct SharedRank {
    conv: Converter<Window>,
    rank: u32,
    ranks: u32,
    file: TraceFile,
    spans: Arc<[Span]>,
    scanner: Arc<Mutex<Scanner>>,
    lines: Vec<(u32, String)>,
    done: bool,
}

impl RankStream for SharedRank {
    fn next_ops(&mut self, ops: &mut Vec<Op>, lists: &mut Vec<u32>) -> Result<bool> {
        self.conv.prog.hand_over(ops, lists);
        while !self.done && self.conv.prog.ops.is_empty() {
            self.lines.clear();
            self.scanner.lock().map_err(poisoned)?.next_lines(
                self.rank as usize,
                &self.file,
                &self.spans,
                &mut self.lines,
            )?;
            if self.lines.is_empty() {
                self.done = true;
                self.conv.end_rank(self.rank);
                break;
            }
            for (number, raw) in &self.lines {
                // Each line is its own text, so that errors name its line in the file.
                let t = FileText {
                    name: &self.file.name,
                    text: raw,
                    first_line: number - 1,
                };
                super::convert::convert_lines(&mut self.conv, &t, Some(self.rank), self.ranks)?;
            }
        }
        self.conv.prog.hand_over(ops, lists);
        Ok(!ops.is_empty())
    }
}
