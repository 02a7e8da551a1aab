//! Checks shared by the shapes' readers.

use crate::error::{Error, Result};
use crate::machine::config::TopologyConfig;

/// How a shape's reader reports a bad field: the dotted field and the message.
pub type Bad<'a> = &'a dyn Fn(&str, String) -> Error;

/// `topology.FIELD`, when given, is at least 1.
pub fn positive(bad: Bad, field: &str, v: Option<u32>) -> Result<()> {
    if v == Some(0) {
        return Err(bad(
            &format!("topology.{field}"),
            format!("{field} must be at least 1"),
        ));
    }
    Ok(())
}

/// `topology.dims` of a grid-like kind (mesh, torus, hyperx): present, 1 to 6 sizes, none 0.
pub fn grid_dims<'t>(t: &'t TopologyConfig, bad: Bad) -> Result<&'t [u32]> {
    let Some(dims) = &t.dims else {
        return Err(bad(
            "topology",
            format!("a {} needs `dims`, e.g. dims = [8, 8]", t.kind),
        ));
    };
    if dims.is_empty() || dims.len() > 6 {
        return Err(bad(
            "topology.dims",
            format!("a {} has 1 to 6 dimensions, not {}", t.kind, dims.len()),
        ));
    }
    if let Some(i) = dims.iter().position(|&d| d == 0) {
        return Err(bad("topology.dims", format!("dimension {i} has size 0")));
    }
    Ok(dims)
}

/// Routers of a grid of `dims` (saturating).
pub fn grid_routers(dims: &[u32]) -> u64 {
    dims.iter().fold(1u64, |n, &d| n.saturating_mul(d as u64))
}
