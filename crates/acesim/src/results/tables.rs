//! The per-link table (`--links-csv`).

use crate::results::report::Results;
use std::fmt::Write as _;

impl Results {
    /// One row per directed link.
    pub fn links_csv(&self) -> String {
        let mut out = String::from("link,name,class,bandwidth_bytes_per_s,bytes,packets,busy_ps,utilization,wait_ps,stall_ps\n");
        for l in &self.all_links {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{:.6},{},{}",
                l.link,
                l.name,
                l.class,
                l.bandwidth_bytes_per_s,
                l.bytes,
                l.packets,
                l.busy_ps,
                l.utilization,
                l.wait_ps,
                l.stall_ps
            );
        }
        out
    }
}
