//! Reading a GOAL file, line by line: `num_ranks N`, then `rank R { ... }` blocks of
//! labelled operations and their dependencies.

use crate::error::{Error, Location, Result};
use crate::frontends::goal::dependencies::{resolve, Dep, Labelled};
use crate::frontends::goal::operation::parse_op;
use crate::frontends::goal::text::{blank_block_comments, col_of, err, word_col};
use crate::frontends::lines::{before_comment, lines};
use crate::frontends::stretches::StretchReader;
use crate::frontends::words;
use crate::program::ops::{Communicator, Op, Program, RankDeps, SrcLoc};
use rustc_hash::FxHashMap as HashMap;
use smallvec::SmallVec;

/// Reads a GOAL file on one thread.
pub fn parse(file: &str, text: &str) -> Result<Program> {
    let text = blank_block_comments(file, text)?;
    let mut reader = Reader::new(file, &text);
    reader.read(&text, 1)?;
    reader.finish()
}

/// A rank block read whole: its operations and their dependencies.
struct Block {
    rank: u32,
    ops: Vec<Op>,
    deps: RankDeps,
}

/// Where a `rank R {` line opened a block.
#[derive(Clone, Copy)]
pub struct BlockStart {
    pub rank: u32,
    pub line: usize,
    pub col: usize,
}

pub struct Reader<'a> {
    file: &'a str,
    /// The whole text, comments blanked (for the line of a rank's first block).
    text: &'a str,
    /// Known from the `num_ranks N` line on.
    ranks: Option<u32>,
    /// The blocks read whole, in the order of the text.
    blocks: Vec<Block>,
    /// Every block opened, in order (the last may still be open).
    pub starts: Vec<BlockStart>,
    /// The rank block being read, and the line that opened it.
    current: Option<(u32, usize)>,
    /// Its operations so far, their labels and dependencies.
    block_ops: Vec<Op>,
    ops: Vec<Labelled<'a>>,
    deps: Vec<Dep<'a>>,
    labels: HashMap<&'a str, u32>,
    /// Ranks whose block this reader has opened.
    seen: Vec<bool>,
}

impl<'a> StretchReader<'a> for Reader<'a> {
    /// A reader of the whole of `text` (comments blanked), from its first line.
    fn new(file: &'a str, text: &'a str) -> Self {
        Reader {
            file,
            text,
            ranks: None,
            blocks: Vec::new(),
            starts: Vec::new(),
            current: None,
            block_ops: Vec::new(),
            ops: Vec::new(),
            deps: Vec::new(),
            labels: HashMap::default(),
            seen: Vec::new(),
        }
    }

    /// A reader of a stretch of `text` that starts at a `rank R {` line, past `num_ranks`.
    fn part(file: &'a str, text: &'a str, ranks: u32) -> Self {
        let mut reader = Reader::new(file, text);
        reader.set_ranks(ranks);
        reader
    }

    /// The rank count, once the `num_ranks` line is read.
    fn rank_count(&self) -> Option<u32> {
        self.ranks
    }

    /// Reads `stretch`, a run of whole lines whose first is line `first_line`.
    fn read(&mut self, stretch: &'a str, first_line: usize) -> Result<()> {
        for (i, raw) in lines(stretch).enumerate() {
            self.line(first_line + i, raw)?;
        }
        Ok(())
    }
}

impl<'a> Reader<'a> {
    fn set_ranks(&mut self, ranks: u32) {
        self.ranks = Some(ranks);
        self.seen = vec![false; ranks as usize];
    }

    /// Whether a block is open (at the end of a stretch: the next `rank` line is an error).
    pub fn in_block(&self) -> bool {
        self.current.is_some()
    }

    /// Marks rank `r`'s block as read; whether it had been already.
    pub fn mark_seen(&mut self, r: u32) -> bool {
        std::mem::replace(&mut self.seen[r as usize], true)
    }

    /// Takes in the blocks of a later stretch (whose ranks `mark_seen` has checked).
    pub fn absorb(&mut self, later: Reader) {
        self.blocks.extend(later.blocks);
        self.current = later.current;
    }

    fn line(&mut self, line: usize, raw: &'a str) -> Result<()> {
        let content = before_comment(raw).trim();
        if content.is_empty() {
            return Ok(());
        }
        // Any Unicode space separates words; short ASCII lines (nearly all that tools
        // write) split from masks of their bytes.
        let words: SmallVec<[&'a str; 12]> = match words::ascii_words(content, words::NO_MARKS) {
            Some(words) => words.map(|(_, w)| w).collect(),
            None => content.split_whitespace().collect(),
        };
        if words[0] == "num_ranks" {
            return self.num_ranks(line, raw, &words);
        }
        if self.ranks.is_none() {
            return Err(self.err(line, 1, None, "a GOAL file starts with `num_ranks N`"));
        }
        if words[0] == "rank" {
            return self.open_rank(line, raw, &words);
        }
        let Some((rank, _)) = self.current else {
            return Err(self.err(
                line,
                1,
                None,
                format!("`{}` outside a rank block", words[0]),
            ));
        };
        if words[0] == "}" {
            let deps = resolve(self.file, rank, &self.ops, &mut self.deps, &self.labels)?;
            // The next block is likely as long: its operations grow no more than once.
            let ops = std::mem::replace(&mut self.block_ops, Vec::with_capacity(self.ops.len()));
            self.blocks.push(Block { rank, ops, deps });
            self.current = None;
            return Ok(());
        }
        if words.len() == 3 && (words[1] == "requires" || words[1] == "irequires") {
            return self.dependency(line, raw, &words);
        }
        self.operation(line, raw, content, &words, rank)
    }

    fn err(&self, line: usize, col: usize, field: Option<&str>, msg: impl Into<String>) -> Error {
        err(self.file, line, col, field, msg)
    }

    /// `num_ranks N`, the first line.
    fn num_ranks(&mut self, line: usize, raw: &str, words: &[&str]) -> Result<()> {
        if self.ranks.is_some() {
            return Err(self.err(line, 1, Some("num_ranks"), "`num_ranks` given twice"));
        }
        let n: u32 = words
            .get(1)
            .and_then(|w| w.parse().ok())
            .filter(|&n| n > 0 && n <= 1 << 26)
            .ok_or_else(|| {
                self.err(
                    line,
                    word_col(raw, 1),
                    Some("num_ranks"),
                    "expected `num_ranks N` with N a positive integer",
                )
            })?;
        self.set_ranks(n);
        Ok(())
    }

    /// `rank R {`, which opens the block of rank R.
    fn open_rank(&mut self, line: usize, raw: &str, words: &[&str]) -> Result<()> {
        if self.current.is_some() {
            return Err(self.rank_inside_block(line));
        }
        if words.len() != 3 || words[2] != "{" {
            return Err(self.err(line, 1, None, "expected `rank R {`"));
        }
        let col = word_col(raw, 1);
        let r: u32 = words[1].parse().map_err(|_| {
            self.err(
                line,
                col,
                Some("rank"),
                format!("'{}' is not a rank number", words[1]),
            )
        })?;
        let ranks = self.ranks.unwrap_or(0);
        if r >= ranks {
            return Err(self.err(
                line,
                col,
                Some("rank"),
                format!("rank {r} is out of range: num_ranks is {ranks}"),
            ));
        }
        if self.mark_seen(r) {
            return Err(self.second_block(line, col, r));
        }
        self.starts.push(BlockStart { rank: r, line, col });
        self.current = Some((r, line));
        self.ops.clear();
        self.deps.clear();
        self.labels.clear();
        Ok(())
    }

    /// The error for a `rank` line at `line` while a block is open.
    pub fn rank_inside_block(&self, line: usize) -> Error {
        self.err(
            line,
            1,
            None,
            "`rank` inside another rank block (missing `}`?)",
        )
    }

    /// The error for a second block of rank `r`, opened at `line`, `col`.
    pub fn second_block(&self, line: usize, col: usize, r: u32) -> Error {
        self.err(
            line,
            col,
            Some("rank"),
            format!(
                "rank {r} has a second block (a rank has one block; its first is at line {})",
                self.first_block_line(r)
            ),
        )
    }

    /// The line of the first block of rank `r` (for the error about its second).
    fn first_block_line(&self, r: u32) -> usize {
        self.text
            .lines()
            .position(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.len() >= 2 && w[0] == "rank" && w[1].parse() == Ok(r)
            })
            .map_or(0, |i| i + 1)
    }

    /// `lX requires lY` / `lX irequires lY`.
    fn dependency(&mut self, line: usize, raw: &'a str, words: &[&'a str]) -> Result<()> {
        let Some(&op) = self.labels.get(words[0]) else {
            return Err(self.err(
                line,
                1,
                Some("label"),
                format!("label {} is not defined before this line", words[0]),
            ));
        };
        self.deps.push(Dep {
            op,
            target: words[2],
            line,
            col: col_of(raw, words[2]),
            start: words[1] == "irequires",
        });
        Ok(())
    }

    /// `lX: kind ...`, an operation of rank `rank`.
    fn operation(
        &mut self,
        line: usize,
        raw: &str,
        content: &str,
        words: &[&'a str],
        rank: u32,
    ) -> Result<()> {
        let Some(label) = words[0].strip_suffix(':') else {
            return Err(self.err(
                line,
                1,
                None,
                format!("expected `LABEL: operation` or `LABEL requires LABEL`, found `{content}`"),
            ));
        };
        if let Some(&first) = self.labels.get(label) {
            return Err(self.err(
                line,
                1,
                Some("label"),
                format!(
                    "label {label} is defined twice in rank {rank} (first at line {}); labels are unique per rank",
                    self.ops[first as usize].line
                ),
            ));
        }
        let ranks = self.ranks.unwrap_or(0);
        let (kind, cpu, nic) = parse_op(self.file, line, raw, &words[1..], ranks)?;
        self.labels.insert(label, self.ops.len() as u32);
        self.block_ops.push(Op {
            kind,
            loc: SrcLoc {
                file: 0,
                line: line as u32,
            },
        });
        self.ops.push(Labelled {
            label,
            line,
            cpu,
            nic,
        });
        Ok(())
    }

    /// The program read, or the error of a file that ends too soon.
    pub fn finish(self) -> Result<Program> {
        let Some(ranks) = self.ranks else {
            return Err(Error::input(
                Location::at(self.file, self.text.lines().count().max(1), 1),
                "empty GOAL file: expected `num_ranks N`",
            ));
        };
        if let Some((r, line)) = self.current {
            return Err(err(
                self.file,
                line,
                1,
                None,
                format!("rank {r} block is not closed with `}}`"),
            ));
        }
        let mut p = Program::new(ranks);
        p.files.push(self.file.to_string());
        // Ranks without a block have no operations and no dependencies.
        let mut deps = vec![RankDeps::default(); ranks as usize];
        for block in self.blocks {
            p.ops[block.rank as usize] = block.ops;
            deps[block.rank as usize] = block.deps;
        }
        p.deps = Some(deps);
        // No communicators to resolve: operations already carry their world ranks and
        // message contexts (see `operation::context`).
        p.comms = vec![Communicator {
            name: "world".into(),
            members: (0..p.ranks).collect(),
        }];
        p.linked = true;
        Ok(p)
    }
}
