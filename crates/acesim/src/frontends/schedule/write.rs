//! Writing a program back as schedule text.

use crate::program::ops::{CollCall, Message, Op, OpKind, Program, NONE, UNDEFINED};
use std::fmt::{self, Write as _};

/// Writes a program back as schedule text. Requests are named `h1, h2, ...`, communicators
/// `c1, c2, ...` (`world` for the world), per rank. Dependency-graph (GOAL) and linked
/// programs have no schedule form.
pub fn write(prog: &Program) -> std::result::Result<String, String> {
    if prog.deps.is_some() {
        return Err("a GOAL program (with dependencies) cannot be written as a schedule".into());
    }
    if prog.linked {
        return Err("the program was already linked (collectives expanded)".into());
    }
    if let Some(s) = &prog.stream {
        return s.source.write_schedule(prog).unwrap_or_else(|| {
            Err("the program is read or made as the run goes (a streamed trace, a motif): it has no schedule form".into())
        });
    }
    Ok(write_ranks(
        prog,
        |r| prog.ops[r].is_empty(),
        |r, out| {
            for op in &prog.ops[r] {
                write_line(out, prog, op);
            }
        },
    ))
}

/// The schedule text of `prog`'s ranks: `body` writes rank `r`'s block, unless `empty(r)`.
pub(super) fn write_ranks(
    prog: &Program,
    empty: impl Fn(usize) -> bool,
    mut body: impl FnMut(usize, &mut String),
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# acesim schedule 1\nranks {}", prog.ranks);
    for r in 0..prog.ranks as usize {
        if empty(r) {
            continue;
        }
        let _ = writeln!(out, "rank {r}");
        body(r, &mut out);
    }
    out
}

/// One operation's line, with its source location.
pub(super) fn write_line(out: &mut String, prog: &Program, op: &Op) {
    let _ = write_op(out, prog, op.kind);
    let _ = writeln!(out, " @{}", prog.location(op.loc));
}

/// One operation, without its source location.
fn write_op(out: &mut String, prog: &Program, kind: OpKind) -> fmt::Result {
    match kind {
        OpKind::Compute { ps } => write!(out, "compute {ps}ps"),
        OpKind::Put {
            dst,
            size,
            tag,
            handle,
            nic,
        } => write!(
            out,
            "put {dst} {size} tag={tag}{}{}",
            handle_opt(handle),
            nic_opt(nic)
        ),
        OpKind::Get {
            src,
            size,
            handle,
            nic,
        } => write!(
            out,
            "get {src} {size}{}{}",
            handle_opt(handle),
            nic_opt(nic)
        ),
        OpKind::Poll { tag } => write!(out, "poll {tag}"),
        OpKind::Complete { handle } => write!(out, "complete {}", req_name(handle)),
        OpKind::RegionBegin { region } => write!(
            out,
            "region_begin {}",
            quote(&prog.regions[region as usize])
        ),
        OpKind::RegionEnd { region } => {
            write!(out, "region_end {}", quote(&prog.regions[region as usize]))
        }
        OpKind::Send { .. } | OpKind::Recv { .. } | OpKind::Isend { .. } | OpKind::Irecv { .. } => {
            write_message(out, kind.message().expect("a message operation"))
        }
        OpKind::Wait { req } => write!(out, "wait {}", req_name(req)),
        OpKind::Test { req } => write!(out, "test {}", req_name(req)),
        OpKind::WaitAll { list, count } => write!(out, "waitall {}", req_list(prog, list, count)),
        OpKind::WaitAny { list, count } => write!(out, "waitany {}", req_list(prog, list, count)),
        OpKind::CommSplit {
            parent,
            color,
            key,
            result,
        } => {
            let color = if color == UNDEFINED {
                "undefined".to_string()
            } else {
                color.to_string()
            };
            write!(
                out,
                "comm_split {color} {key} as=c{result}{}",
                comm_opt(parent)
            )
        }
        OpKind::CommDup { parent, result } => {
            write!(out, "comm_dup as=c{result}{}", comm_opt(parent))
        }
        OpKind::Coll { call } => write_collective(out, &prog.coll_calls[call as usize]),
        OpKind::Collective { .. } => Ok(()),
    }
}

fn write_message(out: &mut String, m: Message) -> fmt::Result {
    write!(out, "{} {} {}", m.name(), m.peer_text(), m.size)?;
    if let Some(req) = m.req {
        write!(out, " req={}", req_name(req))?;
    }
    write!(out, " tag={}{}", m.tag_text(), comm_opt(m.comm))
}

fn write_collective(out: &mut String, k: &CollCall) -> fmt::Result {
    out.push_str(&k.kind);
    if k.kind != "barrier" {
        write!(out, " {}", k.size)?;
    }
    if k.is_rooted() {
        write!(out, " root={}", k.root)?;
    }
    if !k.algorithm.is_empty() {
        write!(out, " algo={}", k.algorithm)?;
    }
    if !k.transport.is_empty() {
        write!(out, " transport={}", k.transport)?;
    }
    if k.segment != 0 {
        write!(out, " segment={}", k.segment)?;
    }
    write!(out, "{}", comm_opt(k.comm))
}

fn req_name(h: u32) -> String {
    format!("h{}", h + 1)
}

fn req_list(prog: &Program, list: u32, count: u32) -> String {
    prog.req_lists[list as usize..(list + count) as usize]
        .iter()
        .map(|&x| req_name(x))
        .collect::<Vec<_>>()
        .join(" ")
}

fn comm_opt(c: u32) -> String {
    if c == 0 {
        String::new()
    } else {
        format!(" comm=c{c}")
    }
}

fn nic_opt(n: u32) -> String {
    if n == NONE {
        String::new()
    } else {
        format!(" nic={n}")
    }
}

fn handle_opt(x: u32) -> String {
    if x == NONE {
        String::new()
    } else {
        format!(" handle={}", req_name(x))
    }
}

fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.:/".contains(c))
    {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    }
}
