//! Ranks executing their programs against the network.
//!
//! **RDMA** (NSIM-ACE). A put: the rank pays the library overhead `T_pp`, then the NIC DMAs
//! the data out (FIFO, one message per NIC at a time) and the packets cross the network;
//! when the last packet is in the target's memory (`T_end`) the put has *landed* (a `poll`
//! there may return) and the target NIC sends a control packet back; the put *completes*
//! `T_pp` after that control packet arrives. A get: after `T_pp` the requester's NIC sends a
//! control packet; on arrival the remote NIC DMAs the data out and sends it; the get
//! completes `T_pp` after its last packet is in the requester's memory.
//!
//! **Messages** (MPI). A send pays the send overhead. Up to the eager threshold the data
//! goes at once; a larger message sends a request-to-send control packet and, once a
//! matching receive is posted, the receiver pulls the data with an RDMA get (rendezvous).
//! A send completes when its data has left memory; a receive completes the receive overhead
//! after its data is in memory. Matching follows MPI: context (communicator), source and
//! tag with wildcards; envelopes from one sender are matched in the order they were sent.
//!
//! **Execution.** A sequential program runs one operation after another: non-blocking ones
//! cost their overhead and return, blocking ones suspend the rank. A dependency-graph program
//! (GOAL) starts an operation once its dependencies hold; the rank's CPU runs compute and
//! send overheads one at a time in the order operations became ready.

mod collective_steps;
mod cpu;
mod dag;
mod deadlock;
mod estimate;
mod interpreter;
mod local;
mod matching;
mod merge;
mod partition;
mod ranks;
mod records;
mod share;
mod state;
mod transfers;

pub use estimate::TransferCounts;
pub use merge::merge;
pub use share::RuntimeShare;
pub use state::{
    CollRecord, Id, Mirror, Queue, RankStats, RecvRecord, RegionRecord, RtEvent, RtParams, Runtime,
    Stamp, TraceInterval, TraceKind, UnfinishedRequests, Xfer, XferKind, CATEGORIES,
};
