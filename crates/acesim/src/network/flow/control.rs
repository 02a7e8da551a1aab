//! Control packets (put acknowledgements, get requests, rendezvous handshakes) are
//! latency-only: each arrives its route's time alone after it leaves and takes no share of
//! any link. It needs no message record: its route, timing and link counters are worked out
//! as it leaves, and its arrival event names a small slot holding its token and sender.
//! Half the messages of a put-heavy run are control packets: a message record is three
//! cache lines written and read again, a slot a quarter of one.

use super::pipeline::Shape;
use super::state::*;
use crate::engine::Schedule;
use crate::network::interface::Notice;
use crate::units::Ps;

impl FlowNetwork {
    /// A control packet from `src_nic` to `dst_nic` leaves now. Between two NICs of a node
    /// the NIC acknowledges internally, at once.
    pub(super) fn send_control_packet(
        &mut self,
        q: &mut impl Schedule<FlowEvent>,
        now: Ps,
        (src_nic, dst_nic): (u32, u32),
        token: u64,
    ) {
        if self.topo.nic_node(src_nic) == self.topo.nic_node(dst_nic) {
            self.notices.push(Notice::ControlArrived { token });
            return;
        }
        let mut links = std::mem::take(&mut self.route_links);
        self.route(src_nic, dst_nic, &mut links);
        let p = &self.params;
        let shape = Shape {
            packets: 1,
            full: 0,
            last: 0,
            header: p.control,
            dma: None,
            queue: p.injection_queue,
            rx_dma: false,
            link_busy: 0,
        };
        let topo = &self.topo;
        let classes = links.iter().map(|&l| topo.link_kind(l));
        let t = self.timings.timing(&shape, classes, &self.kinds);
        self.count_route(self.params.control, &links, &shape);
        self.route_links = links;
        self.active += 1;
        let c = Control { token, src_nic };
        let slot = crate::ids::place(&mut self.controls, self.free_controls.pop(), c);
        q.at(now + t.landed, FlowEvent::ControlArrived { slot });
    }

    /// The control packet in `slot` reached its NIC.
    pub(super) fn on_control_arrived(&mut self, slot: u32) {
        let token = self.controls[slot as usize].token;
        self.notices.push(Notice::ControlArrived { token });
        self.stats.counters.bytes_delivered += self.params.control;
        self.active -= 1;
        self.free_controls.push(slot);
    }
}
