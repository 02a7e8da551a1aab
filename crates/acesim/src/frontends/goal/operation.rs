//! One GOAL operation (`calc`, `send`, `recv`) and its `cpu N` / `nic N` options.

use crate::error::{Error, Result};
use crate::frontends::goal::text::{err, word_col};
use crate::program::ops::{Message, OpKind, ANY, NONE};
use crate::units::{MAX_SIZE, MAX_TIME, PS_PER_NS};

/// CPUs one rank may name with `cpu N` (LogGOPSim's schedules use one or two).
pub const MAX_CPUS: u32 = 64;

/// Tags from here up are Schedgen's collective messages (its `collsbase`).
pub const COLLECTIVE_TAGS: i64 = 1_000_000;

/// The message context of a tag: the world's own (0), or its collective context (1), as
/// `program::link` numbers them.
fn context(tag: i64) -> u32 {
    u32::from(tag >= COLLECTIVE_TAGS)
}

/// An operation (the words after its label) and its CPU and NIC (`NONE`: none given).
pub fn parse_op(
    file: &str,
    line: usize,
    raw: &str,
    w: &[&str],
    ranks: u32,
) -> Result<(OpKind, u32, u32)> {
    let words = Words { file, line, raw, w };
    match w.first().copied() {
        Some("calc") => calc(&words),
        Some(k @ ("send" | "recv")) => message(&words, k == "send", ranks),
        Some(other) => Err(words.bad(
            0,
            "operation",
            format!("unknown GOAL operation `{other}` (expected send, recv or calc)"),
        )),
        None => Err(words.bad(
            0,
            "operation",
            "missing operation after the label".to_string(),
        )),
    }
}

/// `calc NS`: a computation of NS nanoseconds.
fn calc(words: &Words) -> Result<(OpKind, u32, u32)> {
    let t = words.word(1);
    if t.starts_with('-') {
        return Err(words.bad(
            1,
            "time",
            format!("calc time {t} is negative: expected 0 or more nanoseconds"),
        ));
    }
    let ns: u64 = t
        .parse()
        .map_err(|_| words.bad(1, "time", format!("'{t}' is not a time in nanoseconds")))?;
    let (cpu, nic) = words.options(2)?;
    let ps = ns.saturating_mul(PS_PER_NS);
    if ps > MAX_TIME {
        return Err(words.bad(
            1,
            "time",
            format!("calc {t} ns is longer than acesim simulates (10^6 s)"),
        ));
    }
    Ok((OpKind::Compute { ps }, cpu, nic))
}

/// `send SIZEb to RANK tag TAG` or `recv SIZEb from RANK tag TAG`.
fn message(words: &Words, send: bool, ranks: u32) -> Result<(OpKind, u32, u32)> {
    let (k, dir, field) = if send {
        ("send", "to", "dst")
    } else {
        ("recv", "from", "src")
    };
    let w = words.w;
    if w.len() < 6 || w[2] != dir || w[4] != "tag" {
        return Err(words.bad(
            0,
            "operation",
            format!("expected `{k} SIZEb {dir} RANK tag TAG`"),
        ));
    }
    let size = words.size(1)?;
    let peer = words.int(3, field)?;
    let tag = words.int(5, "tag")?;
    let (cpu, nic) = words.options(6)?;
    // A receive from -1 is from any rank.
    let lowest = if send { 0 } else { ANY };
    if peer < lowest || peer >= ranks as i64 {
        return Err(words.bad(
            3,
            field,
            format!("rank {peer} is out of range: num_ranks is {ranks}"),
        ));
    }
    if send && tag < 0 {
        return Err(words.bad(
            5,
            "tag",
            format!("tag {tag} is out of range: a send needs a tag of 0 or more (a negative tag means any tag, on a receive)"),
        ));
    }
    let message = Message {
        send,
        peer,
        size,
        tag: if tag < 0 { ANY } else { tag },
        comm: context(tag),
        req: None,
    };
    Ok((message.op(), cpu, nic))
}

/// The words of an operation, read with errors at their columns.
struct Words<'a> {
    file: &'a str,
    line: usize,
    /// The whole line (the label is its word 0).
    raw: &'a str,
    w: &'a [&'a str],
}

impl Words<'_> {
    fn word(&self, n: usize) -> &str {
        self.w.get(n).copied().unwrap_or("")
    }

    fn bad(&self, n: usize, field: &str, msg: String) -> Error {
        err(
            self.file,
            self.line,
            word_col(self.raw, n + 1),
            Some(field),
            msg,
        )
    }

    /// Bytes, as `8b` or `8`.
    fn size(&self, n: usize) -> Result<u64> {
        let t = self.word(n);
        if t.starts_with('-') {
            return Err(self.bad(
                n,
                "size",
                format!("size {t} is negative: expected 0 or more bytes"),
            ));
        }
        let v: u64 = t
            .trim_end_matches(['b', 'B'])
            .parse()
            .map_err(|_| self.bad(n, "size", format!("'{t}' is not a size in bytes like 8b")))?;
        if v > MAX_SIZE {
            return Err(self.bad(
                n,
                "size",
                format!("{t} is larger than acesim supports (1 TiB)"),
            ));
        }
        Ok(v)
    }

    fn int(&self, n: usize, field: &str) -> Result<i64> {
        let t = self.word(n);
        t.parse()
            .map_err(|_| self.bad(n, field, format!("'{t}' is not an integer {field}")))
    }

    /// Trailing `cpu N` / `nic N` pairs from word `from`: the CPU (default 0) and NIC
    /// (default: chosen, `NONE`).
    fn options(&self, from: usize) -> Result<(u32, u32)> {
        let (mut cpu, mut nic) = (0, NONE);
        let mut i = from;
        while i < self.w.len() {
            let key = self.w[i];
            if key != "cpu" && key != "nic" {
                return Err(self.bad(
                    i,
                    "option",
                    format!("unexpected `{key}` (options: cpu N, nic N)"),
                ));
            }
            let value = self.word(i + 1);
            let n: u32 = value.parse().map_err(|_| {
                self.bad(
                    i + 1,
                    key,
                    format!("'{value}' is not a {key} number (expected `{key} N`, N = 0, 1, ...)"),
                )
            })?;
            if key == "cpu" {
                if n >= MAX_CPUS {
                    return Err(self.bad(
                        i + 1,
                        "cpu",
                        format!(
                            "cpu {n} is out of range: a rank has at most {MAX_CPUS} CPUs (0 to {})",
                            MAX_CPUS - 1
                        ),
                    ));
                }
                cpu = n;
            } else {
                // NONE means "no NIC given"; it is checked against nic.count later.
                nic = n.min(NONE - 1);
            }
            i += 2;
        }
        Ok((cpu, nic))
    }
}
