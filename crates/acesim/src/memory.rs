//! The memory this process may use: what the operating system says is available, an
//! address-space limit, or `$ACESIM_MEMORY_LIMIT`. Runs and recordings are refused before
//! they start (exit code 5) when they would not fit.

use crate::error::{Error, Location, Result};

/// `1.3 GiB`, `880 MiB`: a size for people, rounded.
pub fn approx_size(bytes: u64) -> String {
    let b = bytes as f64;
    for (div, unit) in [
        (1u64 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ] {
        if bytes >= div {
            return format!("{:.1} {unit}", b / div as f64);
        }
    }
    format!("{bytes} B")
}

/// The memory a run may use: `$ACESIM_MEMORY_LIMIT` (a size such as `4GiB`, for shared
/// machines and batch jobs) or else what the operating system says is available.
pub fn memory_budget() -> Result<Option<u64>> {
    match std::env::var("ACESIM_MEMORY_LIMIT") {
        Ok(v) => crate::units::parse_size(&v).map(Some).map_err(|m| {
            Error::input(
                Location::file("environment").with_field("ACESIM_MEMORY_LIMIT"),
                m,
            )
        }),
        Err(_) => Ok(match (available_memory(), address_space_left()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }),
    }
}

/// Address space this process may still map under its limit (`ulimit -v`, Linux
/// `RLIMIT_AS`), if there is a limit: allocations past it fail however much memory is free.
pub fn address_space_left() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft: u64 = line
        .trim_start_matches("Max address space")
        .split_whitespace()
        .next()?
        .parse()
        .ok()?; // "unlimited" does not parse: no limit
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let used_kib: u64 = status
        .lines()
        .find(|l| l.starts_with("VmSize:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(soft.saturating_sub(used_kib * 1024))
}

/// Memory the operating system says is available (Linux `MemAvailable`), if known.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
