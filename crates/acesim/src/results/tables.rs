//! The per-link table (`--links-csv`).

use crate::results::report::Results;
use std::fmt::Write as _;

impl Results {
    /// One row per directed link (waits and stalls empty where the model has none).
    pub fn links_csv(&self) -> String {
        let cell = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
        let mut out = String::from("link,name,class,bandwidth_bytes_per_s,bytes,packets,busy_ps,utilization,wait_ps,stall_ps\n");
        for l in self.all_links.iter() {
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
                cell(l.wait_ps),
                cell(l.stall_ps)
            );
        }
        out
    }
}
