//! Messages within a node, when the machine says they move in shared memory
//! (`node.intra_node = "memory"`): every leg of a transfer between two ranks of one node is a
//! copy (data: latency + size / bandwidth) or a handshake (control: the latency), and never
//! reaches the NIC. The runtime hears of them as it hears of the network's messages, so
//! puts, gets, eager and rendezvous messages keep their semantics. Copies do not contend for
//! the node's memory (docs/model.md).

use super::state::*;
use crate::network::{Network, Notice};
use crate::units::{transfer_time, Ps};

/// What a local step reports, as `RtEvent::Local::what`.
const STARTED: u8 = 0;
const COPIED: u8 = 1;
const LANDED: u8 = 2;
const ARRIVED: u8 = 3;

impl Runtime {
    /// The shared-memory copy that moves data from `src_nic` to `dst_nic`, if they are on one
    /// node and the machine copies within nodes.
    fn local_copy<N: Network>(&self, net: &N, src_nic: u32, dst_nic: u32) -> Option<(u64, Ps)> {
        let copy = self.p.intra_node_copy?;
        let topo = net.topology();
        (topo.nic_node(src_nic) == topo.nic_node(dst_nic)).then_some(copy)
    }

    /// Data of leg `part` of `xfer`, through the network or copied in the node.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn send_data<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        (src_nic, dst_nic): (u32, u32),
        size: u64,
        xfer: u32,
        part: u64,
    ) {
        match self.local_copy(net, src_nic, dst_nic) {
            None => net.send_data(q, now, src_nic, dst_nic, size, self.token_of(xfer, part)),
            Some((bandwidth, latency)) => {
                let done = now + latency + transfer_time(size, bandwidth);
                for (at, what) in [(now, STARTED), (done, COPIED), (done, LANDED)] {
                    q.at(at, local(xfer, part, what));
                }
            }
        }
    }

    /// A control message (acknowledgement, request-to-send, get request) of leg `part`.
    pub(super) fn send_control<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        (src_nic, dst_nic): (u32, u32),
        xfer: u32,
        part: u64,
    ) {
        match self.local_copy(net, src_nic, dst_nic) {
            None => net.send_control(q, now, src_nic, dst_nic, self.token_of(xfer, part)),
            Some((_, latency)) => q.at(now + latency, local(xfer, part, ARRIVED)),
        }
    }

    /// A local step is due: the runtime reacts as to the network's notice.
    pub(super) fn on_local<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        (xfer, part, what): (u32, u8, u8),
    ) {
        let token = token(xfer, part as u64);
        let notice = match what {
            STARTED => Notice::TxStarted { token },
            COPIED => Notice::TxDone { token },
            LANDED => Notice::Landed { token, hops: 0 },
            _ => Notice::ControlArrived { token },
        };
        self.on_notice(q, net, now, notice);
    }
}

fn local(xfer: u32, part: u64, what: u8) -> RtEvent {
    RtEvent::Local {
        xfer: xfer.into(),
        part: part as u8,
        what,
    }
}
