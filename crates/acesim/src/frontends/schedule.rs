//! The plain-text schedule format (docs/schedule-format.md): reader and writer.

use crate::error::{Error, Location, Result};
use crate::program::{CollCall, Op, OpKind, Program, SrcLoc, ANY, NONE, UNDEFINED};
use crate::units::{parse_size, parse_time};
use std::collections::HashMap;
use std::fmt::Write as _;

/// A token and the 1-based column where it starts. Borrowed from the line unless it was
/// quoted with escapes (a million-rank schedule has tens of millions of tokens).
#[derive(Debug, Clone)]
struct Tok<'a> {
    text: std::borrow::Cow<'a, str>,
    col: usize,
}

/// Splits a line into tokens; `#` starts a comment, `"..."` quotes.
fn tokenize<'a>(
    line: &'a str,
    toks: &mut Vec<Tok<'a>>,
) -> std::result::Result<(), (usize, String)> {
    toks.clear();
    let mut it = line.char_indices().peekable();
    let mut col = 0;
    while let Some((start, c)) = it.next() {
        col += 1;
        // Any Unicode space separates (a non-breaking space pasted from a web page too).
        if c.is_whitespace() {
            continue;
        }
        if c == '#' {
            break;
        }
        let tok_col = col;
        if c == '"' {
            let mut text = String::new();
            let mut closed = false;
            while let Some((_, ch)) = it.next() {
                col += 1;
                match ch {
                    '"' => {
                        closed = true;
                        break;
                    }
                    '\\' => {
                        if let Some((_, esc)) = it.next() {
                            col += 1;
                            text.push(esc);
                        }
                    }
                    ch => text.push(ch),
                }
            }
            if !closed {
                return Err((
                    tok_col,
                    "unterminated quoted string: expected a closing \" on the same line".into(),
                ));
            }
            toks.push(Tok {
                text: std::borrow::Cow::Owned(text),
                col: tok_col,
            });
        } else {
            let mut end = start + c.len_utf8();
            while let Some(&(i, ch)) = it.peek() {
                if ch.is_whitespace() {
                    break;
                }
                end = i + ch.len_utf8();
                col += 1;
                it.next();
            }
            toks.push(Tok {
                text: std::borrow::Cow::Borrowed(&line[start..end]),
                col: tok_col,
            });
        }
    }
    Ok(())
}

struct Parser<'a> {
    file: &'a str,
    line: usize,
}

impl Parser<'_> {
    fn err(&self, col: usize, field: Option<&str>, msg: impl Into<String>) -> Error {
        let mut loc = Location::at(self.file, self.line, col);
        loc.field = field.map(str::to_string);
        Error::input(loc, msg)
    }
}

/// Binds a request name to a slot, allocating only for a new name.
fn bind(names: &mut HashMap<String, u32>, name: &str, slot: u32) {
    match names.get_mut(name) {
        Some(s) => *s = slot,
        None => {
            names.insert(name.to_string(), slot);
        }
    }
}

/// Reads a schedule. `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Program> {
    let mut program: Option<Program> = None;
    let mut current: Option<u32> = None;
    // Per rank: handle name -> handle index; open regions.
    // Names and open regions of the rank block being read (a rank has one block).
    let mut handle_names: HashMap<String, u32> = HashMap::new();
    // Names of requests not yet waited for (or handles not yet completed), with the line
    // that made them: a name is reused only once its request was waited for.
    let mut pending: HashMap<String, usize> = HashMap::new();
    let mut comm_names: HashMap<String, u32> = HashMap::new();
    let mut open_regions: Vec<(u32, usize)> = Vec::new();
    let mut toks: Vec<Tok> = Vec::new();
    let mut seen_rank: Vec<bool> = Vec::new();
    let file_id_schedule;
    let mut files: Vec<String> = vec![file.to_string()];
    {
        file_id_schedule = 0u32;
    }
    for (lineno, raw) in text.lines().enumerate() {
        let p = Parser {
            file,
            line: lineno + 1,
        };
        tokenize(raw, &mut toks).map_err(|(c, m)| p.err(c, None, m))?;
        if toks.is_empty() {
            continue;
        }
        // Source location annotation.
        let mut loc = SrcLoc {
            file: file_id_schedule,
            line: (lineno + 1) as u32,
        };
        let mut loc_text: Option<(String, usize)> = None;
        if let Some(last) = toks.last() {
            if let Some(at) = last.text.strip_prefix('@') {
                let (f, l) = at
                    .rsplit_once(':')
                    .filter(|(f, _)| !f.is_empty())
                    .ok_or_else(|| {
                        p.err(
                            last.col,
                            None,
                            format!("'{}' is not a source location like @prog.c:12", last.text),
                        )
                    })?;
                let l: u32 = l.parse().map_err(|_| {
                    p.err(
                        last.col,
                        None,
                        format!("'{}' is not a source location like @prog.c:12", last.text),
                    )
                })?;
                let fid = match files.iter().position(|x| x == f) {
                    Some(i) => i as u32,
                    None => {
                        files.push(f.to_string());
                        (files.len() - 1) as u32
                    }
                };
                loc = SrcLoc { file: fid, line: l };
                loc_text = Some((format!("{f}:{l}"), last.col));
                toks.pop();
            }
        }
        let Some(first) = toks.first() else {
            let col = loc_text.as_ref().map_or(1, |(_, c)| *c);
            return Err(p.err(
                col,
                None,
                "a source location without an operation: expected `OPERATION ... @FILE:LINE`",
            ));
        };
        let head: &str = &first.text;
        let args = &toks[1..];
        // Errors about an operation's values point at its source line when it has one.
        let op_err = |tok: &Tok, field: &str, msg: String| -> Error {
            match &loc_text {
                Some((src, _)) => {
                    let (f, l) = src.rsplit_once(':').unwrap_or((src.as_str(), "0"));
                    let mut location = Location::file(f).with_field(field);
                    location.line = l.parse().ok();
                    Error::input(location, format!("{msg} ({file}, line {})", lineno + 1))
                }
                None => p.err(tok.col, Some(field), msg),
            }
        };
        if head == "ranks" {
            if program.is_some() {
                return Err(p.err(toks[0].col, Some("ranks"), "`ranks` given twice"));
            }
            let [n] = args else {
                return Err(p.err(toks[0].col, Some("ranks"), "expected `ranks N`"));
            };
            let n: u32 = n.text.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                p.err(
                    n.col,
                    Some("ranks"),
                    format!("'{}' is not a positive rank count", n.text),
                )
            })?;
            if n > 1 << 26 {
                return Err(p.err(args[0].col, Some("ranks"), "more than 2^26 ranks"));
            }
            program = Some(Program::new(n));
            seen_rank = vec![false; n as usize];
            continue;
        }
        let Some(prog) = program.as_mut() else {
            return Err(p.err(toks[0].col, None, "the schedule must start with `ranks N`"));
        };
        let nranks = prog.ranks;
        if head == "rank" {
            let [r] = args else {
                return Err(p.err(toks[0].col, Some("rank"), "expected `rank R`"));
            };
            let rv: u32 = r.text.parse().map_err(|_| {
                p.err(
                    r.col,
                    Some("rank"),
                    format!("'{}' is not a rank number", r.text),
                )
            })?;
            if rv >= nranks {
                return Err(p.err(
                    r.col,
                    Some("rank"),
                    format!(
                        "rank {rv} is out of range: there are {nranks} ranks (0..{})",
                        nranks - 1
                    ),
                ));
            }
            if seen_rank[rv as usize] {
                // Found again only on this error path, so reading stays lean.
                let first = text
                    .lines()
                    .position(|l| {
                        let mut w = l.split_whitespace();
                        w.next() == Some("rank")
                            && w.next().and_then(|x| x.parse().ok()) == Some(rv)
                    })
                    .map_or(0, |i| i + 1);
                return Err(p.err(
                    r.col,
                    Some("rank"),
                    format!("rank {rv} has a second block (a rank has one block; its first is at line {first})"),
                ));
            }
            seen_rank[rv as usize] = true;
            if let (Some(prev), Some(&open)) = (current, open_regions.last()) {
                return Err(unclosed_region(file, prev, open, &prog.regions));
            }
            handle_names.clear();
            pending.clear();
            comm_names.clear();
            open_regions.clear();
            current = Some(rv);
            continue;
        }
        let Some(rank) = current else {
            return Err(p.err(
                toks[0].col,
                None,
                format!("`{head}` before any `rank R` line"),
            ));
        };
        // Positional arguments and key=value options.
        let mut pos: Vec<&Tok> = Vec::new();
        let mut opts: Vec<(&str, &str, &Tok)> = Vec::new();
        for t in args {
            match t.text.split_once('=') {
                Some((k, v)) => opts.push((k, v, t)),
                None => pos.push(t),
            }
        }
        // The usage text is formatted only when it is needed (an error).
        let want = |n: usize, usage: std::fmt::Arguments| -> Result<()> {
            if pos.len() != n {
                return Err(p.err(toks[0].col, None, format!("expected `{usage}`")));
            }
            Ok(())
        };
        let allow = |keys: &[&str]| -> Result<()> {
            for (k, _, t) in &opts {
                if !keys.contains(k) {
                    return Err(p.err(
                        t.col,
                        Some(k),
                        format!(
                            "`{head}` has no option `{k}` (options: {})",
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
        };
        let opt = |key: &str| {
            opts.iter()
                .find(|(k, _, _)| *k == key)
                .map(|(_, v, t)| (*v, *t))
        };
        let rank_arg = |t: &Tok, field: &str| -> Result<u32> {
            let v: i64 = t.text.parse().map_err(|_| {
                p.err(
                    t.col,
                    Some(field),
                    format!("'{}' is not a rank number", t.text),
                )
            })?;
            if v < 0 || v >= nranks as i64 {
                return Err(op_err(
                    t,
                    field,
                    format!(
                        "rank {v} is out of range: there are {nranks} ranks (0..{})",
                        nranks - 1
                    ),
                ));
            }
            Ok(v as u32)
        };
        let size_arg = |t: &Tok, field: &str| -> Result<u64> {
            if t.text.starts_with('-') {
                return Err(op_err(
                    t,
                    field,
                    format!("size {} is negative: expected 0 or more bytes", t.text),
                ));
            }
            parse_size(&t.text).map_err(|m| op_err(t, field, m))
        };
        // Tags are 0 ..= i64::MAX; the negative values belong to wildcards and to the
        // tags acesim gives collective traffic.
        let tag_arg = |t: &Tok, v: &str| -> Result<i64> {
            let digits = v.strip_prefix('-').unwrap_or(v);
            match v.parse::<i64>() {
                Ok(n) if n >= 0 => Ok(n),
                _ if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => Err(op_err(
                    t,
                    "tag",
                    format!("tag {v} is out of range: tags are 0 to 2^63-1 (a receive may use tag=any)"),
                )),
                _ => Err(p.err(t.col, Some("tag"), format!("'{v}' is not an integer tag"))),
            }
        };
        let nic_arg = |t: &Tok, v: &str| -> Result<u32> {
            v.parse::<u32>()
                .map_err(|_| p.err(t.col, Some("nic"), format!("'{v}' is not a NIC index")))
        };
        let r = rank as usize;
        let comm_opt = |names: &HashMap<String, u32>| -> Result<u32> {
            match opt("comm") {
                None | Some(("world", _)) => Ok(0),
                Some((v, t)) => names.get(v).copied().ok_or_else(|| {
                    p.err(t.col, Some("comm"), format!("communicator '{v}' was not created by an earlier comm_split or comm_dup on rank {rank}"))
                }),
            }
        };
        let lookup_req = |names: &HashMap<String, u32>, t: &Tok| -> Result<u32> {
            names.get(&*t.text).copied().ok_or_else(|| {
                op_err(t, "request", format!("request '{}' was not created by an earlier put, get, isend or irecv on rank {rank}", t.text))
            })
        };
        let kind = match head {
            "compute" => {
                want(1, format_args!("compute TIME"))?;
                allow(&[])?;
                let t = pos[0];
                if t.text.starts_with('-') {
                    return Err(op_err(t, "time", format!("compute time {} is negative: expected 0 or more", t.text)));
                }
                let ps = parse_time(&t.text).map_err(|m| op_err(t, "time", m))?;
                OpKind::Compute { ps }
            }
            "put" | "get" => {
                want(2, format_args!("{head} {} SIZE [options]", if head == "put" { "DST" } else { "SRC" }))?;
                let peer_field = if head == "put" { "dst" } else { "src" };
                let peer = rank_arg(pos[0], peer_field)?;
                let size = size_arg(pos[1], "size")?;
                let nic = match opt("nic") {
                    Some((v, t)) => nic_arg(t, v)?,
                    None => NONE,
                };
                let handle = match opt("handle") {
                    // A name used again refers to the new request from here on.
                    Some((v, t)) => {
                        if let Some(&first) = pending.get(v) {
                            return Err(op_err(t, "handle", format!("handle '{v}' is reused before the {head} it named at line {first} was completed: `complete {v}` first, or use another name")));
                        }
                        pending.insert(v.to_string(), p.line);
                        let h = prog.new_handle(rank);
                        bind(&mut handle_names, v, h);
                        h
                    }
                    None => NONE,
                };
                if head == "put" {
                    allow(&["tag", "handle", "nic"])?;
                    let tag = match opt("tag") {
                        Some((v, t)) => tag_arg(t, v)?,
                        None => 0,
                    };
                    OpKind::Put { dst: peer, size, tag, handle, nic }
                } else {
                    allow(&["handle", "nic"])?;
                    OpKind::Get { src: peer, size, handle, nic }
                }
            }
            "send" | "recv" | "isend" | "irecv" => {
                let nonblocking = head.starts_with('i');
                let peer_name = if head.ends_with("send") { "DST" } else { "SRC" };
                want(2, format_args!("{head} {peer_name} SIZE{} [tag=T] [comm=C]", if nonblocking { " req=R" } else { "" }))?;
                allow(if nonblocking { &["tag", "comm", "req"] } else { &["tag", "comm"] })?;
                let comm = comm_opt(&comm_names)?;
                let size = size_arg(pos[1], "size")?;
                let req = if nonblocking {
                    let Some((name, t)) = opt("req") else {
                        return Err(p.err(toks[0].col, Some("req"), format!("`{head}` needs a request name: req=NAME")));
                    };
                    if let Some(&first) = pending.get(name) {
                        return Err(op_err(t, "req", format!("request '{name}' is reused before the request it named at line {first} was waited for: `wait {name}` first, or use another name")));
                    }
                    pending.insert(name.to_string(), p.line);
                    let h = prog.new_handle(rank);
                    bind(&mut handle_names, name, h);
                    h
                } else {
                    NONE
                };
                if head.ends_with("send") {
                    let dst = rank_arg(pos[0], "dst")?;
                    let tag = match opt("tag") {
                        Some((v, t)) => tag_arg(t, v)?,
                        None => 0,
                    };
                    if nonblocking {
                        OpKind::Isend { dst, size, tag, comm, req }
                    } else {
                        OpKind::Send { dst, size, tag, comm }
                    }
                } else {
                    let src = if pos[0].text == "any" { ANY } else { rank_arg(pos[0], "src")? as i64 };
                    let tag = match opt("tag") {
                        Some(("any", _)) => ANY,
                        Some((v, t)) => tag_arg(t, v)?,
                        None => 0,
                    };
                    if nonblocking {
                        OpKind::Irecv { src, size, tag, comm, req }
                    } else {
                        OpKind::Recv { src, size, tag, comm }
                    }
                }
            }
            "sendrecv" => {
                want(4, format_args!("sendrecv DST SIZE SRC SIZE [sendtag=T] [recvtag=T] [comm=C]"))?;
                allow(&["sendtag", "recvtag", "comm"])?;
                let comm = comm_opt(&comm_names)?;
                let dst = rank_arg(pos[0], "dst")?;
                let ssize = size_arg(pos[1], "size")?;
                let src = if pos[2].text == "any" { ANY } else { rank_arg(pos[2], "src")? as i64 };
                let rsize = size_arg(pos[3], "size")?;
                let stag = match opt("sendtag") {
                    Some((v, t)) => tag_arg(t, v)?,
                    None => 0,
                };
                let rtag = match opt("recvtag") {
                    Some(("any", _)) => ANY,
                    Some((v, t)) => tag_arg(t, v)?,
                    None => 0,
                };
                let (sreq, rreq) = (prog.new_handle(rank), prog.new_handle(rank));
                prog.ops[r].push(Op { kind: OpKind::Isend { dst, size: ssize, tag: stag, comm, req: sreq }, loc });
                prog.ops[r].push(Op { kind: OpKind::Irecv { src, size: rsize, tag: rtag, comm, req: rreq }, loc });
                let list = prog.req_list(&[sreq, rreq]);
                OpKind::WaitAll { list, count: 2 }
            }
            "wait" | "test" => {
                want(1, format_args!("{head} REQUEST"))?;
                allow(&[])?;
                let req = lookup_req(&handle_names, pos[0])?;
                pending.remove(&*pos[0].text);
                if head == "wait" {
                    OpKind::Wait { req }
                } else {
                    OpKind::Test { req }
                }
            }
            "waitall" | "waitany" => {
                allow(&[])?;
                if pos.is_empty() {
                    return Err(p.err(toks[0].col, None, format!("expected `{head} REQUEST...`")));
                }
                let reqs = pos.iter().map(|t| lookup_req(&handle_names, t)).collect::<Result<Vec<u32>>>()?;
                // Which of a waitany's requests completes is known only when it runs: each
                // name may be reused after it.
                for t in &pos {
                    pending.remove(&*t.text);
                }
                let list = prog.req_list(&reqs);
                let count = reqs.len() as u32;
                if head == "waitall" {
                    OpKind::WaitAll { list, count }
                } else {
                    OpKind::WaitAny { list, count }
                }
            }
            "comm_split" | "comm_dup" => {
                let split = head == "comm_split";
                want(if split { 2 } else { 0 }, format_args!("{}", if split { "comm_split COLOR KEY as=NAME [comm=C]" } else { "comm_dup as=NAME [comm=C]" }))?;
                allow(&["as", "comm"])?;
                let parent = comm_opt(&comm_names)?;
                let Some((name, _)) = opt("as") else {
                    return Err(p.err(toks[0].col, Some("as"), format!("`{head}` needs the new communicator's name: as=NAME")));
                };
                let result = prog.comm_handles[r];
                prog.comm_handles[r] += 1;
                comm_names.insert(name.to_string(), result);
                if split {
                    let color = if pos[0].text == "undefined" {
                        UNDEFINED
                    } else {
                        pos[0].text.parse::<i64>().ok().filter(|&c| c >= 0).ok_or_else(|| {
                            op_err(pos[0], "color", format!("'{}' is not a color (a non-negative integer or `undefined`)", pos[0].text))
                        })?
                    };
                    let key = pos[1].text.parse::<i64>().map_err(|_| {
                        op_err(pos[1], "key", format!("'{}' is not an integer key", pos[1].text))
                    })?;
                    OpKind::CommSplit { parent, color, key, result }
                } else {
                    OpKind::CommDup { parent, result }
                }
            }
            "barrier" | "bcast" | "reduce" | "allreduce" | "alltoall" | "allgather" | "gather" | "scatter" => {
                let barrier = head == "barrier";
                let rooted = matches!(head, "bcast" | "reduce" | "gather" | "scatter");
                want(if barrier { 0 } else { 1 }, format_args!("{head}{} [options]", if barrier { "" } else { " SIZE" }))?;
                let mut keys = vec!["comm", "algo", "segment"];
                if barrier {
                    keys.push("transport");
                }
                if rooted {
                    keys.push("root");
                }
                allow(&keys)?;
                let comm = comm_opt(&comm_names)?;
                let size = if barrier { 0 } else { size_arg(pos[0], "size")? };
                let root = match opt("root") {
                    Some((v, t)) => v.parse::<u32>().map_err(|_| p.err(t.col, Some("root"), format!("'{v}' is not a rank number")))?,
                    None => 0,
                };
                let transport = match opt("transport") {
                    Some((v @ ("msg" | "rdma"), _)) => v.to_string(),
                    Some((v, t)) => return Err(p.err(t.col, Some("transport"), format!("unknown transport '{v}' (expected msg or rdma)"))),
                    None => String::new(),
                };
                let segment = match opt("segment") {
                    Some((v, t)) => match parse_size(v) {
                        Ok(0) => return Err(p.err(t.col, Some("segment"), "the segment size must be at least 1 byte")),
                        Ok(n) => n,
                        Err(m) => return Err(p.err(t.col, Some("segment"), m)),
                    },
                    None => 0,
                };
                let call = prog.coll_calls.len() as u32;
                prog.coll_calls.push(CollCall {
                    kind: head.to_string(),
                    algorithm: opt("algo").map(|(v, _)| v.to_string()).unwrap_or_default(),
                    transport,
                    size,
                    root,
                    segment,
                    comm,
                });
                OpKind::Coll { call }
            }
            "poll" => {
                want(1, format_args!("poll TAG"))?;
                allow(&[])?;
                OpKind::Poll { tag: tag_arg(pos[0], &pos[0].text)? }
            }
            "complete" => {
                want(1, format_args!("complete HANDLE"))?;
                allow(&[])?;
                let handle = lookup_req(&handle_names, pos[0])?;
                pending.remove(&*pos[0].text);
                OpKind::Complete { handle }
            }
            "region_begin" | "region_end" => {
                want(1, format_args!("{head} NAME"))?;
                allow(&[])?;
                let id = prog.region_id(&pos[0].text);
                if head == "region_begin" {
                    open_regions.push((id, lineno + 1));
                    OpKind::RegionBegin { region: id }
                } else {
                    match open_regions.pop() {
                        Some((open, _)) if open == id => OpKind::RegionEnd { region: id },
                        Some((open, _)) => {
                            return Err(op_err(pos[0], "region", format!(
                                "region_end {} but the innermost open region is {}",
                                pos[0].text, prog.regions[open as usize]
                            )))
                        }
                        None => {
                            return Err(op_err(pos[0], "region", format!("region_end {} without a region_begin", pos[0].text)))
                        }
                    }
                }
            }
            other => {
                return Err(p.err(
                    toks[0].col,
                    None,
                    format!("unknown operation `{other}` (expected compute, put, get, poll, complete, send, recv, isend, irecv, sendrecv, wait, waitall, waitany, test, comm_split, comm_dup, a collective, region_begin, region_end)"),
                ))
            }
        };
        prog.ops[r].push(Op { kind, loc });
    }
    let mut prog = program.ok_or_else(|| {
        Error::input(
            Location::at(file, text.lines().count().max(1), 1),
            "empty schedule: expected `ranks N`",
        )
    })?;
    if let (Some(r), Some(&open)) = (current, open_regions.last()) {
        return Err(unclosed_region(file, r, open, &prog.regions));
    }
    prog.files = files;
    Ok(prog)
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
    let mut out = String::new();
    let _ = writeln!(out, "# acesim schedule 1\nranks {}", prog.ranks);
    let any = |v: i64| {
        if v == ANY {
            "any".to_string()
        } else {
            v.to_string()
        }
    };
    let h = |h: u32| format!("h{}", h + 1);
    let c = |c: u32| {
        if c == 0 {
            String::new()
        } else {
            format!(" comm=c{c}")
        }
    };
    let list = |l: u32, n: u32| {
        prog.req_lists[l as usize..(l + n) as usize]
            .iter()
            .map(|&x| h(x))
            .collect::<Vec<_>>()
            .join(" ")
    };
    for (r, ops) in prog.ops.iter().enumerate() {
        if ops.is_empty() {
            continue;
        }
        let _ = writeln!(out, "rank {r}");
        for op in ops {
            let nic = |n: u32| {
                if n == NONE {
                    String::new()
                } else {
                    format!(" nic={n}")
                }
            };
            let handle = |x: u32| {
                if x == NONE {
                    String::new()
                } else {
                    format!(" handle={}", h(x))
                }
            };
            let _ = match op.kind {
                OpKind::Compute { ps } => write!(out, "compute {ps}ps"),
                OpKind::Put {
                    dst,
                    size,
                    tag,
                    handle: x,
                    nic: n,
                } => write!(out, "put {dst} {size} tag={tag}{}{}", handle(x), nic(n)),
                OpKind::Get {
                    src,
                    size,
                    handle: x,
                    nic: n,
                } => write!(out, "get {src} {size}{}{}", handle(x), nic(n)),
                OpKind::Poll { tag } => write!(out, "poll {tag}"),
                OpKind::Complete { handle: x } => write!(out, "complete {}", h(x)),
                OpKind::RegionBegin { region } => write!(
                    out,
                    "region_begin {}",
                    quote(&prog.regions[region as usize])
                ),
                OpKind::RegionEnd { region } => {
                    write!(out, "region_end {}", quote(&prog.regions[region as usize]))
                }
                OpKind::Send {
                    dst,
                    size,
                    tag,
                    comm,
                } => write!(out, "send {dst} {size} tag={tag}{}", c(comm)),
                OpKind::Recv {
                    src,
                    size,
                    tag,
                    comm,
                } => write!(out, "recv {} {size} tag={}{}", any(src), any(tag), c(comm)),
                OpKind::Isend {
                    dst,
                    size,
                    tag,
                    comm,
                    req,
                } => write!(
                    out,
                    "isend {dst} {size} req={} tag={tag}{}",
                    h(req),
                    c(comm)
                ),
                OpKind::Irecv {
                    src,
                    size,
                    tag,
                    comm,
                    req,
                } => write!(
                    out,
                    "irecv {} {size} req={} tag={}{}",
                    any(src),
                    h(req),
                    any(tag),
                    c(comm)
                ),
                OpKind::Wait { req } => write!(out, "wait {}", h(req)),
                OpKind::Test { req } => write!(out, "test {}", h(req)),
                OpKind::WaitAll { list: l, count } => write!(out, "waitall {}", list(l, count)),
                OpKind::WaitAny { list: l, count } => write!(out, "waitany {}", list(l, count)),
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
                    write!(out, "comm_split {color} {key} as=c{result}{}", c(parent))
                }
                OpKind::CommDup { parent, result } => {
                    write!(out, "comm_dup as=c{result}{}", c(parent))
                }
                OpKind::Coll { call } => {
                    let k = &prog.coll_calls[call as usize];
                    let mut line = k.kind.clone();
                    if k.kind != "barrier" {
                        let _ = write!(line, " {}", k.size);
                    }
                    if matches!(k.kind.as_str(), "bcast" | "reduce" | "gather" | "scatter") {
                        let _ = write!(line, " root={}", k.root);
                    }
                    if !k.algorithm.is_empty() {
                        let _ = write!(line, " algo={}", k.algorithm);
                    }
                    if !k.transport.is_empty() {
                        let _ = write!(line, " transport={}", k.transport);
                    }
                    if k.segment != 0 {
                        let _ = write!(line, " segment={}", k.segment);
                    }
                    write!(out, "{line}{}", c(k.comm))
                }
                OpKind::CollBegin { .. } | OpKind::CollEnd { .. } => Ok(()),
            };
            let _ = writeln!(out, " @{}", prog.describe_loc(op.loc));
        }
    }
    Ok(out)
}

/// A rank block ended with region `open` (its id and line) still open.
fn unclosed_region(file: &str, rank: u32, open: (u32, usize), regions: &[String]) -> Error {
    let (id, line) = open;
    Error::input(
        Location::at(file, line, 1).with_field("region"),
        format!(
            "rank {rank}: region {} is never closed (expected a region_end in the same rank block)",
            regions[id as usize]
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let text = "# acesim schedule 1\nranks 2\nrank 0\ncompute 100us @fig1.c:9\nput 1 4 tag=0 handle=1 @fig1.c:10\ncomplete 1 @fig1.c:11\nrank 1\npoll 0 @fig1.c:13\n";
        let p = parse("s.sched", text).unwrap();
        assert_eq!(p.ranks, 2);
        assert_eq!(p.ops[0].len(), 3);
        assert_eq!(p.ops[0][0].kind, OpKind::Compute { ps: 100_000_000 });
        assert_eq!(p.describe_loc(p.ops[0][1].loc), "fig1.c:10");
        assert_eq!(p.ops[1][0].kind, OpKind::Poll { tag: 0 });
        // Round trip through the writer.
        let again = parse("w", &write(&p).unwrap()).unwrap();
        assert_eq!(again.ops, p.ops);
    }

    fn err(text: &str) -> String {
        parse("bad.sched", text).unwrap_err().to_string()
    }

    #[test]
    fn bad_input_names_line_column_and_field() {
        assert_eq!(
            err("ranks 2\nrank 0\nput 5 4\n"),
            "bad.sched:3:5: field `dst`: rank 5 is out of range: there are 2 ranks (0..1)"
        );
        assert!(err("ranks 2\nrank 0\nput 1 -4\n")
            .starts_with("bad.sched:3:7: field `size`: size -4 is negative"));
        assert!(err("ranks 2\nrank 0\ncompute 10\n").contains("bad.sched:3:9: field `time`"));
        assert!(
            err("ranks 2\nrank 0\njump 1\n").starts_with("bad.sched:3:1: unknown operation `jump`")
        );
        assert!(err("rank 0\n").contains("must start with `ranks N`"));
        assert!(err("ranks 2\nrank 0\ncomplete h\n").contains("request 'h' was not created"));
        assert!(err("ranks 2\nrank 0\nput 1 4 colour=red\n").contains("field `colour`"));
        assert!(err("ranks 2\nrank 1\nregion_begin a\n").contains("never closed"));
        assert!(err("ranks 2\nrank 0\nput 3 4 @p.c:7\n").starts_with("p.c:7: field `dst`"));
        assert!(err("ranks 2\nrank 0\nregion_begin \"a b\n").contains("unterminated"));
        assert!(err("ranks 2\nrank 0\n@p.c:3\n")
            .starts_with("bad.sched:3:1: a source location without an operation"));
        assert!(err("ranks 2\nrank 0\nsend 1 4 tag=-1\n")
            .starts_with("bad.sched:3:10: field `tag`: tag -1 is out of range"));
    }
}
