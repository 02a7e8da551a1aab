//! What a result came from, written into every output so that results of many
//! configurations can be concatenated and told apart: the machine by its name and a hash of
//! its every field (defaults filled in), its routing and packet size, the seeds, and the
//! acesim version.

use crate::machine::loaded::Machine;
use serde::Serialize;
use sha2::{Digest, Sha256};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MachineId {
    /// The machine as the user named it: a file, a preset, or `<torus>`... for Python's
    /// constructors.
    pub name: String,
    /// The first 16 hex digits of the SHA-256 of the machine with every default filled in
    /// (`acesim machine` prints that text): equal hashes, equal machines.
    pub hash: String,
    pub topology: &'static str,
    /// `router.routing` as written (`auto`, `minimal`, `valiant`, `ugal`, `random`).
    pub routing: String,
    /// Largest packet on the wire, header included (`nic.mtu`).
    pub max_packet_bytes: u64,
    pub routing_seed: u64,
    pub placement_seed: u64,
}

impl MachineId {
    pub fn of(machine: &Machine, name: &str) -> MachineId {
        let digest = Sha256::digest(machine.to_toml().as_bytes());
        let hash = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        MachineId {
            name: name.to_string(),
            hash,
            topology: machine.topology.name(),
            routing: machine.router.routing.clone(),
            max_packet_bytes: machine.nic.mtu.0,
            routing_seed: machine.router.routing_seed,
            placement_seed: machine.placement.seed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::load::MachineSource;

    fn load(text: &str, sets: &[&str]) -> Machine {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        MachineSource::from_text("m.toml", text)
            .with_overrides(&sets)
            .load()
            .unwrap()
    }

    #[test]
    fn equal_machines_hash_equal_and_any_field_changes_the_hash() {
        let a = MachineId::of(&load("[topology]\nkind = \"crossbar\"\n", &[]), "a.toml");
        // The same machine written another way: a default given explicitly.
        let b = MachineId::of(
            &load("[topology]\nkind = \"crossbar\"\n[router]\nvcs = 2\n", &[]),
            "b.toml",
        );
        assert_eq!(a.hash, b.hash);
        assert_eq!(a.hash.len(), 16);
        let c = MachineId::of(
            &load("[topology]\nkind = \"crossbar\"\n", &["link.latency=601ps"]),
            "a.toml",
        );
        assert_ne!(a.hash, c.hash);
        assert_eq!((a.topology, a.routing.as_str()), ("crossbar", "auto"));
    }
}
