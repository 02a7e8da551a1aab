//! Linking an MPI program: resolve communicators, translate communicator ranks to world
//! ranks and message contexts, check that every rank makes the same collective calls, and
//! expand each collective into the point-to-point or put/poll steps of its algorithm.
//!
//! Contexts keep traffic apart as MPI does: communicator `c` uses context `2c` for user
//! messages and `2c + 1` for the messages of its collectives.

mod collective_calls;
mod communicators;
mod expand;
mod phases;
mod world_ranks;

pub use communicators::Communicators;
pub use phases::{link, link_keeping};
pub(crate) use world_ranks::to_world;
