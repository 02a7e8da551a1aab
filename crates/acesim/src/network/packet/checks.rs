//! The packet model's invariants: links never send two packets at once, credits stay
//! within their buffers, every packet is consumed once, bytes are conserved.

use super::state::*;
use crate::network::interface::Network;
use crate::units::Ps;

impl PacketNetwork {
    /// Invariants of a finished run at time `end`: nothing left in flight, every byte that
    /// entered the network left it, no link busy for longer than the run.
    pub(super) fn check_finished(&self, end: Ps) -> Result<(), String> {
        if let Some(v) = self.violation() {
            return Err(v.to_string());
        }
        self.stats.counters.check_conserved()?;
        if self.checks.is_some() {
            if self.live_packets != 0 {
                return Err(format!("{} packets were never consumed", self.live_packets));
            }
            if let Some((i, l)) = self
                .stats
                .links
                .iter()
                .enumerate()
                .find(|(_, l)| l.busy_ps > end)
            {
                return Err(format!(
                    "link {} was busy {} ps in a run of {end} ps",
                    self.topo.link_name(i as u32),
                    l.busy_ps
                ));
            }
        }
        Ok(())
    }

    /// Invariants of a run stopped at `end` with packets possibly still in the network
    /// (synthetic traffic stops once its measured packets have arrived, or at its drain
    /// limit): every byte injected was delivered or is in a packet still in the network,
    /// the packets alive are the ones counted, and no link was busy for longer than it had
    /// been running (until `end`, or until the end of the packet it is sending). Needs the
    /// checks on (`enable_checks`) to know which packets are alive; without them only the
    /// invariants checked as the run went are looked at.
    pub(super) fn check_in_flight(&self, end: Ps) -> Result<(), String> {
        let Some(in_network) = self.checked_in_flight(end)? else {
            return Ok(());
        };
        let c = &self.stats.counters;
        check_bytes(c.bytes_injected, c.bytes_delivered, in_network)
    }

    /// The part of `check_in_flight` that each partition of a parallel run checks alone:
    /// returns the bytes of the packets alive in the network (`None` without the checks
    /// on), for the bytes to be compared over all partitions.
    pub(super) fn checked_in_flight(&self, end: Ps) -> Result<Option<u64>, String> {
        if let Some(v) = self.violation() {
            return Err(v.to_string());
        }
        let Some(c) = &self.checks else {
            return Ok(None);
        };
        let (mut alive, mut in_network) = (0u64, 0u64);
        for (id, _) in c.live.iter().enumerate().filter(|(_, &l)| l) {
            let p = &self.packets[id];
            alive += 1;
            // Packets between two NICs of one node never enter the network.
            if self.topo.nic_node(p.src_nic) != self.topo.nic_node(p.dst_nic) {
                in_network += p.bytes as u64;
            }
        }
        if alive != self.live_packets {
            return Err(format!(
                "{alive} packets are alive but {} are counted",
                self.live_packets
            ));
        }
        let over = self
            .stats
            .links
            .iter()
            .enumerate()
            .find(|&(i, l)| l.busy_ps > end.max(self.links.get(i).map_or(0, |k| k.busy_until)));
        if let Some((i, l)) = over {
            return Err(format!(
                "link {} was busy {} ps in a run stopped at {end} ps",
                self.topo.link_name(i as u32),
                l.busy_ps
            ));
        }
        Ok(Some(in_network))
    }

    /// Describes packets stuck in the network (for a deadlock report).
    pub(super) fn stuck_packets(&self) -> Option<String> {
        if self.live_packets == 0 {
            return None;
        }
        let waiting: usize = self.links.iter().map(|l| l.wait_len as usize).sum();
        let mut buffered = 0usize;
        // A partition holds only its routers' inputs (the others are zeroes).
        let port_router = &self.topo.ports.port_router;
        let inline = (self.inputs.iter().zip(port_router))
            .filter(|&(_, &r)| self.elsewhere(r).is_none())
            .flat_map(|(i, _)| i.fifo.iter());
        for &(mut p, _) in inline.chain(self.fifos.iter()) {
            while p != NONE {
                buffered += 1;
                p = self.packets[p as usize].fifo_next;
            }
        }
        Some(format!(
            "{} packets stuck in the network ({} in router buffers, {} waiting for a link with no downstream buffer space)",
            self.live_packets, buffered, waiting
        ))
    }
}

/// Every byte injected was delivered or is in a packet still in the network.
pub fn check_bytes(injected: u64, delivered: u64, in_network: u64) -> Result<(), String> {
    if injected != delivered + in_network {
        return Err(format!(
            "bytes injected ({injected}) != bytes delivered ({delivered}) + bytes still in the network ({in_network})"
        ));
    }
    Ok(())
}
