//! Why a run could not finish: the ranks that wait forever, what each waits for, and the
//! circle they wait in, if there is one.

use crate::units::{format_time, Ps};
use std::fmt;

/// Why a run could not finish.
#[derive(Debug, Clone)]
pub struct DeadlockReport {
    pub time: Ps,
    pub blocked: Vec<BlockedRank>,
    pub network: Option<String>,
    /// Ranks that wait for each other in a circle (`a` waits for `b`, ..., which waits
    /// for `a`), if there is such a circle.
    pub cycle: Option<Vec<u32>>,
    /// The network model that could not finish, when a command ran more than one
    /// (`compare-models`); absent otherwise, and then not shown.
    pub model: Option<&'static str>,
    /// A closing line about the other model's run of the same program (`compare-models`).
    pub note: Option<String>,
}

#[derive(Debug, Clone)]
pub struct BlockedRank {
    pub rank: u32,
    pub op: String,
    pub location: String,
    pub waits_for: String,
    /// The ranks whose action it needs (the sender of a receive, the receiver of a
    /// rendezvous send); empty when any rank could unblock it.
    pub waits_on: Vec<u32>,
}

impl fmt::Display for DeadlockReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "the program can never finish{} ({} rank{} blocked at {})",
            self.model
                .map_or(String::new(), |m| format!(" at the {m} level")),
            self.blocked.len(),
            if self.blocked.len() == 1 { "" } else { "s" },
            format_time(self.time)
        )?;
        for b in self.blocked.iter().take(50) {
            writeln!(
                f,
                "  rank {}: `{}` at {} waits for {}",
                b.rank, b.op, b.location, b.waits_for
            )?;
        }
        if self.blocked.len() > 50 {
            writeln!(f, "  ... and {} more ranks", self.blocked.len() - 50)?;
        }
        if let Some(cycle) = &self.cycle {
            // A circle of 100 000 ranks is shown by its ends: the first 10 and the last 5.
            let mut text: Vec<String> = Vec::new();
            for (i, r) in cycle.iter().enumerate() {
                if cycle.len() <= 20 || i < 10 || i >= cycle.len() - 5 {
                    text.push(format!("rank {r}"));
                } else if i == 10 {
                    text.push(format!("... {} more ranks ...", cycle.len() - 15));
                }
            }
            text.push(format!("rank {}", cycle[0]));
            writeln!(
                f,
                "  cycle: {} (each waits for the next)",
                text.join(" -> ")
            )?;
        }
        if let Some(n) = &self.network {
            writeln!(f, "  network: {n}")?;
        }
        if let Some(n) = &self.note {
            writeln!(f, "  {n}")?;
        }
        Ok(())
    }
}
