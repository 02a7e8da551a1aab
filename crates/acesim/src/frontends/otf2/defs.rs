//! The OTF2 global definitions acesim uses, and what they make: the ranks' locations and
//! the communicators (which MPI communicator each OTF2 one is, and its members).

use super::shim::{self, Def};
use crate::error::{Error, Location, Result};
use std::collections::HashMap;

pub(super) const PARADIGM_UNKNOWN: u64 = 0;
pub(super) const PARADIGM_MPI: u64 = 4;
const LOCATION_GROUP_PROCESS: u64 = 1;
const LOCATION_CPU_THREAD: u64 = 1;
const GROUP_COMM_LOCATIONS: u64 = 4;
const GROUP_COMM_GROUP: u64 = 5;
const GROUP_COMM_SELF: u64 = 6;

/// The global definitions acesim uses.
#[derive(Default)]
pub(super) struct Defs {
    pub(super) strings: HashMap<u64, String>,
    /// Region id: (name string, paradigm).
    pub(super) regions: HashMap<u64, (u64, u64)>,
    /// Location groups in definition order: (id, type).
    pub(super) location_groups: Vec<(u64, u64)>,
    /// Locations in definition order: (id, type, location group).
    pub(super) locations: Vec<(u64, u64, u64)>,
    /// Location id: the number of events the trace says it recorded.
    pub(super) event_counts: HashMap<u64, u64>,
    /// Group id: (type, paradigm, members).
    pub(super) groups: HashMap<u64, (u64, u64, Vec<u64>)>,
    /// Communicators in definition order: (id, name string, group).
    pub(super) comms: Vec<(u64, u64, u64)>,
    /// Ticks per second.
    pub(super) resolution: u64,
}

impl Defs {
    pub(super) fn add(&mut self, d: Def) {
        match d.kind {
            shim::DEF_STRING => {
                self.strings.insert(d.id, d.text);
            }
            shim::DEF_REGION => {
                self.regions.insert(d.id, (d.a, d.c));
            }
            shim::DEF_LOCATION_GROUP => self.location_groups.push((d.id, d.b)),
            shim::DEF_LOCATION => {
                self.locations.push((d.id, d.b, d.d));
                self.event_counts.insert(d.id, d.c);
            }
            shim::DEF_GROUP => {
                self.groups.insert(d.id, (d.b, d.c, d.members));
            }
            shim::DEF_COMM => self.comms.push((d.id, d.a, d.b)),
            shim::DEF_CLOCK => self.resolution = d.a,
            _ => {}
        }
    }

    pub(super) fn string(&self, id: u64) -> &str {
        self.strings.get(&id).map_or("", String::as_str)
    }

    /// The ranks' locations and the communicators.
    pub(super) fn layout(&self, name: &str) -> Result<Layout> {
        let at = |what: &str| Location::file(format!("{name}, {what}"));
        // MPI_COMM_WORLD's locations, in rank order, when the trace says them; else the
        // first thread of every process.
        let world = self
            .groups
            .values()
            .find(|(t, p, _)| *t == GROUP_COMM_LOCATIONS && *p == PARADIGM_MPI);
        let locations: Vec<u64> = match world {
            Some((_, _, members)) => members.clone(),
            None => self
                .location_groups
                .iter()
                .filter(|(_, t)| *t == LOCATION_GROUP_PROCESS)
                .filter_map(|(g, _)| {
                    self.locations
                        .iter()
                        .find(|(_, t, lg)| lg == g && *t == LOCATION_CPU_THREAD)
                        .map(|l| l.0)
                })
                .collect(),
        };
        if locations.is_empty() {
            return Err(Error::input(
                at("global definitions"),
                "no MPI process: the trace defines no MPI communication locations (group of type COMM_LOCATIONS) and no process with a thread",
            ));
        }
        let n = u32::try_from(locations.len())
            .map_err(|_| Error::input(at("global definitions"), "more than 2^32 ranks"))?;
        let mut rank_of = HashMap::new();
        for (r, l) in locations.iter().enumerate() {
            if !self.locations.iter().any(|x| x.0 == *l) {
                return Err(Error::input(
                    at("global definitions").with_field("members"),
                    format!("rank {r}'s location {l} is not defined"),
                ));
            }
            if rank_of.insert(*l, r as u32).is_some() {
                return Err(Error::input(
                    at("global definitions").with_field("members"),
                    format!("location {l} is rank {r} and an earlier rank too"),
                ));
            }
        }
        if self.resolution == 0 {
            return Err(Error::input(
                at("global definitions").with_field("timerResolution"),
                "no clock properties (timer resolution): times cannot be read",
            ));
        }
        let mut comms = HashMap::new();
        let mut order = Vec::new();
        let mut world_seen = false;
        let mut next_handle = 1;
        for &(id, cname, group) in &self.comms {
            let cname = self.string(cname);
            let where_ = || at(&format!("communicator {id} ({cname})")).with_field("group");
            let Some((gtype, paradigm, members)) = self.groups.get(&group) else {
                return Err(Error::input(
                    where_(),
                    format!("group {group} is not defined"),
                ));
            };
            // Another paradigm's communicators carry no MPI message: Score-P defines its
            // measurement system's ("Process x Threads CPU Locations") before
            // MPI_COMM_WORLD, over every process.
            if *paradigm != PARADIGM_MPI && *paradigm != PARADIGM_UNKNOWN {
                continue;
            }
            order.push(id);
            let comm = match *gtype {
                GROUP_COMM_SELF => Comm {
                    kind: CommKind::SelfComm,
                    members: Vec::new(),
                },
                GROUP_COMM_LOCATIONS => Comm {
                    kind: CommKind::World,
                    members: (0..n).collect(),
                },
                GROUP_COMM_GROUP => {
                    let mut ranks = Vec::with_capacity(members.len());
                    for &m in members {
                        match u32::try_from(m).ok().filter(|&m| m < n) {
                            Some(m) if !ranks.contains(&m) => ranks.push(m),
                            _ => {
                                return Err(Error::input(
                                    where_(),
                                    format!(
                                        "member {m} of group {group} is not a rank of MPI_COMM_WORLD's {n} (or appears twice)"
                                    ),
                                ))
                            }
                        }
                    }
                    let everyone = ranks.iter().copied().eq(0..n);
                    let kind = if everyone && !world_seen {
                        world_seen = true;
                        CommKind::World
                    } else if everyone {
                        next_handle += 1;
                        CommKind::Dup(next_handle - 1)
                    } else {
                        next_handle += 1;
                        CommKind::Split(next_handle - 1)
                    };
                    Comm {
                        kind,
                        members: ranks,
                    }
                }
                t => {
                    return Err(Error::input(
                        where_(),
                        format!("group {group} has type {t}, not a communicator group"),
                    ))
                }
            };
            comms.insert(id, comm);
        }
        let event_counts = locations
            .iter()
            .map(|l| self.event_counts.get(l).copied().unwrap_or(0))
            .collect();
        Ok(Layout {
            locations,
            event_counts,
            rank_of,
            comms,
            order,
        })
    }
}

/// How an OTF2 communicator becomes an acesim one.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum CommKind {
    /// The world (handle 0).
    World,
    /// Everyone again, made by comm_dup of the world (this handle).
    Dup(u32),
    /// Some ranks, made by comm_split of the world (this handle).
    Split(u32),
    /// MPI_COMM_SELF (no traffic).
    SelfComm,
}

/// An OTF2 communicator as acesim makes it.
pub(super) struct Comm {
    pub(super) kind: CommKind,
    /// World ranks, in communicator order.
    pub(super) members: Vec<u32>,
}

impl Comm {
    pub(super) fn handle(&self) -> Option<u32> {
        match self.kind {
            CommKind::World => Some(0),
            CommKind::Dup(h) | CommKind::Split(h) => Some(h),
            CommKind::SelfComm => None,
        }
    }
}

/// The ranks and communicators of a trace.
pub(super) struct Layout {
    /// Each rank's location.
    pub(super) locations: Vec<u64>,
    /// The number of events each rank's location holds, as the definitions say (0: not
    /// said). A reading that ends elsewhere met a truncated event file.
    pub(super) event_counts: Vec<u64>,
    pub(super) rank_of: HashMap<u64, u32>,
    pub(super) comms: HashMap<u64, Comm>,
    /// Communicator ids in definition order.
    pub(super) order: Vec<u64>,
}
