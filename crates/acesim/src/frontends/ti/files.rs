//! Which files hold which ranks. A trace is given as one file whose lines start with their
//! rank (all ranks in one file, as SimGrid's shared trace), or as a list of files (one path
//! a line, relative to the list): one path is a shared trace, several are one file per
//! rank in rank order (SimGrid's `smpirun -replay LIST`).

use crate::error::{Error, Location, Result};
use crate::program::ops::read_text;
use std::path::Path;

/// The text of one trace file and the rank it belongs to (`None`: a shared file, whose
/// lines may be for any rank).
#[derive(Debug, Clone)]
pub struct TraceFile {
    pub name: String,
    /// Empty when the files are only checked (`trace_files_checked`): read when needed.
    pub text: String,
    pub rank: Option<u32>,
    pub path: std::path::PathBuf,
}

/// Whether `text` is a list of trace files rather than a trace: its first line that is not
/// empty or a comment does not start with a rank number.
pub fn is_list(text: &str) -> bool {
    match first_line(text) {
        Some(l) => l
            .split([' ', '\t'])
            .next()
            .is_none_or(|w| w.parse::<u32>().is_err()),
        None => false,
    }
}

/// The first line of `text` that is not empty or a comment, trimmed.
pub fn first_line(text: &str) -> Option<&str> {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
}

/// Whether `head` (a file's start) is a SimGrid trace by its content alone: its first line
/// is a rank's `init` (`0 init`, `0 init 1`), which no other format acesim reads starts with.
pub fn looks_like_ti(head: &str) -> bool {
    let Some(l) = first_line(head) else {
        return false;
    };
    let mut w = l.split_whitespace();
    matches!(
        (w.next().map(|r| r.parse::<u32>().is_ok()), w.next()),
        (Some(true), Some("init"))
    )
}

/// Whether the file at `path` starts as a trace (its first line that is not empty or a
/// comment starts with a rank), read up to that line. False when it cannot be read as
/// text there: reading it whole says why.
fn head_is_trace(path: &Path) -> bool {
    use std::io::BufRead;
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut reader = std::io::BufReader::new(f);
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return false,
            Ok(_) => {
                if let Some(l) = first_line(&line) {
                    return !is_list(l);
                }
            }
        }
    }
}

/// The trace files that `path` names: itself, or the files its list names.
pub fn trace_files(path: &Path) -> Result<Vec<TraceFile>> {
    trace_files_with(path, true)
}

/// The same, but the files a list names are checked and not kept (their text is read
/// again when needed: a trace streamed as the run goes).
pub fn trace_files_checked(path: &Path) -> Result<Vec<TraceFile>> {
    trace_files_with(path, false)
}

fn trace_files_with(path: &Path, keep: bool) -> Result<Vec<TraceFile>> {
    let name = path.display().to_string();
    crate::frontends::binary::check_not_binary(path)?;
    if !keep && head_is_trace(path) {
        // A shared trace streamed: its text is read in windows, never whole.
        return Ok(vec![TraceFile {
            name,
            text: String::new(),
            rank: None,
            path: path.to_path_buf(),
        }]);
    }
    let text = read_text(path)?;
    if !is_list(&text) {
        return Ok(vec![TraceFile {
            name,
            text,
            rank: None,
            path: path.to_path_buf(),
        }]);
    }
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut entries = Vec::new();
    let mut offset = 0;
    for raw in text.split('\n') {
        let start = offset;
        offset += raw.len() + 1;
        let entry = raw.trim();
        if entry.is_empty() || entry.starts_with('#') {
            continue;
        }
        let lead = raw.len() - raw.trim_start().len();
        entries.push((entry, start + lead));
    }
    let many = entries.len() > 1;
    let mut files = Vec::with_capacity(entries.len());
    for (r, (entry, at)) in entries.into_iter().enumerate() {
        let file = dir.join(entry);
        let located = |message: String| {
            Error::input(
                Location::in_text(&name, &text, at, entry.len()).with_field("path"),
                message,
            )
        };
        let role = if many {
            format!("rank {r}'s trace file")
        } else {
            "the trace file".to_string()
        };
        if !file.is_file() {
            return Err(located(format!(
                "{role} {} does not exist (a list of trace files names one file a line, relative to the list; one file holds every rank, several are one per rank)",
                file.display()
            )));
        }
        crate::frontends::binary::check_not_binary(&file)?;
        let body = if !keep && !many && head_is_trace(&file) {
            String::new()
        } else {
            read_text(&file)?
        };
        if !body.is_empty() && is_list(&body) {
            return Err(located(format!(
                "{role} {} is itself a list of files, not a trace (its first line does not start with a rank)",
                file.display()
            )));
        }
        files.push(TraceFile {
            name: file.display().to_string(),
            text: if keep { body } else { String::new() },
            rank: many.then_some(r as u32),
            path: file,
        });
    }
    if files.is_empty() {
        return Err(Error::input(
            Location::file(&name),
            "no trace: the file has no action and names no trace file",
        ));
    }
    Ok(files)
}
