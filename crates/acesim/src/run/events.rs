//! The events of a run in one queue: the network model's, and the driver's own (the
//! runtime's for a program, the generator's for synthetic traffic).

use crate::engine::{EventQueue, Schedule};
use crate::network::{ModelEvent, Network};
use crate::runtime::RtEvent;
use crate::units::Ps;

#[derive(Debug, Clone, Copy)]
pub enum Event<NetEvent, Own> {
    Net(NetEvent),
    Own(Own),
}

/// Asks the memory for what the current picosecond's next two events of the network read
/// (`Network::prefetch`): called as each event is taken. The driver's own events are not
/// looked at: asking for a rank's or a message's record early was measured no faster
/// (docs/performance.md, "The coming events' records asked for early").
#[inline(always)]
pub fn prefetch_upcoming<N: Network, O: Copy>(q: &EventQueue<Event<N::Event, O>>, net: &N) {
    for ahead in [2, 1] {
        if let Some(Event::Net(ev)) = q.upcoming(ahead - 1) {
            net.prefetch(ev, ahead);
        }
    }
}

/// The network model schedules its events as `Event::Net`.
impl<NE: ModelEvent, O: Copy> Schedule<NE> for EventQueue<Event<NE, O>> {
    #[inline]
    fn at(&mut self, time: Ps, event: NE) {
        self.schedule(time, Event::Net(event));
    }
    #[inline]
    fn reserve(&mut self, time: Ps) -> u64 {
        EventQueue::reserve(self, time)
    }
    #[inline]
    fn at_reserved(&mut self, time: Ps, key: u64, event: NE) {
        self.schedule_reserved(time, key, Event::Net(event));
    }
    #[inline]
    fn current_key(&self) -> (Ps, u64) {
        EventQueue::current_key(self)
    }
    #[inline]
    fn set_origin(&mut self, origin: u32) {
        EventQueue::set_origin(self, origin)
    }
}

/// The runtime schedules its events as `Event::Own`.
impl<NE: ModelEvent> Schedule<RtEvent> for EventQueue<Event<NE, RtEvent>> {
    #[inline]
    fn at(&mut self, time: Ps, event: RtEvent) {
        self.schedule(time, Event::Own(event));
    }
    #[inline]
    fn reserve(&mut self, time: Ps) -> u64 {
        EventQueue::reserve(self, time)
    }
    #[inline]
    fn at_reserved(&mut self, time: Ps, key: u64, event: RtEvent) {
        self.schedule_reserved(time, key, Event::Own(event));
    }
    #[inline]
    fn current_key(&self) -> (Ps, u64) {
        EventQueue::current_key(self)
    }
    #[inline]
    fn set_origin(&mut self, origin: u32) {
        EventQueue::set_origin(self, origin)
    }
}

#[cfg(test)]
mod tests {
    use super::Event;
    use crate::network::packet::PacketEvent;
    use crate::runtime::RtEvent;

    /// A packet-level program run's queue entry is a key and an event in 16 bytes: the
    /// runtime's event fits beside the packet event's tag (`RtEvent`), which the queue's
    /// speed depends on.
    #[test]
    fn queue_entries_are_16_bytes() {
        assert_eq!(std::mem::size_of::<RtEvent>(), 7);
        assert_eq!(std::mem::size_of::<Event<PacketEvent, RtEvent>>(), 8);
        assert_eq!(
            std::mem::size_of::<(u64, Event<PacketEvent, RtEvent>)>(),
            16
        );
    }
}
