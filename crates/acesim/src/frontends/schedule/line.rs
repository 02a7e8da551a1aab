//! One operation line: its keyword, positional arguments and `key=value` options, and the
//! readers of each kind of value with the errors they give.

use crate::error::{Error, Location, Result};
use crate::frontends::schedule::tokens::Tok;
use crate::program::ops::{SrcLoc, ANY};
use crate::units::parse_size;
use smallvec::SmallVec;
use std::fmt;

/// A line of the schedule, for its errors.
#[derive(Clone, Copy)]
pub struct At<'a> {
    pub file: &'a str,
    pub line: usize,
}

impl At<'_> {
    pub fn err(&self, col: usize, field: Option<&str>, msg: impl Into<String>) -> Error {
        let mut loc = Location::at(self.file, self.line, col);
        loc.field = field.map(str::to_string);
        Error::input(loc, msg)
    }
}

/// An operation line of a rank block.
pub struct OpLine<'l, 'a> {
    pub at: At<'l>,
    /// The operation's keyword.
    pub head: &'l Tok<'a>,
    /// Positional arguments and options, inline (a line has a few: no allocation per line).
    pub pos: SmallVec<[&'l Tok<'a>; 4]>,
    opts: SmallVec<[(&'l str, &'l str, &'l Tok<'a>); 4]>,
    /// Where the operation comes from: its `@FILE:LINE`, else this line.
    pub loc: SrcLoc,
    annotated: bool,
    /// The file table `loc` indexes.
    files: &'l [String],
    /// The rank whose block this is, and how many ranks there are.
    pub rank: u32,
    pub ranks: u32,
}

impl<'l, 'a> OpLine<'l, 'a> {
    /// The line of tokens `toks` (keyword first, source location removed); `loc` indexes
    /// `files` and is `annotated` when the line gave it.
    pub fn new(
        at: At<'l>,
        toks: &'l [Tok<'a>],
        loc: SrcLoc,
        annotated: bool,
        files: &'l [String],
        rank: u32,
        ranks: u32,
    ) -> Self {
        let mut pos = SmallVec::new();
        let mut opts = SmallVec::new();
        for t in &toks[1..] {
            // Tokens are short: a plain loop beats a search's set-up.
            match t.text.bytes().position(|b| b == b'=') {
                Some(i) => opts.push((&t.text[..i], &t.text[i + 1..], t)),
                None => pos.push(t),
            }
        }
        OpLine {
            at,
            head: &toks[0],
            pos,
            opts,
            loc,
            annotated,
            files,
            rank,
            ranks,
        }
    }

    /// The keyword.
    pub fn name(&self) -> &'l str {
        &self.head.text
    }

    pub fn err(&self, col: usize, field: Option<&str>, msg: impl Into<String>) -> Error {
        self.at.err(col, field, msg)
    }

    /// An error about the operation's values points at its source line when it has one.
    pub fn op_err(&self, tok: &Tok, field: &str, msg: String) -> Error {
        if self.annotated {
            let location = self.loc.location(self.files).with_field(field);
            Error::input(
                location,
                format!("{msg} ({}, line {})", self.at.file, self.at.line),
            )
        } else {
            self.err(tok.col, Some(field), msg)
        }
    }

    /// Exactly `n` positional arguments; the usage text is formatted only for the error.
    pub fn want(&self, n: usize, usage: fmt::Arguments) -> Result<()> {
        if self.pos.len() != n {
            return Err(self.err(self.head.col, None, format!("expected `{usage}`")));
        }
        Ok(())
    }

    /// Only the options `keys`.
    pub fn allow(&self, keys: &[&str]) -> Result<()> {
        for (k, _, t) in &self.opts {
            if !keys.contains(k) {
                return Err(self.err(
                    t.col,
                    Some(k),
                    format!(
                        "`{}` has no option `{k}` (options: {})",
                        self.name(),
                        if keys.is_empty() {
                            "none".to_string()
                        } else {
                            keys.join(", ")
                        }
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The value of option `key` and its token.
    pub fn opt(&self, key: &str) -> Option<(&'l str, &'l Tok<'a>)> {
        self.opts
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, v, t)| (*v, *t))
    }

    pub fn rank_arg(&self, t: &Tok, field: &str) -> Result<u32> {
        let v: i64 = t.text.parse().map_err(|_| {
            self.err(
                t.col,
                Some(field),
                format!("'{}' is not a rank number", t.text),
            )
        })?;
        let ranks = self.ranks;
        if v < 0 || v >= ranks as i64 {
            return Err(self.op_err(
                t,
                field,
                format!(
                    "rank {v} is out of range: there are {ranks} ranks (0..{})",
                    ranks - 1
                ),
            ));
        }
        Ok(v as u32)
    }

    /// A receive's source: a rank or `any`.
    pub fn src_arg(&self, t: &Tok) -> Result<i64> {
        if t.text == "any" {
            Ok(ANY)
        } else {
            Ok(self.rank_arg(t, "src")? as i64)
        }
    }

    pub fn size_arg(&self, t: &Tok, field: &str) -> Result<u64> {
        if t.text.starts_with('-') {
            return Err(self.op_err(
                t,
                field,
                format!("size {} is negative: expected 0 or more bytes", t.text),
            ));
        }
        parse_size(&t.text).map_err(|m| self.op_err(t, field, m))
    }

    /// Tags are 0 ..= i64::MAX; the negative values belong to wildcards and to the tags
    /// acesim gives collective traffic.
    pub fn tag_arg(&self, t: &Tok, v: &str) -> Result<i64> {
        let digits = v.strip_prefix('-').unwrap_or(v);
        match v.parse::<i64>() {
            Ok(n) if n >= 0 => Ok(n),
            _ if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => Err(self
                .op_err(
                    t,
                    "tag",
                    format!(
                        "tag {v} is out of range: tags are 0 to 2^63-1 (a receive may use tag=any)"
                    ),
                )),
            _ => Err(self.err(t.col, Some("tag"), format!("'{v}' is not an integer tag"))),
        }
    }

    /// Tag option `key` (0 when absent); a receive's may be `any`.
    pub fn tag_opt(&self, key: &str, receive: bool) -> Result<i64> {
        match self.opt(key) {
            Some(("any", _)) if receive => Ok(ANY),
            Some((v, t)) => self.tag_arg(t, v),
            None => Ok(0),
        }
    }

    pub fn nic_arg(&self, t: &Tok, v: &str) -> Result<u32> {
        v.parse::<u32>()
            .map_err(|_| self.err(t.col, Some("nic"), format!("'{v}' is not a NIC index")))
    }
}
