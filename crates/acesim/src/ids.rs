//! Everything a run keeps is numbered densely from 0 in a `u32` (ranks, nodes, NICs,
//! routers, ports, links, packets, messages, operations, requests), so that state lives in
//! flat arrays; [`NONE`] is the id of nothing (no handle, the end of a list).

pub const NONE: u32 = u32::MAX;

/// Puts `item` in slot `free` of `items` (a slot whose last occupant is done), or at the
/// end; its id. Records of things in flight (messages, packets, collective steps) reuse
/// slots so that memory follows what is in flight, not everything ever made.
pub fn place<T>(items: &mut Vec<T>, free: Option<u32>, item: T) -> u32 {
    match free {
        Some(id) => {
            items[id as usize] = item;
            id
        }
        None => {
            items.push(item);
            crate::prefault::grew(items);
            (items.len() - 1) as u32
        }
    }
}
