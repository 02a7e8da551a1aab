//! `repeat N { ... }` blocks: a rank's loop body is read once and repeated as the run
//! reaches it (`program::stream`), so that a 20,000-iteration program stays as small as
//! its text. A program with loops is streamed: its collective calls are made once before
//! the run (the skeleton linking matches), its other operations iteration by iteration.

use crate::error::Result;
use crate::frontends::schedule::write::{write_line, write_ranks};
use crate::program::ops::{Op, OpKind, Program, Streamed};
use crate::program::stream::{is_structural, RankStream, StreamSource};
use std::sync::Arc;

/// Operations handed to the run per window, at least.
const WINDOW_OPS: usize = 4096;

/// A closed `repeat` block of a rank: its body is the rank's operations `start..end`.
#[derive(Debug, Clone, Copy)]
pub struct Loop {
    pub start: usize,
    pub end: usize,
    pub count: u64,
}

/// One instruction of a rank's code: its operations with the loops around them.
#[derive(Debug, Clone, Copy)]
enum Instr {
    /// Operations `start..end` of the rank, in order.
    Run { start: usize, end: usize },
    /// A loop of `count` iterations whose body is the instructions up to its `End`;
    /// `exit` is the instruction after that `End`. `ops` is whether the body has any
    /// operation (an empty loop is skipped, however many times it would run), and
    /// `structural` whether it has collective calls.
    Loop {
        count: u64,
        exit: usize,
        ops: bool,
        structural: bool,
    },
    /// The end of the loop whose body starts at instruction `body`.
    End { body: usize },
}

/// What a program with loops keeps for its streams.
struct Code {
    /// Each rank's operations as read (loop bodies once).
    ops: Vec<Vec<Op>>,
    code: Vec<Vec<Instr>>,
    /// The request lists its `WaitAll`/`WaitAny` index.
    req_lists: Vec<u32>,
}

/// Turns `prog`, whose ranks have `loops` (rank, loop), into a streamed program: its
/// operations become the skeleton of its collective calls, the rest is made as the run
/// goes.
pub fn stream(prog: &mut Program, loops: &[(u32, Loop)]) {
    let n = prog.ranks as usize;
    let mut per_rank: Vec<Vec<Loop>> = vec![Vec::new(); n];
    for &(r, l) in loops {
        per_rank[r as usize].push(l);
    }
    let ops = std::mem::replace(&mut prog.ops, vec![Vec::new(); n]);
    let code: Vec<Vec<Instr>> = ops
        .iter()
        .zip(&mut per_rank)
        .map(|(ops, loops)| compile(ops, loops))
        .collect();
    let code = Arc::new(Code {
        ops,
        code,
        // Kept in the program too, for writing it back (`write_schedule`).
        req_lists: prog.req_lists.clone(),
    });
    for (r, skeleton) in prog.ops.iter_mut().enumerate() {
        let mut at = Cursor::new();
        while at.next(&code, r, skeleton, &mut Vec::new(), true, usize::MAX) {}
    }
    prog.stream = Some(Streamed::new(Arc::new(LoopSource { code })));
}

/// The instructions of a rank's operations `ops` with its `loops` (closed inner loops
/// before outer ones, as they are read).
fn compile(ops: &[Op], loops: &mut [Loop]) -> Vec<Instr> {
    // Outer loops first where two start together.
    loops.sort_by_key(|l| (l.start, std::cmp::Reverse(l.end)));
    let mut code = Vec::new();
    let mut next = 0;
    emit(ops, loops, 0, ops.len(), &mut next, &mut code);
    code
}

/// The instructions of operations `from..to`, whose loops are `loops[*next..]` up to the
/// first that starts at or past `to`.
fn emit(
    ops: &[Op],
    loops: &[Loop],
    from: usize,
    to: usize,
    next: &mut usize,
    code: &mut Vec<Instr>,
) {
    let mut at = from;
    while let Some(&l) = loops.get(*next).filter(|l| l.start < to) {
        *next += 1;
        if l.start > at {
            code.push(Instr::Run {
                start: at,
                end: l.start,
            });
        }
        let head = code.len();
        code.push(Instr::End { body: 0 }); // its Loop, once the body is known
        emit(ops, loops, l.start, l.end, next, code);
        let body = &ops[l.start..l.end];
        code.push(Instr::End { body: head + 1 });
        code[head] = Instr::Loop {
            count: l.count,
            exit: code.len(),
            ops: !body.is_empty(),
            structural: body.iter().any(|o| is_structural(&o.kind)),
        };
        at = l.end;
    }
    if to > at {
        code.push(Instr::Run { start: at, end: to });
    }
}

/// Where a rank is in its code: the instruction, the operation within a `Run`, and the
/// iterations left of each loop it is in (innermost last).
struct Cursor {
    pc: usize,
    op: usize,
    left: Vec<u64>,
}

impl Cursor {
    fn new() -> Cursor {
        Cursor {
            pc: 0,
            op: usize::MAX,
            left: Vec::new(),
        }
    }

    /// Appends the rank's next operations to `out` (their request lists to `lists`) until
    /// it holds `at_least`; with `skeleton`, only its collective calls and communicator
    /// creations, skipping loops without them. False once the rank's code has ended.
    fn next(
        &mut self,
        code: &Code,
        r: usize,
        out: &mut Vec<Op>,
        lists: &mut Vec<u32>,
        skeleton: bool,
        at_least: usize,
    ) -> bool {
        let instrs = &code.code[r];
        while out.len() < at_least {
            let Some(&instr) = instrs.get(self.pc) else {
                return false;
            };
            match instr {
                Instr::Run { start, end } => {
                    let from = if self.op == usize::MAX {
                        start
                    } else {
                        self.op
                    };
                    let to = end.min(from.saturating_add(at_least.saturating_sub(out.len())));
                    for op in &code.ops[r][from..to] {
                        if skeleton {
                            if is_structural(&op.kind) {
                                out.push(*op);
                            }
                            continue;
                        }
                        out.push(with_list(*op, code, lists));
                    }
                    if to == end {
                        self.pc += 1;
                        self.op = usize::MAX;
                    } else {
                        self.op = to;
                    }
                }
                Instr::Loop {
                    count,
                    exit,
                    ops,
                    structural,
                } => {
                    if count == 0 || !ops || (skeleton && !structural) {
                        self.pc = exit;
                    } else {
                        self.left.push(count);
                        self.pc += 1;
                    }
                }
                Instr::End { body } => {
                    let left = self.left.last_mut().expect("a loop is open at its end");
                    *left -= 1;
                    if *left > 0 {
                        self.pc = body;
                    } else {
                        self.left.pop();
                        self.pc += 1;
                    }
                }
            }
        }
        true
    }
}

/// `op` with its request list copied into the window's `lists`.
fn with_list(mut op: Op, code: &Code, lists: &mut Vec<u32>) -> Op {
    if let OpKind::WaitAll { list, count } | OpKind::WaitAny { list, count } = &mut op.kind {
        let from = *list as usize;
        *list = lists.len() as u32;
        lists.extend_from_slice(&code.req_lists[from..from + *count as usize]);
    }
    op
}

struct LoopSource {
    code: Arc<Code>,
}

impl StreamSource for LoopSource {
    fn write_schedule(&self, prog: &Program) -> Option<std::result::Result<String, String>> {
        let code = &*self.code;
        Some(Ok(write_ranks(
            prog,
            |r| code.ops[r].is_empty(),
            |r, out| {
                for instr in &code.code[r] {
                    match *instr {
                        Instr::Run { start, end } => {
                            for op in &code.ops[r][start..end] {
                                write_line(out, prog, op);
                            }
                        }
                        Instr::Loop { count, .. } => out.push_str(&format!("repeat {count} {{\n")),
                        Instr::End { .. } => out.push_str("}\n"),
                    }
                }
            },
        )))
    }

    fn open(&self, rank: u32) -> Result<Box<dyn RankStream>> {
        Ok(Box::new(LoopRank {
            code: self.code.clone(),
            rank: rank as usize,
            at: Cursor::new(),
        }))
    }
}

struct LoopRank {
    code: Arc<Code>,
    rank: usize,
    at: Cursor,
}

impl RankStream for LoopRank {
    fn next_ops(&mut self, ops: &mut Vec<Op>, lists: &mut Vec<u32>) -> Result<bool> {
        ops.clear();
        lists.clear();
        self.at
            .next(&self.code, self.rank, ops, lists, false, WINDOW_OPS);
        Ok(!ops.is_empty())
    }
}
