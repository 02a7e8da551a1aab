//! Reading a schedule, line by line: `ranks N`, then rank blocks of operations.

use crate::error::{Error, Location, Result};
use crate::frontends::lines::lines;
use crate::frontends::schedule::block::Block;
use crate::frontends::schedule::block::OpenLoop;
use crate::frontends::schedule::line::{At, OpLine};
use crate::frontends::schedule::operations::operation;
use crate::frontends::schedule::repeat::{self, Loop};
use crate::frontends::schedule::tokens::{tokenize, Tok};
use crate::frontends::stretches::StretchReader;
use crate::program::ops::{intern, Op, OpKind, Program, SrcLoc};

/// Reads a schedule. `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Program> {
    let mut reader = Reader::new(file, text);
    reader.read(text, 1)?;
    reader.finish()
}

/// Where a `rank R` line started a block: a part's blocks are checked against those of the
/// parts before it once all are read.
#[derive(Debug, Clone, Copy)]
pub(super) struct BlockStart {
    pub rank: u32,
    pub line: usize,
    pub col: usize,
}

pub(super) struct Reader<'a> {
    pub file: &'a str,
    /// The whole schedule (a part reads a stretch of it).
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
    /// The blocks started, in order (kept by the readers of parts after the first).
    pub starts: Option<Vec<BlockStart>>,
    /// The ranks whose operations are read whole (`only`); `None`: every rank's.
    own: Option<std::sync::Arc<[bool]>>,
}

impl<'a> StretchReader<'a> for Reader<'a> {
    /// A reader of `text` from its first line.
    fn new(file: &'a str, text: &'a str) -> Self {
        Reader {
            file,
            text,
            program: None,
            files: vec![file.to_string()],
            seen_rank: Vec::new(),
            block: Block::default(),
            loops: Vec::new(),
            last_block_ops: 0,
            starts: None,
            own: None,
        }
    }

    /// A reader of a stretch of `text` that starts with a `rank R` line, after `ranks N`.
    fn part(file: &'a str, text: &'a str, ranks: u32) -> Self {
        Reader {
            program: Some(Program::new(ranks)),
            seen_rank: vec![false; ranks as usize],
            starts: Some(Vec::new()),
            ..Reader::new(file, text)
        }
    }

    /// The rank count, once `ranks N` was read.
    fn rank_count(&self) -> Option<u32> {
        self.program.as_ref().map(|p| p.ranks)
    }

    /// Reads the lines of `stretch` (of the text), the first being line `first_line`.
    fn read(&mut self, stretch: &'a str, first_line: usize) -> Result<()> {
        let mut toks: Vec<Tok> = Vec::new();
        for (i, raw) in lines(stretch).enumerate() {
            self.line(
                At {
                    file: self.file,
                    line: first_line + i,
                },
                raw,
                &mut toks,
            )?;
        }
        Ok(())
    }
}

impl<'a> Reader<'a> {
    /// This reader reads whole the blocks of the ranks `own` marks; of the others' it skips
    /// the operations that concern their rank alone (`skips`).
    pub fn only(mut self, own: std::sync::Arc<[bool]>) -> Self {
        self.own = Some(own);
        self
    }

    /// Whether `raw`, a line of the block being read, is skipped (`only`): an operation of
    /// another rank that ties it to no other, outside a `repeat` (whose operations are
    /// counted by position). Collective calls, communicators, regions and `repeat` lines
    /// are read; of a skipped line, the file of its source location (files are numbered
    /// by their first appearance); of a request list (`waitall`, `waitany`, and the two
    /// requests of a `sendrecv`) its length too, which numbers the lists after it.
    fn skips(&self, raw: &str) -> Skip {
        let (Some(own), Some(rank)) = (&self.own, self.block.rank) else {
            return Skip::No;
        };
        if own[rank as usize] || !self.block.open_loops.is_empty() {
            return Skip::No;
        }
        match raw.split_ascii_whitespace().next().unwrap_or("") {
            "put" | "get" | "poll" | "complete" | "compute" | "send" | "recv" | "isend"
            | "irecv" | "wait" | "test" => Skip::Operation,
            "sendrecv" => Skip::Pair,
            "waitall" | "waitany" => Skip::List,
            _ => Skip::No,
        }
    }

    pub fn line(&mut self, at: At, raw: &'a str, toks: &mut Vec<Tok<'a>>) -> Result<()> {
        match self.skips(raw) {
            Skip::No => {}
            Skip::Operation if !raw.contains('@') => return Ok(()),
            skip => {
                // What is wrong with the line is its rank's reader's to report (a partial
                // reading that fails is done again whole: `parse_only`).
                if tokenize(raw, toks).is_ok() && self.source(at, toks).is_ok() {
                    let listed = match skip {
                        Skip::List => toks.len().saturating_sub(1),
                        Skip::Pair => 2,
                        _ => 0,
                    };
                    if let (true, Some(prog)) = (listed > 0, self.program.as_mut()) {
                        prog.req_list(&vec![crate::program::NONE; listed]);
                    }
                }
                return Ok(());
            }
        }
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
            return Err(self.second_block(at, r.col, rv));
        }
        self.seen_rank[rv as usize] = true;
        if let Some(starts) = &mut self.starts {
            starts.push(BlockStart {
                rank: rv,
                line: at.line,
                col: r.col,
            });
        }
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

    /// Rank `rank`'s block at line `at`, column `col`, is its second.
    pub fn second_block(&self, at: At, col: usize, rank: u32) -> Error {
        let first = self.first_block_line(rank);
        at.err(
            col,
            Some("rank"),
            format!("rank {rank} has a second block (a rank has one block; its first is at line {first})"),
        )
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

    /// The end of a part: its last block is complete.
    pub fn end_part(&mut self) -> Result<()> {
        self.close_block();
        let prog = self.program.as_ref().expect("a part reads after `ranks N`");
        self.block.check_closed(self.file, &prog.regions)
    }

    /// Whether rank `rank` has had its block, and marks it as having had it.
    pub fn mark_seen(&mut self, rank: u32) -> bool {
        std::mem::replace(&mut self.seen_rank[rank as usize], true)
    }

    /// Takes in the blocks of `part`, the reader of the stretch after this reader's (and
    /// of the parts it took in): their names of files and regions, request lists and
    /// collective calls are renumbered as one reader of both would have numbered them.
    pub fn absorb(&mut self, part: Reader) {
        let (Some(prog), Some(mut from)) = (self.program.as_mut(), part.program) else {
            return;
        };
        let files: Vec<u32> = part
            .files
            .iter()
            .map(|f| intern(&mut self.files, f))
            .collect();
        let regions: Vec<u32> = from.regions.iter().map(|r| prog.region_id(r)).collect();
        let lists = prog.req_lists.len() as u32;
        prog.req_lists.append(&mut from.req_lists);
        let calls = prog.coll_calls.len() as u32;
        prog.coll_calls.append(&mut from.coll_calls);
        let same = |map: &[u32]| map.iter().enumerate().all(|(i, &m)| i as u32 == m);
        let numbered_alike = same(&files) && same(&regions) && lists == 0 && calls == 0;
        for start in part.starts.iter().flatten() {
            let r = start.rank as usize;
            let mut ops = std::mem::take(&mut from.ops[r]);
            if !numbered_alike {
                for op in &mut ops {
                    renumber(op, &files, &regions, lists, calls);
                }
            }
            prog.ops[r] = ops;
            prog.handles[r] = from.handles[r];
            prog.comm_handles[r] = from.comm_handles[r];
        }
        self.loops.extend(part.loops);
    }

    pub fn finish(mut self) -> Result<Program> {
        self.close_block();
        let mut prog = self.program.ok_or_else(|| {
            Error::input(
                Location::at(self.file, self.text.lines().count().max(1), 1),
                "empty schedule: expected `ranks N`",
            )
        })?;
        self.block.check_closed(self.file, &prog.regions)?;
        prog.files = self.files;
        prog.partial = self.own.is_some();
        if !self.loops.is_empty() {
            repeat::stream(&mut prog, &self.loops);
        }
        Ok(prog)
    }
}

/// What `Reader::only` does with a line.
#[derive(Clone, Copy)]
enum Skip {
    No,
    Operation,
    /// A `sendrecv`: two requests in a list.
    Pair,
    /// A `waitall` or `waitany`: its requests in a list.
    List,
}

/// `op` of a part, numbered as in the whole: `files` and `regions` map the part's ids,
/// `lists` and `calls` are where its request lists and collective calls now start.
fn renumber(op: &mut Op, files: &[u32], regions: &[u32], lists: u32, calls: u32) {
    op.loc.file = files[op.loc.file as usize];
    match &mut op.kind {
        OpKind::RegionBegin { region } | OpKind::RegionEnd { region } => {
            *region = regions[*region as usize]
        }
        OpKind::WaitAll { list, .. } | OpKind::WaitAny { list, .. } => *list += lists,
        OpKind::Coll { call } => *call += calls,
        _ => {}
    }
}
