//! What a rank block has named so far: requests, communicators and open regions. Names
//! belong to one rank block (a rank has one block).

use crate::error::{Error, Location, Result};
use crate::frontends::schedule::line::OpLine;
use crate::frontends::schedule::tokens::Tok;
use crate::program::ops::Program;
use compact_str::CompactString;
use rustc_hash::FxHashMap as HashMap;
use std::collections::hash_map::Entry;

/// A request's slot, and the line that made it while it is outstanding (`NOT_PENDING`:
/// waited for).
#[derive(Debug, Clone, Copy)]
struct Named {
    slot: u32,
    pending: usize,
}

const NOT_PENDING: usize = usize::MAX;

#[derive(Default)]
pub struct Block {
    /// The rank whose block is being read.
    pub rank: Option<u32>,
    /// Request (or handle) name -> its request slot, and while it is not yet waited for
    /// (or completed) the line that made it: a name is reused only once its request was
    /// waited for. Names are short and held in place: a million-rank schedule names
    /// millions of requests, and one map looks each up once.
    requests: HashMap<CompactString, Named>,
    comms: HashMap<CompactString, u32>,
    /// (region id, line of its `region_begin`), innermost last.
    open_regions: Vec<(u32, usize)>,
    /// The `repeat` blocks open, innermost last.
    pub open_loops: Vec<OpenLoop>,
}

/// A `repeat N {` whose `}` is still to come.
#[derive(Debug, Clone, Copy)]
pub struct OpenLoop {
    pub line: usize,
    pub count: u64,
    /// Index in the rank's operations of the body's first operation.
    pub start: usize,
}

impl Block {
    /// Starts the block of `rank` once the one before it is complete.
    pub fn start(&mut self, rank: u32, file: &str, regions: &[String]) -> Result<()> {
        self.check_closed(file, regions)?;
        // Cleared, not new: the maps keep their room for the next block.
        self.requests.clear();
        self.comms.clear();
        self.open_regions.clear();
        self.open_loops.clear();
        self.rank = Some(rank);
        Ok(())
    }

    /// Every region the block opened is closed.
    pub fn check_closed(&self, file: &str, regions: &[String]) -> Result<()> {
        if let (Some(rank), Some(open)) = (self.rank, self.open_loops.last()) {
            return Err(Error::input(
                Location::at(file, open.line, 1).with_field("repeat"),
                format!("rank {rank}: `repeat {} {{` is never closed (expected `}}` in the same rank block)", open.count),
            ));
        }
        match (self.rank, self.open_regions.last()) {
            (Some(rank), Some(&open)) => Err(unclosed_region(file, rank, open, regions)),
            _ => Ok(()),
        }
    }

    /// A new request named `name` by operation line `l`; `Err` gives the line of the
    /// request of that name still outstanding.
    pub fn open_request(
        &mut self,
        prog: &mut Program,
        l: &OpLine,
        name: &str,
    ) -> std::result::Result<u32, usize> {
        let named = match self.requests.entry(name.into()) {
            Entry::Occupied(o) if o.get().pending != NOT_PENDING => return Err(o.get().pending),
            // A name used again refers to the new request from here on.
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => v.insert(Named {
                slot: 0,
                pending: NOT_PENDING,
            }),
        };
        let slot = prog.new_handle(l.rank);
        *named = Named {
            slot,
            pending: l.at.line,
        };
        Ok(slot)
    }

    /// The request named by token `t`.
    pub fn request(&self, l: &OpLine, t: &Tok) -> Result<u32> {
        self.requests.get(&*t.text).map(|n| n.slot).ok_or_else(|| {
            l.op_err(t, "request", format!("request '{}' was not created by an earlier put, get, isend or irecv on rank {}", t.text, l.rank))
        })
    }

    /// The request named by `t` was waited for: the name may be used again. Inside a
    /// `repeat`, a request made before the loop cannot be waited for (its second iteration
    /// would wait for it again).
    pub fn finished(&mut self, l: &OpLine, t: &Tok) -> Result<()> {
        let made = self
            .requests
            .get_mut(&*t.text)
            .map(|n| std::mem::replace(&mut n.pending, NOT_PENDING))
            .filter(|&line| line != NOT_PENDING);
        if let (Some(made), Some(open)) = (made, self.open_loops.last()) {
            if made < open.line {
                return Err(l.op_err(t, "request", format!(
                    "request '{}' was made at line {made}, before the `repeat` at line {}: each iteration would wait for it again (make it inside the loop, or wait for it after)",
                    t.text, open.line
                )));
            }
        }
        Ok(())
    }

    /// The name of the request named `name` may be used again.
    pub fn forget(&mut self, name: &str) {
        if let Some(n) = self.requests.get_mut(name) {
            n.pending = NOT_PENDING;
        }
    }

    /// A `repeat` body ends: every request made in it was waited for in it, and every
    /// region opened in it was closed (each iteration must leave nothing behind).
    pub fn close_loop(
        &mut self,
        file: &str,
        rank: u32,
        regions: &[String],
    ) -> Result<Option<OpenLoop>> {
        let Some(open) = self.open_loops.pop() else {
            return Ok(None);
        };
        if let Some((name, line)) = self
            .requests
            .iter()
            .map(|(name, n)| (name, n.pending))
            .filter(|&(_, l)| l != NOT_PENDING && l > open.line)
            .min_by_key(|&(_, l)| l)
        {
            return Err(Error::input(
                Location::at(file, line, 1).with_field("request"),
                format!("rank {rank}: request '{name}' is made in the `repeat` at line {} but not waited for in it (each iteration must complete its requests)", open.line),
            ));
        }
        if let Some(&region) = self.open_regions.iter().find(|&&(_, l)| l > open.line) {
            return Err(unclosed_region(file, rank, region, regions));
        }
        Ok(Some(open))
    }

    /// The communicator of option `comm=` (the world when absent).
    pub fn comm(&self, l: &OpLine) -> Result<u32> {
        match l.opt("comm") {
            None | Some(("world", _)) => Ok(0),
            Some((v, t)) => self.comms.get(v).copied().ok_or_else(|| {
                l.err(t.col, Some("comm"), format!("communicator '{v}' was not created by an earlier comm_split or comm_dup on rank {}", l.rank))
            }),
        }
    }

    pub fn name_comm(&mut self, name: &str, handle: u32) {
        self.comms.insert(name.into(), handle);
    }

    pub fn open_region(&mut self, id: u32, line: usize) {
        self.open_regions.push((id, line));
    }

    /// Closes the innermost open region and gives its id.
    pub fn close_region(&mut self) -> Option<u32> {
        self.open_regions.pop().map(|(id, _)| id)
    }
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
