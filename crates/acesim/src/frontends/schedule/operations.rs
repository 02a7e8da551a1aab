//! The operations of a rank block, one function per keyword.

use crate::error::Result;
use crate::frontends::schedule::block::Block;
use crate::frontends::schedule::line::OpLine;
use crate::program::collectives::CollKind;
use crate::program::ops::{CollCall, Message, Op, OpKind, Program, NONE, UNDEFINED};
use crate::units::{parse_size, parse_time};

/// The operation of line `l`, in the rank block `block` of `prog`.
pub fn operation(l: &OpLine, prog: &mut Program, block: &mut Block) -> Result<OpKind> {
    match l.name() {
        "compute" => compute(l),
        "put" | "get" => put_get(l, prog, block),
        "send" | "recv" | "isend" | "irecv" => message(l, prog, block),
        "sendrecv" => sendrecv(l, prog, block),
        "wait" | "test" => wait_test(l, block),
        "waitall" | "waitany" => wait_list(l, prog, block),
        "comm_split" | "comm_dup" => comm_create(l, prog, block),
        "barrier" | "bcast" | "reduce" | "allreduce" | "alltoall" | "allgather" | "gather"
        | "scatter" => collective(l, prog, block),
        "poll" => {
            l.want(1, format_args!("poll TAG"))?;
            l.allow(&[])?;
            let t = l.pos[0];
            Ok(OpKind::Poll {
                tag: l.tag_arg(t, &t.text)?,
            })
        }
        "complete" => {
            l.want(1, format_args!("complete HANDLE"))?;
            l.allow(&[])?;
            let handle = block.request(l, l.pos[0])?;
            block.finished(l, l.pos[0])?;
            Ok(OpKind::Complete { handle })
        }
        "region_begin" | "region_end" => region(l, prog, block),
        other => {
            const OPS: [&str; 19] = [
                "compute",
                "put",
                "get",
                "poll",
                "complete",
                "send",
                "recv",
                "isend",
                "irecv",
                "sendrecv",
                "wait",
                "waitall",
                "waitany",
                "test",
                "comm_split",
                "comm_dup",
                "region_begin",
                "region_end",
                "ranks",
            ];
            let collectives = crate::program::collectives::CollKind::ALL
                .iter()
                .map(|k| k.name());
            let hint = crate::error::did_you_mean(other, OPS.iter().copied().chain(collectives));
            Err(l.err(
                l.head.col,
                None,
                format!("unknown operation `{other}`{hint} (expected compute, put, get, poll, complete, send, recv, isend, irecv, sendrecv, wait, waitall, waitany, test, comm_split, comm_dup, a collective, region_begin, region_end)"),
            ))
        }
    }
}

fn compute(l: &OpLine) -> Result<OpKind> {
    l.want(1, format_args!("compute TIME"))?;
    l.allow(&[])?;
    let t = l.pos[0];
    if t.text.starts_with('-') {
        return Err(l.op_err(
            t,
            "time",
            format!("compute time {} is negative: expected 0 or more", t.text),
        ));
    }
    let ps = parse_time(&t.text).map_err(|m| l.op_err(t, "time", m))?;
    Ok(OpKind::Compute { ps })
}

fn put_get(l: &OpLine, prog: &mut Program, block: &mut Block) -> Result<OpKind> {
    let put = l.name() == "put";
    let head = l.name();
    l.want(
        2,
        format_args!("{head} {} SIZE [options]", if put { "DST" } else { "SRC" }),
    )?;
    let peer = l.rank_arg(l.pos[0], if put { "dst" } else { "src" })?;
    let size = l.size_arg(l.pos[1], "size")?;
    let nic = match l.opt("nic") {
        Some((v, t)) => l.nic_arg(t, v)?,
        None => NONE,
    };
    let handle = match l.opt("handle") {
        Some((v, t)) => block.open_request(prog, l, v).map_err(|first| {
            l.op_err(t, "handle", format!("handle '{v}' is reused before the {head} it named at line {first} was completed: `complete {v}` first, or use another name"))
        })?,
        None => NONE,
    };
    if put {
        l.allow(&["tag", "handle", "nic"])?;
        let tag = l.tag_opt("tag", false)?;
        Ok(OpKind::Put {
            dst: peer,
            size,
            tag,
            handle,
            nic,
        })
    } else {
        l.allow(&["handle", "nic"])?;
        Ok(OpKind::Get {
            src: peer,
            size,
            handle,
            nic,
        })
    }
}

/// `send`, `recv`, `isend` or `irecv`.
fn message(l: &OpLine, prog: &mut Program, block: &mut Block) -> Result<OpKind> {
    let head = l.name();
    let nonblocking = head.starts_with('i');
    let send = head.ends_with("send");
    let peer_name = if send { "DST" } else { "SRC" };
    l.want(
        2,
        format_args!(
            "{head} {peer_name} SIZE{} [tag=T] [comm=C]",
            if nonblocking { " req=R" } else { "" }
        ),
    )?;
    l.allow(if nonblocking {
        &["tag", "comm", "req"]
    } else {
        &["tag", "comm"]
    })?;
    let comm = block.comm(l)?;
    let size = l.size_arg(l.pos[1], "size")?;
    let req = if nonblocking {
        let Some((name, t)) = l.opt("req") else {
            return Err(l.err(
                l.head.col,
                Some("req"),
                format!("`{head}` needs a request name: req=NAME"),
            ));
        };
        let req = block.open_request(prog, l, name).map_err(|first| {
            l.op_err(t, "req", format!("request '{name}' is reused before the request it named at line {first} was waited for: `wait {name}` first, or use another name"))
        })?;
        Some(req)
    } else {
        None
    };
    let peer = if send {
        i64::from(l.rank_arg(l.pos[0], "dst")?)
    } else {
        l.src_arg(l.pos[0])?
    };
    let tag = l.tag_opt("tag", !send)?;
    Ok(Message {
        send,
        peer,
        size,
        tag,
        comm,
        req,
    }
    .op())
}

/// An isend and an irecv, waited for together.
fn sendrecv(l: &OpLine, prog: &mut Program, block: &mut Block) -> Result<OpKind> {
    l.want(
        4,
        format_args!("sendrecv DST SIZE SRC SIZE [sendtag=T] [recvtag=T] [comm=C]"),
    )?;
    l.allow(&["sendtag", "recvtag", "comm"])?;
    let comm = block.comm(l)?;
    let dst = l.rank_arg(l.pos[0], "dst")?;
    let ssize = l.size_arg(l.pos[1], "size")?;
    let src = l.src_arg(l.pos[2])?;
    let rsize = l.size_arg(l.pos[3], "size")?;
    let stag = l.tag_opt("sendtag", false)?;
    let rtag = l.tag_opt("recvtag", true)?;
    let (sreq, rreq) = (prog.new_handle(l.rank), prog.new_handle(l.rank));
    let ops = &mut prog.ops[l.rank as usize];
    let isend = OpKind::Isend {
        dst,
        size: ssize,
        tag: stag,
        comm,
        req: sreq,
    };
    let irecv = OpKind::Irecv {
        src: crate::program::source(src),
        size: rsize,
        tag: rtag,
        comm,
        req: rreq,
    };
    ops.push(Op {
        kind: isend,
        loc: l.loc,
    });
    ops.push(Op {
        kind: irecv,
        loc: l.loc,
    });
    let list = prog.req_list(&[sreq, rreq]);
    Ok(OpKind::WaitAll { list, count: 2 })
}

fn wait_test(l: &OpLine, block: &mut Block) -> Result<OpKind> {
    l.want(1, format_args!("{} REQUEST", l.name()))?;
    l.allow(&[])?;
    let req = block.request(l, l.pos[0])?;
    if l.name() == "wait" {
        block.finished(l, l.pos[0])?;
        Ok(OpKind::Wait { req })
    } else {
        // A probe: the name may be used again after it, as after a wait.
        block.forget(&l.pos[0].text);
        Ok(OpKind::Test { req })
    }
}

/// `waitall` or `waitany`.
fn wait_list(l: &OpLine, prog: &mut Program, block: &mut Block) -> Result<OpKind> {
    l.allow(&[])?;
    if l.pos.is_empty() {
        return Err(l.err(
            l.head.col,
            None,
            format!("expected `{} REQUEST...`", l.name()),
        ));
    }
    let reqs = l
        .pos
        .iter()
        .map(|t| block.request(l, t))
        .collect::<Result<Vec<u32>>>()?;
    // Which of a waitany's requests completes is known only when it runs: each name may be
    // reused after it.
    for t in &l.pos {
        block.finished(l, t)?;
    }
    let list = prog.req_list(&reqs);
    let count = reqs.len() as u32;
    if l.name() == "waitall" {
        Ok(OpKind::WaitAll { list, count })
    } else {
        Ok(OpKind::WaitAny { list, count })
    }
}

/// `comm_split` or `comm_dup`.
fn comm_create(l: &OpLine, prog: &mut Program, block: &mut Block) -> Result<OpKind> {
    let head = l.name();
    let split = head == "comm_split";
    if let Some(open) = block.open_loops.last() {
        return Err(l.err(
            l.head.col,
            None,
            format!(
                "{head} inside the `repeat` at line {}: communicators are made once, before the loop",
                open.line
            ),
        ));
    }
    l.want(
        if split { 2 } else { 0 },
        format_args!(
            "{}",
            if split {
                "comm_split COLOR KEY as=NAME [comm=C]"
            } else {
                "comm_dup as=NAME [comm=C]"
            }
        ),
    )?;
    l.allow(&["as", "comm"])?;
    let parent = block.comm(l)?;
    let Some((name, _)) = l.opt("as") else {
        return Err(l.err(
            l.head.col,
            Some("as"),
            format!("`{head}` needs the new communicator's name: as=NAME"),
        ));
    };
    let r = l.rank as usize;
    let result = prog.comm_handles[r];
    prog.comm_handles[r] += 1;
    block.name_comm(name, result);
    if !split {
        return Ok(OpKind::CommDup { parent, result });
    }
    let (c, k) = (l.pos[0], l.pos[1]);
    let color = if c.text == "undefined" {
        UNDEFINED
    } else {
        c.text
            .parse::<i64>()
            .ok()
            .filter(|&c| c >= 0)
            .ok_or_else(|| {
                l.op_err(
                    c,
                    "color",
                    format!(
                        "'{}' is not a color (a non-negative integer or `undefined`)",
                        c.text
                    ),
                )
            })?
    };
    let key = k
        .text
        .parse::<i64>()
        .map_err(|_| l.op_err(k, "key", format!("'{}' is not an integer key", k.text)))?;
    Ok(OpKind::CommSplit {
        parent,
        color,
        key,
        result,
    })
}

fn collective(l: &OpLine, prog: &mut Program, block: &mut Block) -> Result<OpKind> {
    let head = l.name();
    let barrier = head == "barrier";
    let rooted = CollKind::parse(head).is_some_and(CollKind::is_rooted);
    l.want(
        if barrier { 0 } else { 1 },
        format_args!("{head}{} [options]", if barrier { "" } else { " SIZE" }),
    )?;
    let mut keys = vec!["comm", "algo", "segment"];
    if barrier {
        keys.push("transport");
    }
    if rooted {
        keys.push("root");
    }
    l.allow(&keys)?;
    let comm = block.comm(l)?;
    let size = if barrier {
        0
    } else {
        l.size_arg(l.pos[0], "size")?
    };
    let root = match l.opt("root") {
        Some((v, t)) => v
            .parse::<u32>()
            .map_err(|_| l.err(t.col, Some("root"), format!("'{v}' is not a rank number")))?,
        None => 0,
    };
    let transport = match l.opt("transport") {
        Some((v @ ("msg" | "rdma"), _)) => v.to_string(),
        Some((v, t)) => {
            return Err(l.err(
                t.col,
                Some("transport"),
                format!("unknown transport '{v}' (expected msg or rdma)"),
            ))
        }
        None => String::new(),
    };
    let segment = match l.opt("segment") {
        Some((v, t)) => match parse_size(v) {
            Ok(0) => {
                return Err(l.err(
                    t.col,
                    Some("segment"),
                    "the segment size must be at least 1 byte",
                ))
            }
            Ok(n) => n,
            Err(m) => return Err(l.err(t.col, Some("segment"), m)),
        },
        None => 0,
    };
    let call = prog.coll_calls.len() as u32;
    prog.coll_calls.push(CollCall {
        kind: head.to_string(),
        algorithm: l
            .opt("algo")
            .map(|(v, _)| v.to_string())
            .unwrap_or_default(),
        transport,
        size,
        root,
        segment,
        comm,
        sizes: Vec::new(),
    });
    Ok(OpKind::Coll { call })
}

/// `region_begin` or `region_end`: regions nest within a rank block.
fn region(l: &OpLine, prog: &mut Program, block: &mut Block) -> Result<OpKind> {
    l.want(1, format_args!("{} NAME", l.name()))?;
    l.allow(&[])?;
    let t = l.pos[0];
    let id = prog.region_id(&t.text);
    if l.name() == "region_begin" {
        block.open_region(id, l.at.line);
        return Ok(OpKind::RegionBegin { region: id });
    }
    match block.close_region() {
        Some(open) if open == id => Ok(OpKind::RegionEnd { region: id }),
        Some(open) => Err(l.op_err(
            t,
            "region",
            format!(
                "region_end {} but the innermost open region is {}",
                t.text, prog.regions[open as usize]
            ),
        )),
        None => Err(l.op_err(
            t,
            "region",
            format!("region_end {} without a region_begin", t.text),
        )),
    }
}
