//! Reading a GOAL file, line by line: `num_ranks N`, then `rank R { ... }` blocks of
//! labelled operations and their dependencies.

use crate::error::{Error, Location, Result};
use crate::frontends::goal::dependencies::{resolve, Dep, Labelled};
use crate::frontends::goal::operation::parse_op;
use crate::frontends::goal::text::{blank_block_comments, col_of, err, word_col};
use crate::frontends::lines::{before_comment, lines};
use crate::program::ops::{Communicator, Op, Program, RankDeps, SrcLoc};
use compact_str::CompactString;
use rustc_hash::FxHashMap as HashMap;
use smallvec::SmallVec;

/// Reads a GOAL file.
pub fn parse(file: &str, text: &str) -> Result<Program> {
    let text = blank_block_comments(file, text)?;
    let mut reader = Reader {
        file,
        text: &text,
        prog: None,
        deps: Vec::new(),
        current: None,
        ops: Vec::new(),
        labels: HashMap::default(),
        seen: Vec::new(),
    };
    for (i, raw) in lines(&text).enumerate() {
        reader.line(i + 1, raw)?;
    }
    reader.finish()
}

struct Reader<'a> {
    file: &'a str,
    /// The text, comments blanked.
    text: &'a str,
    /// Present from the `num_ranks N` line on.
    prog: Option<Program>,
    deps: Vec<RankDeps>,
    /// The rank block being read, and the line that opened it.
    current: Option<(u32, usize)>,
    /// Its operations so far, and their labels.
    ops: Vec<Labelled>,
    labels: HashMap<CompactString, u32>,
    /// Ranks whose block has been read.
    seen: Vec<bool>,
}

impl Reader<'_> {
    fn line(&mut self, line: usize, raw: &str) -> Result<()> {
        let content = before_comment(raw).trim();
        if content.is_empty() {
            return Ok(());
        }
        // Any Unicode space separates words; ASCII lines (all that tools write) split faster.
        let words: SmallVec<[&str; 12]> = if content.is_ascii() {
            content.split_ascii_whitespace().collect()
        } else {
            content.split_whitespace().collect()
        };
        if words[0] == "num_ranks" {
            return self.num_ranks(line, raw, &words);
        }
        if self.prog.is_none() {
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
            self.deps[rank as usize] = resolve(self.file, rank, &self.ops, &self.labels)?;
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
        if self.prog.is_some() {
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
        let mut p = Program::new(n);
        p.files.push(self.file.to_string());
        self.prog = Some(p);
        self.deps = vec![RankDeps::default(); n as usize];
        self.seen = vec![false; n as usize];
        Ok(())
    }

    /// `rank R {`, which opens the block of rank R.
    fn open_rank(&mut self, line: usize, raw: &str, words: &[&str]) -> Result<()> {
        if self.current.is_some() {
            return Err(self.err(
                line,
                1,
                None,
                "`rank` inside another rank block (missing `}`?)",
            ));
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
        let ranks = self.prog.as_ref().map_or(0, |p| p.ranks);
        if r >= ranks {
            return Err(self.err(
                line,
                col,
                Some("rank"),
                format!("rank {r} is out of range: num_ranks is {ranks}"),
            ));
        }
        if self.seen[r as usize] {
            return Err(self.err(
                line,
                col,
                Some("rank"),
                format!(
                    "rank {r} has a second block (a rank has one block; its first is at line {})",
                    self.first_block_line(r)
                ),
            ));
        }
        self.seen[r as usize] = true;
        self.current = Some((r, line));
        self.ops.clear();
        self.labels.clear();
        Ok(())
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
    fn dependency(&mut self, line: usize, raw: &str, words: &[&str]) -> Result<()> {
        let Some(&op) = self.labels.get(words[0]) else {
            return Err(self.err(
                line,
                1,
                Some("label"),
                format!("label {} is not defined before this line", words[0]),
            ));
        };
        self.ops[op as usize].deps.push(Dep {
            target: words[2].into(),
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
        words: &[&str],
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
        let p = self.prog.as_mut().expect("after `num_ranks N`");
        let (kind, cpu, nic) = parse_op(self.file, line, raw, &words[1..], p.ranks)?;
        let ops = &mut p.ops[rank as usize];
        self.labels.insert(label.into(), ops.len() as u32);
        ops.push(Op {
            kind,
            loc: SrcLoc {
                file: 0,
                line: line as u32,
            },
        });
        self.ops.push(Labelled {
            label: label.into(),
            line,
            cpu,
            nic,
            deps: Vec::new(),
        });
        Ok(())
    }

    fn finish(self) -> Result<Program> {
        let Some(mut p) = self.prog else {
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
        // Ranks without a block have no operations and no dependencies.
        p.deps = Some(self.deps);
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
