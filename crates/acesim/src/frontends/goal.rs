//! GOAL schedules (the LogGOPSim / Schedgen text format): per-rank operations with
//! dependencies.
//!
//! ```text
//! num_ranks 2
//! rank 0 {
//!   l1: calc 100
//!   l2: send 8b to 1 tag 0
//!   l2 requires l1
//! }
//! rank 1 {
//!   l1: recv 8b from 0 tag 0
//! }
//! ```
//!
//! `calc` times are nanoseconds (LogGOPSim's unit); sizes are bytes (`8b` or `8`). A rank
//! has one CPU unless its operations name others with `cpu N` (as LogGOPSim, each CPU runs
//! one computation or send overhead at a time); `nic N` sends through the node's NIC `N`
//! (checked against `nic.count`), else NICs are chosen as for every other program. A
//! receive `from -1` or with `tag -1` matches any source/tag; a send's tag is 0 or more.
//! Comments: `//` and `#` to the end of the line, `/* ... */` anywhere (across lines too).
//!
//! Schedgen writes the messages of MPI collectives with tags from 1,000,000 up (its
//! `collsbase`). In MPI they travel on the communicator's collective context, which no
//! wildcard receive of the program can match; acesim keeps them apart the same way: a send
//! or receive with such a tag is collective traffic, and a `tag -1` receive matches only
//! the program's own messages (tags below 1,000,000).

use crate::error::{Error, Location, Result};
use crate::program::{Communicator, Op, OpKind, Program, RankDeps, SrcLoc, ANY, NONE};
use crate::units::{MAX_SIZE, MAX_TIME, PS_PER_NS};
use std::collections::HashMap;

/// CPUs one rank may name with `cpu N` (LogGOPSim's schedules use one or two).
pub const MAX_CPUS: u32 = 64;

/// Tags from here up are Schedgen's collective messages (its `collsbase`).
pub const COLLECTIVE_TAGS: i64 = 1_000_000;

/// The message context of a tag: the world's own (0), or its collective context (1), as
/// `mpi::link` numbers them.
fn context(tag: i64) -> u32 {
    u32::from(tag >= COLLECTIVE_TAGS)
}

struct Pending {
    label: String,
    line: usize,
    /// The `cpu N` and `nic N` options (CPU 0 and no NIC when absent).
    cpu: u32,
    nic: u32,
    /// (label, line, column, is_irequires)
    deps: Vec<(String, usize, usize, bool)>,
}

fn err(file: &str, line: usize, col: usize, field: Option<&str>, msg: impl Into<String>) -> Error {
    let mut loc = Location::at(file, line, col);
    loc.field = field.map(str::to_string);
    Error::input(loc, msg)
}

/// Column (1-based) of the `n`th whitespace-separated word of a line.
fn word_col(line: &str, n: usize) -> usize {
    let mut count = 0;
    let mut in_word = false;
    for (i, c) in line.char_indices() {
        if c.is_whitespace() {
            in_word = false;
        } else if !in_word {
            if count == n {
                return i + 1;
            }
            count += 1;
            in_word = true;
        }
    }
    line.len() + 1
}

/// `text` with every `/* ... */` comment turned into spaces (newlines kept, so lines and
/// columns stay where they were); `/*` inside a `//` or `#` comment starts nothing.
fn blank_block_comments(file: &str, text: &str) -> Result<String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    let (mut line, mut col) = (1usize, 1usize);
    let mut line_comment = false;
    while let Some((_, c)) = chars.next() {
        if c == '\n' {
            line_comment = false;
            out.push(c);
            line += 1;
            col = 1;
            continue;
        }
        let next = chars.peek().map(|&(_, n)| n);
        if !line_comment && (c == '#' || (c == '/' && next == Some('/'))) {
            line_comment = true;
        }
        if line_comment || c != '/' || next != Some('*') {
            out.push(c);
            col += 1;
            continue;
        }
        // A block comment: blank it up to and including `*/`.
        let (start_line, start_col) = (line, col);
        chars.next();
        out.push_str("  ");
        col += 2;
        let mut closed = false;
        while let Some((_, c)) = chars.next() {
            if c == '\n' {
                out.push('\n');
                line += 1;
                col = 1;
            } else if c == '*' && chars.peek().map(|&(_, n)| n) == Some('/') {
                chars.next();
                out.push_str("  ");
                col += 2;
                closed = true;
                break;
            } else {
                out.push(' ');
                col += 1;
            }
        }
        if !closed {
            return Err(err(
                file,
                start_line,
                start_col,
                None,
                "comment `/*` is never closed with `*/`",
            ));
        }
    }
    Ok(out)
}

/// Reads a GOAL file.
pub fn parse(file: &str, text: &str) -> Result<Program> {
    let text = blank_block_comments(file, text)?;
    let text = text.as_str();
    let mut prog: Option<Program> = None;
    let mut deps: Vec<RankDeps> = Vec::new();
    let mut current: Option<(u32, usize)> = None;
    let mut pending: Vec<Pending> = Vec::new();
    let mut labels: HashMap<String, u32> = HashMap::new();
    let mut seen: Vec<bool> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split("//").next().unwrap_or("");
        let content = content.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let words: Vec<&str> = content.split_whitespace().collect();
        let col = |n: usize| word_col(raw, n);
        if words[0] == "num_ranks" {
            if prog.is_some() {
                return Err(err(
                    file,
                    line,
                    1,
                    Some("num_ranks"),
                    "`num_ranks` given twice",
                ));
            }
            let n: u32 = words
                .get(1)
                .and_then(|w| w.parse().ok())
                .filter(|&n| n > 0 && n <= 1 << 26)
                .ok_or_else(|| {
                    err(
                        file,
                        line,
                        col(1),
                        Some("num_ranks"),
                        "expected `num_ranks N` with N a positive integer",
                    )
                })?;
            let mut p = Program::new(n);
            p.files.push(file.to_string());
            prog = Some(p);
            deps = vec![RankDeps::default(); n as usize];
            seen = vec![false; n as usize];
            continue;
        }
        let Some(p) = prog.as_mut() else {
            return Err(err(
                file,
                line,
                1,
                None,
                "a GOAL file starts with `num_ranks N`",
            ));
        };
        if words[0] == "rank" {
            if current.is_some() {
                return Err(err(
                    file,
                    line,
                    1,
                    None,
                    "`rank` inside another rank block (missing `}`?)",
                ));
            }
            if words.len() != 3 || words[2] != "{" {
                return Err(err(file, line, 1, None, "expected `rank R {`"));
            }
            let r: u32 = words[1].parse().map_err(|_| {
                err(
                    file,
                    line,
                    col(1),
                    Some("rank"),
                    format!("'{}' is not a rank number", words[1]),
                )
            })?;
            if r >= p.ranks {
                return Err(err(
                    file,
                    line,
                    col(1),
                    Some("rank"),
                    format!("rank {r} is out of range: num_ranks is {}", p.ranks),
                ));
            }
            if seen[r as usize] {
                return Err(err(
                    file,
                    line,
                    col(1),
                    Some("rank"),
                    format!(
                        "rank {r} has a second block (a rank has one block; its first is at line {})",
                        text.lines()
                            .position(|l| {
                                let w: Vec<&str> = l.split_whitespace().collect();
                                w.len() >= 2 && w[0] == "rank" && w[1].parse() == Ok(r)
                            })
                            .map_or(0, |i| i + 1)
                    ),
                ));
            }
            seen[r as usize] = true;
            current = Some((r, line));
            pending.clear();
            labels.clear();
            continue;
        }
        let Some((rank, _)) = current else {
            return Err(err(
                file,
                line,
                1,
                None,
                format!("`{}` outside a rank block", words[0]),
            ));
        };
        if words[0] == "}" {
            resolve(file, p, &mut deps[rank as usize], rank, &pending, &labels)?;
            current = None;
            continue;
        }
        // Dependency line: `lX requires lY` / `lX irequires lY`.
        if words.len() == 3 && (words[1] == "requires" || words[1] == "irequires") {
            let Some(&op) = labels.get(words[0]) else {
                return Err(err(
                    file,
                    line,
                    1,
                    Some("label"),
                    format!("label {} is not defined before this line", words[0]),
                ));
            };
            pending[op as usize].deps.push((
                words[2].to_string(),
                line,
                col(2),
                words[1] == "irequires",
            ));
            continue;
        }
        // Operation line: `lX: kind ...`.
        let Some(label) = words[0].strip_suffix(':') else {
            return Err(err(
                file,
                line,
                1,
                None,
                format!("expected `LABEL: operation` or `LABEL requires LABEL`, found `{content}`"),
            ));
        };
        if labels.contains_key(label) {
            return Err(err(
                file,
                line,
                1,
                Some("label"),
                format!(
                    "label {label} is defined twice in rank {rank} (first at line {}); labels are unique per rank",
                    pending[labels[label] as usize].line
                ),
            ));
        }
        let (kind, cpu, nic) = parse_op(file, line, raw, &words[1..], p.ranks)?;
        let r = rank as usize;
        labels.insert(label.to_string(), p.ops[r].len() as u32);
        p.ops[r].push(Op {
            kind,
            loc: SrcLoc {
                file: 0,
                line: line as u32,
            },
        });
        pending.push(Pending {
            label: label.to_string(),
            line,
            cpu,
            nic,
            deps: Vec::new(),
        });
    }
    let Some(mut p) = prog else {
        return Err(Error::input(
            Location::at(file, text.lines().count().max(1), 1),
            "empty GOAL file: expected `num_ranks N`",
        ));
    };
    if let Some((r, line)) = current {
        return Err(err(
            file,
            line,
            1,
            None,
            format!("rank {r} block is not closed with `}}`"),
        ));
    }
    // Ranks without a block have no operations.
    for (r, d) in deps.iter_mut().enumerate() {
        if !seen[r] {
            *d = RankDeps::default();
        }
    }
    p.deps = Some(deps);
    // No communicators to resolve: operations already carry their world ranks and message
    // contexts (see `context`).
    p.comms = vec![Communicator {
        name: "world".into(),
        members: (0..p.ranks).collect(),
    }];
    p.linked = true;
    Ok(p)
}

/// One operation and its `cpu` and `nic` options.
fn parse_op(
    file: &str,
    line: usize,
    raw: &str,
    w: &[&str],
    ranks: u32,
) -> Result<(OpKind, u32, u32)> {
    let col = |n: usize| word_col(raw, n + 1);
    let bad = |n: usize, field: &str, msg: String| err(file, line, col(n), Some(field), msg);
    let size = |n: usize| -> Result<u64> {
        let t = w.get(n).copied().unwrap_or("");
        if t.starts_with('-') {
            return Err(bad(
                n,
                "size",
                format!("size {t} is negative: expected 0 or more bytes"),
            ));
        }
        let v: u64 = t
            .trim_end_matches(['b', 'B'])
            .parse()
            .map_err(|_| bad(n, "size", format!("'{t}' is not a size in bytes like 8b")))?;
        if v > MAX_SIZE {
            return Err(bad(
                n,
                "size",
                format!("{t} is larger than acesim supports (1 TiB)"),
            ));
        }
        Ok(v)
    };
    let int = |n: usize, field: &str| -> Result<i64> {
        let t = w.get(n).copied().unwrap_or("");
        t.parse()
            .map_err(|_| bad(n, field, format!("'{t}' is not an integer {field}")))
    };
    // Trailing `cpu N` / `nic N` pairs: the CPU (default 0) and NIC (default: chosen).
    let tail = |from: usize| -> Result<(u32, u32)> {
        let (mut cpu, mut nic) = (0, NONE);
        let mut i = from;
        while i < w.len() {
            let key = w[i];
            if key != "cpu" && key != "nic" {
                return Err(bad(
                    i,
                    "option",
                    format!("unexpected `{key}` (options: cpu N, nic N)"),
                ));
            }
            let value = w.get(i + 1).copied().unwrap_or("");
            let n: u32 = value.parse().map_err(|_| {
                bad(
                    i + 1,
                    key,
                    format!("'{value}' is not a {key} number (expected `{key} N`, N = 0, 1, ...)"),
                )
            })?;
            if key == "cpu" {
                if n >= MAX_CPUS {
                    return Err(bad(
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
    };
    match w.first().copied() {
        Some("calc") => {
            let t = w.get(1).copied().unwrap_or("");
            if t.starts_with('-') {
                return Err(bad(
                    1,
                    "time",
                    format!("calc time {t} is negative: expected 0 or more nanoseconds"),
                ));
            }
            let ns: u64 = t
                .parse()
                .map_err(|_| bad(1, "time", format!("'{t}' is not a time in nanoseconds")))?;
            let (cpu, nic) = tail(2)?;
            let ps = ns.saturating_mul(PS_PER_NS);
            if ps > MAX_TIME {
                return Err(bad(
                    1,
                    "time",
                    format!("calc {t} ns is longer than acesim simulates (10^6 s)"),
                ));
            }
            Ok((OpKind::Compute { ps }, cpu, nic))
        }
        Some(k @ ("send" | "recv")) => {
            let (dir, field) = if k == "send" {
                ("to", "dst")
            } else {
                ("from", "src")
            };
            if w.len() < 6 || w[2] != dir || w[4] != "tag" {
                return Err(bad(
                    0,
                    "operation",
                    format!("expected `{k} SIZEb {dir} RANK tag TAG`"),
                ));
            }
            let size = size(1)?;
            let peer = int(3, field)?;
            let tag = int(5, "tag")?;
            let (cpu, nic) = tail(6)?;
            if k == "send" {
                if peer < 0 || peer >= ranks as i64 {
                    return Err(bad(
                        3,
                        field,
                        format!("rank {peer} is out of range: num_ranks is {ranks}"),
                    ));
                }
                if tag < 0 {
                    return Err(bad(
                        5,
                        "tag",
                        format!("tag {tag} is out of range: a send needs a tag of 0 or more (a negative tag means any tag, on a receive)"),
                    ));
                }
                Ok((
                    OpKind::Send {
                        dst: peer as u32,
                        size,
                        tag,
                        comm: context(tag),
                    },
                    cpu,
                    nic,
                ))
            } else {
                if peer < ANY || peer >= ranks as i64 {
                    return Err(bad(
                        3,
                        field,
                        format!("rank {peer} is out of range: num_ranks is {ranks}"),
                    ));
                }
                Ok((
                    OpKind::Recv {
                        src: peer,
                        size,
                        comm: context(tag),
                        tag: if tag < 0 { ANY } else { tag },
                    },
                    cpu,
                    nic,
                ))
            }
        }
        Some(other) => Err(bad(
            0,
            "operation",
            format!("unknown GOAL operation `{other}` (expected send, recv or calc)"),
        )),
        None => Err(bad(
            0,
            "operation",
            "missing operation after the label".to_string(),
        )),
    }
}

/// Turns a rank's labels into dependency lists and rejects cycles.
fn resolve(
    file: &str,
    p: &Program,
    d: &mut RankDeps,
    rank: u32,
    pending: &[Pending],
    labels: &HashMap<String, u32>,
) -> Result<()> {
    let n = pending.len();
    *d = RankDeps {
        requires: vec![0; n],
        irequires: vec![0; n],
        after_complete: vec![Vec::new(); n],
        after_start: vec![Vec::new(); n],
        labels: pending.iter().map(|x| x.label.clone()).collect(),
        cpu: if pending.iter().any(|x| x.cpu != 0) {
            pending.iter().map(|x| x.cpu).collect()
        } else {
            Vec::new()
        },
        nic: if pending.iter().any(|x| x.nic != NONE) {
            pending.iter().map(|x| x.nic).collect()
        } else {
            Vec::new()
        },
    };
    for (op, pend) in pending.iter().enumerate() {
        for (dep, line, col, is_i) in &pend.deps {
            let Some(&target) = labels.get(dep) else {
                return Err(err(
                    file,
                    *line,
                    *col,
                    Some("label"),
                    format!("rank {rank}: label {dep} is not defined"),
                ));
            };
            if target as usize == op {
                return Err(err(
                    file,
                    *line,
                    *col,
                    Some("label"),
                    format!(
                        "{} depends on itself: an operation can only require others",
                        pend.label
                    ),
                ));
            }
            if *is_i {
                d.irequires[op] += 1;
                d.after_start[target as usize].push(op as u32);
            } else {
                d.requires[op] += 1;
                d.after_complete[target as usize].push(op as u32);
            }
        }
    }
    // Kahn's algorithm over both edge kinds: whatever is left is on a cycle.
    let mut indeg: Vec<u32> = (0..n).map(|i| d.requires[i] + d.irequires[i]).collect();
    let mut stack: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut seen = 0;
    while let Some(i) = stack.pop() {
        seen += 1;
        for &j in d.after_complete[i].iter().chain(&d.after_start[i]) {
            indeg[j as usize] -= 1;
            if indeg[j as usize] == 0 {
                stack.push(j as usize);
            }
        }
    }
    if seen < n {
        let on_cycle: Vec<&str> = (0..n)
            .filter(|&i| indeg[i] > 0)
            .map(|i| pending[i].label.as_str())
            .take(8)
            .collect();
        let first = (0..n).find(|&i| indeg[i] > 0).unwrap_or(0);
        return Err(err(
            file,
            pending[first].line,
            1,
            Some("requires"),
            format!(
                "rank {rank}: the dependencies form a cycle (involving {})",
                on_cycle.join(", ")
            ),
        ));
    }
    let _ = p;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_labels_dependencies_and_operations() {
        let p = parse("t.goal", "num_ranks 2\nrank 0 {\nl1: calc 100\nl2: send 8b to 1 tag 3\nl2 requires l1\n}\nrank 1 {\nl1: recv 8b from 0 tag 3 cpu 0\n}\n").unwrap();
        assert_eq!(p.ops[0][0].kind, OpKind::Compute { ps: 100_000 });
        assert_eq!(
            p.ops[0][1].kind,
            OpKind::Send {
                dst: 1,
                size: 8,
                tag: 3,
                comm: 0
            }
        );
        let d = &p.deps.as_ref().unwrap()[0];
        assert_eq!(d.requires, vec![0, 1]);
        assert_eq!(d.after_complete[0], vec![1]);
        assert_eq!(
            p.ops[1][0].kind,
            OpKind::Recv {
                src: 0,
                size: 8,
                tag: 3,
                comm: 0
            }
        );
    }

    fn e(text: &str) -> String {
        parse("bad.goal", text).unwrap_err().to_string()
    }

    #[test]
    fn bad_goal_input_is_located() {
        assert!(e("rank 0 {\n}\n").contains("starts with `num_ranks N`"));
        assert_eq!(
            e("num_ranks 2\nrank 0 {\nl1: send 8b to 5 tag 0\n}\n"),
            "bad.goal:3:16: field `dst`: rank 5 is out of range: num_ranks is 2"
        );
        assert!(e("num_ranks 2\nrank 0 {\nl1: calc 1\nl1 requires l9\n}\n")
            .starts_with("bad.goal:4:13: field `label`: rank 0: label l9 is not defined"));
        assert!(e(
            "num_ranks 2\nrank 0 {\nl1: calc 1\nl2: calc 1\nl1 requires l2\nl2 irequires l1\n}\n"
        )
        .contains("cycle"));
        assert!(
            e("num_ranks 2\nrank 0 {\nl1: jump 1\n}\n").contains("unknown GOAL operation `jump`")
        );
        assert!(e("num_ranks 2\nrank 0 {\nl1: calc 1\n").contains("not closed"));
        assert!(e("num_ranks 2\nrank 0 {\nl1: send -8b to 1 tag 0\n}\n").contains("negative"));
        assert!(e("num_ranks 2\nrank 0 {\nl1: calc 1 gpu 2\n}\n").contains("unexpected `gpu`"));
        assert!(e("num_ranks 2\nrank 0 {\nl1: send 1b to 1 tag -2\n}\n")
            .starts_with("bad.goal:3:22: field `tag`: tag -2 is out of range"));
        assert!(e("num_ranks 2\nrank 0 {\nl1: calc 99999999999999999\n}\n").contains("longer than"));
    }
}
