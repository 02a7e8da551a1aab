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

mod dependencies;
mod operation;
mod parts;
mod read;
mod text;

pub use operation::{COLLECTIVE_TAGS, MAX_CPUS};
pub use parts::parse_on;
pub use read::parse;

#[cfg(test)]
mod tests;
