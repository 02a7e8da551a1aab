//! Reading a schedule, line by line: `ranks N`, then rank blocks of operations.

use crate::error::{Error, Location, Result};
use crate::frontends::schedule::block::Block;
use crate::frontends::schedule::block::OpenLoop;
use crate::frontends::schedule::line::{At, OpLine};
use crate::frontends::schedule::operations::operation;
use crate::frontends::schedule::repeat::{self, Loop};
use crate::frontends::schedule::tokens::{tokenize, Tok};
use crate::program::ops::{intern, Op, Program, SrcLoc};

/// Reads a schedule. `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Program> {
    let mut reader = Reader {
        file,
        text,
        program: None,
        files: vec![file.to_string()],
        seen_rank: Vec::new(),
        block: Block::default(),
        loops: Vec::new(),
        last_block_ops: 0,
    };
    let mut toks: Vec<Tok> = Vec::new();
    for (i, raw) in lines(text).enumerate() {
        reader.line(At { file, line: i + 1 }, raw, &mut toks)?;
    }
    reader.finish()
}

/// The lines of `text`, as `str::lines` gives them (`\n` or `\r\n` ends a line, the last
/// one's end optional), found by `memchr`: short lines make `str::lines` pay its search's
/// set-up on every line.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', text.as_bytes()).map(Some);
    ends.chain([None]).filter_map(move |end| {
        let line = match end {
            Some(end) => {
                let line = &text[start..end];
                start = end + 1;
                line.strip_suffix('\r').unwrap_or(line)
            }
            None if start < text.len() => &text[start..],
            None => return None,
        };
        Some(line)
    })
}

struct Reader<'a> {
    file: &'a str,
    text: &'a str,
    /// Present from the `ranks N` line on.
    program: Option<Program>,
    /// The program's source files: the schedule, then those `@FILE:LINE` names.
    files: Vec<String>,
    seen_rank: Vec<bool>,
    block: Block,
    /// The `repeat` blocks read, by rank.
    loops: Vec<(u32, Loop)>,
    /// Operations of the last rank block read.
    last_block_ops: usize,
}

impl<'a> Reader<'a> {
    fn line(&mut self, at: At, raw: &'a str, toks: &mut Vec<Tok<'a>>) -> Result<()> {
        tokenize(raw, toks).map_err(|(c, m)| at.err(c, None, m))?;
        if toks.is_empty() {
            return Ok(());
        }
        let (loc, annotation) = self.source(at, toks)?;
        let Some(first) = toks.first() else {
            return Err(at.err(
                annotation.unwrap_or(1),
                None,
                "a source location without an operation: expected `OPERATION ... @FILE:LINE`",
            ));
        };
        if first.text == "ranks" {
            return self.ranks(at, toks);
        }
        let Some(prog) = self.program.as_mut() else {
            return Err(at.err(first.col, None, "the schedule must start with `ranks N`"));
        };
        if first.text == "rank" {
            return self.rank(at, toks);
        }
        let Some(rank) = self.block.rank else {
            return Err(at.err(
                first.col,
                None,
                format!("`{}` before any `rank R` line", first.text),
            ));
        };
        if first.text == "repeat" || first.text == "}" {
            return self.repeat(at, toks, rank);
        }
        let (annotated, ranks) = (annotation.is_some(), prog.ranks);
        let l = OpLine::new(at, toks, loc, annotated, &self.files, rank, ranks);
        let kind = operation(&l, prog, &mut self.block)?;
        prog.ops[rank as usize].push(Op { kind, loc });
        Ok(())
    }

    /// `repeat N {`, which opens a loop of the rank, or the `}` that closes it.
    fn repeat(&mut self, at: At, toks: &[Tok], rank: u32) -> Result<()> {
        let prog = self.program.as_ref().expect("after `ranks N`");
        let start = prog.ops[rank as usize].len();
        let head = &toks[0];
        if head.text == "}" {
            if let Some(extra) = toks.get(1) {
                return Err(at.err(extra.col, Some("repeat"), "expected `}` alone on its line"));
            }
            let Some(open) = self.block.close_loop(self.file, rank, &prog.regions)? else {
                return Err(at.err(head.col, Some("repeat"), "`}` without a `repeat N {`"));
            };
            self.loops.push((
                rank,
                Loop {
                    start: open.start,
                    end: start,
                    count: open.count,
                },
            ));
            return Ok(());
        }
        let (Some(n), Some(brace), None) = (toks.get(1), toks.get(2), toks.get(3)) else {
            return Err(at.err(head.col, Some("repeat"), "expected `repeat N {`"));
        };
        if brace.text != "{" {
            return Err(at.err(
                brace.col,
                Some("repeat"),
                "expected `{` after the count: `repeat N {`",
            ));
        }
        let count: u64 = n.text.parse().map_err(|_| {
            at.err(
                n.col,
                Some("repeat"),
                format!("'{}' is not a whole number of iterations", n.text),
            )
        })?;
        if self.block.open_loops.len() >= 64 {
            return Err(at.err(
                head.col,
                Some("repeat"),
                "more than 64 nested `repeat` blocks",
            ));
        }
        self.block.open_loops.push(OpenLoop {
            line: at.line,
            count,
            start,
        });
        Ok(())
    }

    /// Where the line's operation comes from: its trailing `@FILE:LINE` (taken off the
    /// tokens; its column comes back too), else this line.
    fn source(&mut self, at: At, toks: &mut Vec<Tok>) -> Result<(SrcLoc, Option<usize>)> {
        let this_line = SrcLoc {
            file: 0,
            line: at.line as u32,
        };
        let Some(last) = toks.last() else {
            return Ok((this_line, None));
        };
        let Some(text) = last.text.strip_prefix('@') else {
            return Ok((this_line, None));
        };
        let bad = || {
            at.err(
                last.col,
                None,
                format!("'{}' is not a source location like @prog.c:12", last.text),
            )
        };
        let (f, l) = text
            .rsplit_once(':')
            .filter(|(f, _)| !f.is_empty())
            .ok_or_else(bad)?;
        let line: u32 = l.parse().map_err(|_| bad())?;
        let loc = SrcLoc {
            file: intern(&mut self.files, f),
            line,
        };
        let col = last.col;
        toks.pop();
        Ok((loc, Some(col)))
    }

    /// `ranks N`, the first line.
    fn ranks(&mut self, at: At, toks: &[Tok]) -> Result<()> {
        let head = &toks[0];
        if self.program.is_some() {
            return Err(at.err(head.col, Some("ranks"), "`ranks` given twice"));
        }
        let [n] = &toks[1..] else {
            return Err(at.err(head.col, Some("ranks"), "expected `ranks N`"));
        };
        let count: u32 = n.text.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
            at.err(
                n.col,
                Some("ranks"),
                format!("'{}' is not a positive rank count", n.text),
            )
        })?;
        if count > 1 << 26 {
            return Err(at.err(n.col, Some("ranks"), "more than 2^26 ranks"));
        }
        self.program = Some(Program::new(count));
        self.seen_rank = vec![false; count as usize];
        Ok(())
    }

    /// `rank R`, which starts the block of rank R.
    fn rank(&mut self, at: At, toks: &[Tok]) -> Result<()> {
        self.close_block();
        let prog = self.program.as_ref().expect("after `ranks N`");
        let ranks = prog.ranks;
        let [r] = &toks[1..] else {
            return Err(at.err(toks[0].col, Some("rank"), "expected `rank R`"));
        };
        let rv: u32 = r.text.parse().map_err(|_| {
            at.err(
                r.col,
                Some("rank"),
                format!("'{}' is not a rank number", r.text),
            )
        })?;
        if rv >= ranks {
            return Err(at.err(
                r.col,
                Some("rank"),
                format!(
                    "rank {rv} is out of range: there are {ranks} ranks (0..{})",
                    ranks - 1
                ),
            ));
        }
        if self.seen_rank[rv as usize] {
            let first = self.first_block_line(rv);
            return Err(at.err(
                r.col,
                Some("rank"),
                format!("rank {rv} has a second block (a rank has one block; its first is at line {first})"),
            ));
        }
        self.seen_rank[rv as usize] = true;
        self.block.start(rv, self.file, &prog.regions)?;
        // Ranks' blocks tend to be alike: room for as many operations as the last one's
        // saves growing the list op by op (and the shrink after).
        if let Some(prog) = self.program.as_mut() {
            prog.ops[rv as usize].reserve_exact(self.last_block_ops);
        }
        Ok(())
    }

    /// The block before is complete: its operations give back the room their list grew
    /// into (up to half of it; a million ranks' lists hold gigabytes).
    fn close_block(&mut self) {
        if let (Some(prog), Some(rank)) = (self.program.as_mut(), self.block.rank) {
            let ops = &mut prog.ops[rank as usize];
            ops.shrink_to_fit();
            self.last_block_ops = ops.len();
        }
    }

    /// The line of the first block of rank `rank`: found again only on this error path, so
    /// reading stays lean.
    fn first_block_line(&self, rank: u32) -> usize {
        self.text
            .lines()
            .position(|l| {
                let mut w = l.split_whitespace();
                w.next() == Some("rank") && w.next().and_then(|x| x.parse().ok()) == Some(rank)
            })
            .map_or(0, |i| i + 1)
    }

    fn finish(mut self) -> Result<Program> {
        self.close_block();
        let mut prog = self.program.ok_or_else(|| {
            Error::input(
                Location::at(self.file, self.text.lines().count().max(1), 1),
                "empty schedule: expected `ranks N`",
            )
        })?;
        self.block.check_closed(self.file, &prog.regions)?;
        prog.files = self.files;
        if !self.loops.is_empty() {
            repeat::stream(&mut prog, &self.loops);
        }
        Ok(prog)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// Line ends, `\r\n`, a lone `\r`, empty lines and a last line with or without its
        /// end: the lines `str::lines` gives.
        #[test]
        fn lines_are_those_of_str_lines(text in "[a\\r\\n ]{0,40}") {
            let ours: Vec<&str> = super::lines(&text).collect();
            let std: Vec<&str> = text.lines().collect();
            prop_assert_eq!(ours, std);
        }
    }
}
