//! The `[collectives]` table of a machine: the algorithm each collective uses when a call
//! names none, the barrier's transport, the pipelining segment and the cost of reducing.
//! The machine file holds it; linking a program reads it.

use crate::units::{Size, Time};
use serde::{Deserialize, Serialize};

/// Default algorithm of each collective (`auto`: chosen by message size and rank count).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CollectivesConfig {
    pub barrier: String,
    /// `msg` (messages) or `rdma` (puts and polls, as in NSIM-ACE).
    pub barrier_transport: String,
    pub bcast: String,
    pub reduce: String,
    pub allreduce: String,
    pub alltoall: String,
    pub allgather: String,
    pub gather: String,
    pub scatter: String,
    /// Segment size of pipelined algorithms.
    pub segment: Size,
    /// Compute time charged per reduced byte.
    pub reduce_time_per_byte: Time,
}

impl Default for CollectivesConfig {
    fn default() -> Self {
        let auto = || "auto".to_string();
        CollectivesConfig {
            barrier: auto(),
            barrier_transport: "msg".into(),
            bcast: auto(),
            reduce: auto(),
            allreduce: auto(),
            alltoall: auto(),
            allgather: auto(),
            gather: auto(),
            scatter: auto(),
            segment: Size(64 * 1024),
            reduce_time_per_byte: Time(0),
        }
    }
}

impl CollectivesConfig {
    /// The configured algorithm for a collective kind name.
    pub fn algorithm(&self, kind: &str) -> &str {
        match kind {
            "barrier" => &self.barrier,
            "bcast" => &self.bcast,
            "reduce" => &self.reduce,
            "allreduce" => &self.allreduce,
            "alltoall" => &self.alltoall,
            "allgather" => &self.allgather,
            "gather" => &self.gather,
            "scatter" => &self.scatter,
            _ => "auto",
        }
    }
}
