//! Communicators: the world, and those `comm_split` and `comm_dup` create. A creation is
//! collective over its parent: it happens once every member of the parent has reached it.

use crate::error::{Error, Location, Result};
use crate::program::ops::{Communicator, Op, OpKind, Program, SrcLoc, NONE, UNDEFINED};
use std::collections::HashMap;

/// The communicators of a program (0 is the world) and each rank's handles to them.
#[derive(Clone)]
pub struct Communicators {
    pub list: Vec<Communicator>,
    /// Per rank: rank-local handle -> communicator (`NONE`: not a member).
    local: Handles,
    /// Per communicator: world rank -> rank in the communicator; `None` where they are the
    /// same (the world of a million ranks needs no map of a million entries).
    index: Vec<Option<HashMap<u32, u32>>>,
}

impl Communicators {
    /// Performs every creation of `prog`, in the order the ranks reach them.
    pub fn resolve(prog: &Program) -> Result<Communicators> {
        let mut creating = Creating::new(prog);
        creating.run()?;
        let Creating { comms, local, .. } = creating;
        if comms.len() > 1 << 17 {
            return Err(Error::input(
                Location::file("program"),
                "more than 2^17 communicators",
            ));
        }
        let index = comms
            .iter()
            .map(|c| {
                let members = c.members.iter().enumerate();
                let same = members.clone().all(|(i, &m)| m as usize == i);
                (!same).then(|| members.map(|(i, &m)| (m, i as u32)).collect())
            })
            .collect();
        Ok(Communicators {
            list: comms,
            local,
            index,
        })
    }

    /// The communicator that rank `r`'s handle names, for the operation at `loc`.
    pub fn of(&self, prog: &Program, r: usize, handle: u32, loc: SrcLoc) -> Result<u32> {
        match self.local[r].get(handle as usize).copied() {
            Some(c) if c != NONE => Ok(c),
            _ => Err(not_a_member(prog, r, loc)),
        }
    }

    /// The world rank of rank `rank` of communicator `c`, named in field `field`.
    pub fn world(
        &self,
        prog: &Program,
        c: u32,
        rank: u32,
        field: &str,
        loc: SrcLoc,
    ) -> Result<u32> {
        let members = self.members(c);
        members.get(rank as usize).copied().ok_or_else(|| {
            prog.error_at(
                loc,
                field,
                format!(
                    "rank {rank} is out of range: the communicator has {} ranks",
                    members.len()
                ),
            )
        })
    }

    /// World ranks of communicator `c`, in communicator order.
    pub fn members(&self, c: u32) -> &[u32] {
        &self.list[c as usize].members
    }

    /// Rank `r`'s handle to communicator `c` (its first), if it has one.
    pub fn handle_in(&self, r: usize, c: u32) -> Option<u32> {
        self.local[r].iter().position(|&l| l == c).map(|h| h as u32)
    }

    /// Whether rank `r`'s handle `handle` names a communicator it belongs to.
    pub fn names(&self, r: usize, handle: u32) -> bool {
        self.local[r]
            .get(handle as usize)
            .is_some_and(|&c| c != NONE)
    }

    /// The rank in communicator `c` of its member `world`.
    pub fn rank_in(&self, c: u32, world: u32) -> u32 {
        match &self.index[c as usize] {
            Some(index) => index[&world],
            None => world,
        }
    }
}

fn not_a_member(prog: &Program, r: usize, loc: SrcLoc) -> Error {
    prog.error_at(
        loc,
        "comm",
        format!("rank {r} is not a member of this communicator"),
    )
}

/// The parent handle of a creation.
fn parent_handle(kind: OpKind) -> u32 {
    match kind {
        OpKind::CommSplit { parent, .. } | OpKind::CommDup { parent, .. } => parent,
        _ => unreachable!("only creations are listed"),
    }
}

fn is_split(kind: OpKind) -> bool {
    matches!(kind, OpKind::CommSplit { .. })
}

/// Each rank's handles to communicators, every rank's in one list (a million ranks' would
/// otherwise be a million small allocations).
#[derive(Clone, Debug, Default)]
struct Handles {
    /// Where rank `r`'s handles start in `list`; its last entry is the list's length.
    start: Vec<usize>,
    list: Vec<u32>,
}

impl Handles {
    /// `count[r]` handles for rank `r`, naming nothing yet.
    fn new(count: &[u32]) -> Handles {
        let mut start = Vec::with_capacity(count.len() + 1);
        let mut total = 0;
        for &c in count {
            start.push(total);
            total += c as usize;
        }
        start.push(total);
        Handles {
            start,
            list: vec![NONE; total],
        }
    }
}

impl std::ops::Index<usize> for Handles {
    type Output = [u32];
    fn index(&self, r: usize) -> &[u32] {
        &self.list[self.start[r]..self.start[r + 1]]
    }
}

impl std::ops::IndexMut<usize> for Handles {
    fn index_mut(&mut self, r: usize) -> &mut [u32] {
        &mut self.list[self.start[r]..self.start[r + 1]]
    }
}

/// (key, index in the parent, world rank) of a rank joining a split communicator.
type SplitMember = (i64, usize, u32);

/// The creations under way: what each rank has reached and what exists so far.
struct Creating<'p> {
    prog: &'p Program,
    comms: Vec<Communicator>,
    /// Per rank: rank-local handle -> communicator (`NONE`: not a member / not yet created).
    local: Handles,
    /// Per rank: the indices of its creations in program order, and how many are done.
    creations: Vec<Vec<usize>>,
    next: Vec<usize>,
    /// Per communicator: the creations made on it so far (names tell a second split of
    /// the world from the first).
    made: std::collections::HashMap<u32, u32>,
}

impl<'p> Creating<'p> {
    fn new(prog: &'p Program) -> Self {
        let n = prog.ranks as usize;
        // Handle 0 is the world, or in a repeated job its job's world.
        let job = prog.job_ranks.filter(|&k| k > 0).unwrap_or(n.max(1) as u32) as usize;
        let mut local = Handles::new(&prog.comm_handles[..n]);
        for r in 0..n {
            if let Some(world) = local[r].first_mut() {
                *world = (r / job) as u32;
            }
        }
        let creations = prog
            .ops
            .iter()
            .zip(&prog.comm_handles)
            .map(|(ops, &handles)| {
                // Each creation makes a handle: a rank with only the world's made none.
                if handles <= 1 {
                    return Vec::new();
                }
                ops.iter()
                    .enumerate()
                    .filter(|(_, o)| {
                        matches!(o.kind, OpKind::CommSplit { .. } | OpKind::CommDup { .. })
                    })
                    .map(|(i, _)| i)
                    .collect()
            })
            .collect();
        Creating {
            prog,
            comms: (0..n.div_ceil(job).max(1))
                .map(|j| Communicator {
                    name: match prog.job_ranks {
                        Some(_) => format!("world of job {j}"),
                        None => "world".into(),
                    },
                    members: (j * job..((j + 1) * job).min(n))
                        .map(|r| r as u32)
                        .collect(),
                })
                .collect(),
            local,
            creations,
            next: vec![0; n],
            made: Default::default(),
        }
    }

    /// Sweeps the ranks until no rank has creations left.
    fn run(&mut self) -> Result<()> {
        loop {
            let mut progressed = false;
            let mut pending = false;
            for r in 0..self.prog.ranks as usize {
                let Some(op) = self.current(r) else {
                    continue;
                };
                pending = true;
                progressed |= self.try_create(r, op)?;
            }
            if !pending {
                return Ok(());
            }
            if !progressed {
                return Err(self.stuck());
            }
        }
    }

    /// The creation rank `r` has reached.
    fn current(&self, r: usize) -> Option<Op> {
        let &i = self.creations[r].get(self.next[r])?;
        Some(self.prog.ops[r][i])
    }

    /// Performs `op`, rank `r`'s creation, if every member of its parent has reached a
    /// creation on that parent; says whether it did.
    fn try_create(&mut self, r: usize, op: Op) -> Result<bool> {
        let parent = self.local[r][parent_handle(op.kind) as usize];
        if parent == NONE {
            return Err(not_a_member(self.prog, r, op.loc));
        }
        let members = self.comms[parent as usize].members.clone();
        if !members.iter().all(|&m| self.at_creation_on(m, parent)) {
            return Ok(false);
        }
        self.check_same_kind(r, op, &members)?;
        if is_split(op.kind) {
            self.split(parent, &members);
        } else {
            self.dup(parent, &members);
        }
        for &m in &members {
            self.next[m as usize] += 1;
        }
        Ok(true)
    }

    /// Whether rank `m` is at a creation on communicator `parent`.
    fn at_creation_on(&self, m: u32, parent: u32) -> bool {
        self.current(m as usize)
            .is_some_and(|o| self.local[m as usize][parent_handle(o.kind) as usize] == parent)
    }

    /// The creation member `m` is at (every member is, once the creation is ready).
    fn current_of(&self, m: u32) -> Op {
        self.current(m as usize)
            .expect("every member is at the creation")
    }

    fn check_same_kind(&self, r: usize, op: Op, members: &[u32]) -> Result<()> {
        let name = |k: OpKind| {
            if is_split(k) {
                "comm_split"
            } else {
                "comm_dup"
            }
        };
        for &m in members {
            let o = self.current_of(m);
            if is_split(o.kind) != is_split(op.kind) {
                return Err(self.prog.error_at(
                    o.loc,
                    "comm",
                    format!(
                        "rank {m} calls {} while rank {r} calls {} on the same communicator ({})",
                        name(o.kind),
                        name(op.kind),
                        self.prog.describe_loc(op.loc)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A split: one communicator per color, ordered by (key, rank in the parent).
    fn split(&mut self, parent: u32, members: &[u32]) {
        let mut groups: Vec<(i64, Vec<SplitMember>)> = Vec::new();
        for (pi, &m) in members.iter().enumerate() {
            let OpKind::CommSplit { color, key, .. } = self.current_of(m).kind else {
                unreachable!()
            };
            if color == UNDEFINED {
                continue;
            }
            match groups.iter_mut().find(|g| g.0 == color) {
                Some(g) => g.1.push((key, pi, m)),
                None => groups.push((color, vec![(key, pi, m)])),
            }
        }
        groups.sort_by_key(|g| g.0);
        let what = self.creation_name(parent, "split");
        for (color, mut g) in groups {
            g.sort_unstable();
            let name = format!("{what} (color {color})");
            self.add(name, g.iter().map(|x| x.2).collect());
        }
    }

    fn dup(&mut self, parent: u32, members: &[u32]) {
        let name = self.creation_name(parent, "dup");
        self.add(name, members.to_vec());
    }

    /// `split of world`, or `split #2 of world` for the second creation on the world.
    fn creation_name(&mut self, parent: u32, what: &str) -> String {
        let n = self.made.entry(parent).or_insert(0);
        *n += 1;
        let parent = &self.comms[parent as usize].name;
        match *n {
            1 => format!("{what} of {parent}"),
            n => format!("{what} #{n} of {parent}"),
        }
    }

    /// A new communicator, and each member's handle to it.
    fn add(&mut self, name: String, members: Vec<u32>) {
        let id = self.comms.len() as u32;
        for &m in &members {
            let (OpKind::CommSplit { result, .. } | OpKind::CommDup { result, .. }) =
                self.current_of(m).kind
            else {
                unreachable!()
            };
            self.local[m as usize][result as usize] = id;
        }
        self.comms.push(Communicator { name, members });
    }

    /// No creation could happen: a rank waits for one the others never make.
    fn stuck(&self) -> Error {
        let r = (0..self.prog.ranks as usize)
            .find(|&r| self.current(r).is_some())
            .unwrap_or(0);
        let op = self.current_of(r as u32);
        self.prog.error_at(op.loc, "comm", format!(
            "rank {r} creates a communicator that the other ranks of its parent never create in the same order"
        ))
    }
}
