//! Programs: per-rank operation lists, whatever front end produced them.

use crate::units::Ps;

/// No handle / no explicit NIC.
pub const NONE: u32 = u32::MAX;

/// Where an operation came from in the user's source (schedule line or C line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SrcLoc {
    /// Index into `Program::files`.
    pub file: u32,
    pub line: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// Compute for a time (`MGEN_Comp`).
    Compute {
        ps: Ps,
    },
    /// RDMA put to `dst`, non-blocking. `handle` indexes the rank's handle table.
    Put {
        dst: u32,
        size: u64,
        tag: i64,
        handle: u32,
        nic: u32,
    },
    /// RDMA get from `src`, non-blocking.
    Get {
        src: u32,
        size: u64,
        handle: u32,
        nic: u32,
    },
    /// Block until a put with `tag` has landed here.
    Poll {
        tag: i64,
    },
    /// Block until the put/get of `handle` has completed.
    Complete {
        handle: u32,
    },
    RegionBegin {
        region: u32,
    },
    RegionEnd {
        region: u32,
    },
    /// Eager message send: costs the overhead, completes when the data has left memory.
    Send {
        dst: u32,
        size: u64,
        tag: i64,
    },
    /// Receive: completes `T_pp` after a matching message is in memory. `src`/`tag` may be
    /// `ANY` (-1).
    Recv {
        src: i64,
        size: u64,
        tag: i64,
    },
}

/// Wildcard source or tag of a receive.
pub const ANY: i64 = -1;

/// Dependencies of one rank's operations in a dependency-graph program (GOAL): an operation
/// is ready when every operation it `requires` has completed and every operation it
/// `irequires` has started.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RankDeps {
    /// Per operation: how many operations it requires / irequires.
    pub requires: Vec<u32>,
    pub irequires: Vec<u32>,
    /// Operations released when operation i completes / starts.
    pub after_complete: Vec<Vec<u32>>,
    pub after_start: Vec<Vec<u32>>,
    /// Labels of the operations, for reports.
    pub labels: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    pub kind: OpKind,
    pub loc: SrcLoc,
}

/// A program for every rank, ready to run.
#[derive(Debug, Clone, Default)]
pub struct Program {
    pub ranks: u32,
    pub ops: Vec<Vec<Op>>,
    /// Number of handles each rank uses.
    pub handles: Vec<u32>,
    /// Region names by id.
    pub regions: Vec<String>,
    /// Source file names by id (for locations).
    pub files: Vec<String>,
    /// Present for dependency-graph programs (GOAL); absent for sequential programs, where
    /// each operation starts when the one before it has returned.
    pub deps: Option<Vec<RankDeps>>,
}

impl Program {
    pub fn new(ranks: u32) -> Program {
        Program {
            ranks,
            ops: vec![Vec::new(); ranks as usize],
            handles: vec![0; ranks as usize],
            regions: Vec::new(),
            files: Vec::new(),
            deps: None,
        }
    }

    pub fn region_id(&mut self, name: &str) -> u32 {
        if let Some(i) = self.regions.iter().position(|r| r == name) {
            return i as u32;
        }
        self.regions.push(name.to_string());
        (self.regions.len() - 1) as u32
    }

    pub fn file_id(&mut self, name: &str) -> u32 {
        if let Some(i) = self.files.iter().position(|r| r == name) {
            return i as u32;
        }
        self.files.push(name.to_string());
        (self.files.len() - 1) as u32
    }

    /// `file:line` of an operation.
    pub fn describe_loc(&self, loc: SrcLoc) -> String {
        match self.files.get(loc.file as usize) {
            Some(f) => format!("{f}:{}", loc.line),
            None => format!("line {}", loc.line),
        }
    }

    pub fn total_ops(&self) -> usize {
        self.ops.iter().map(|o| o.len()).sum()
    }

    /// The operation as schedule text (for reports).
    pub fn describe_op(&self, op: &Op) -> String {
        match op.kind {
            OpKind::Compute { ps } => format!("compute {ps}ps"),
            OpKind::Put { dst, size, tag, .. } => format!("put {dst} {size} tag={tag}"),
            OpKind::Get { src, size, .. } => format!("get {src} {size}"),
            OpKind::Poll { tag } => format!("poll {tag}"),
            OpKind::Complete { handle } => format!("complete (handle #{})", handle + 1),
            OpKind::RegionBegin { region } => {
                format!("region_begin {}", self.regions[region as usize])
            }
            OpKind::RegionEnd { region } => format!("region_end {}", self.regions[region as usize]),
            OpKind::Send { dst, size, tag } => format!("send {dst} {size} tag={tag}"),
            OpKind::Recv { src, size, tag } => {
                let any = |v: i64| {
                    if v == ANY {
                        "any".to_string()
                    } else {
                        v.to_string()
                    }
                };
                format!("recv {} {size} tag={}", any(src), any(tag))
            }
        }
    }
}
