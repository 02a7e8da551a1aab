//! What a traffic run is asked for (the pattern, the load, the packet, the injection
//! process and the windows), and the checks of what the command line gave.

use crate::error::{Error, Location, Result};
use crate::machine::loaded::Machine;
use crate::run::patterns::Pattern;
use crate::units::{transfer_time, Ps};

/// How packets are generated at each node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Injection {
    /// In each slot (one flit time) a packet starts with probability load·flit/packet.
    Bernoulli,
    /// Exactly one packet every packet/(load·bandwidth).
    Periodic,
}

impl Injection {
    pub fn parse(s: &str) -> std::result::Result<Injection, String> {
        match s {
            "bernoulli" => Ok(Injection::Bernoulli),
            "periodic" => Ok(Injection::Periodic),
            other => Err(format!(
                "unknown injection '{other}' (bernoulli or periodic)"
            )),
        }
    }
}

#[derive(Debug, Clone)]
pub struct TrafficConfig {
    pub pattern: Pattern,
    /// Offered load, a fraction of the injection link bandwidth (0, 1].
    pub load: f64,
    /// Packet size on the wire (header included).
    pub packet: u64,
    /// Slot of the Bernoulli process (BookSim's cycle: one flit time).
    pub flit: u64,
    pub injection: Injection,
    pub warmup: Ps,
    pub measure: Ps,
    /// Longest time after the window to wait for the measured packets.
    pub drain: Ps,
    pub seed: u64,
    /// Check the model's invariants as the run goes and when it stops (`--check`; always
    /// on in debug builds).
    pub check: bool,
    /// Measure how each point would split into this many partitions of a parallel run
    /// (`--partitions`; the point then runs in the order a partitioned run uses).
    pub partitions: Option<u32>,
    /// Threads the point runs on (`--threads`; 0 for every core): the machine is split
    /// into as many partitions, with the same results.
    pub threads: u32,
}

impl TrafficConfig {
    /// A configuration with the documented defaults for what is not given: the flit is the
    /// packet, warm-up 1000 and measurement 5000 packet times on the injection link, drain
    /// 10 windows. The load is set per point (`run_loads`).
    #[allow(clippy::too_many_arguments)]
    pub fn with_defaults(
        machine: &Machine,
        pattern: Pattern,
        packet: u64,
        flit: Option<u64>,
        injection: Injection,
        warmup: Option<Ps>,
        measure: Option<Ps>,
        drain: Option<Ps>,
        seed: u64,
    ) -> Result<TrafficConfig> {
        // The packet first: the default windows are multiples of its time on the wire.
        check_packet(machine, packet, flit.unwrap_or(packet))?;
        let packet_time = transfer_time(packet, machine.nic_link().bandwidth.0);
        let measure = measure.unwrap_or(5000 * packet_time);
        if measure == 0 {
            return Err(command_line(
                "measure",
                "the measurement window must be longer than 0".into(),
            ));
        }
        Ok(TrafficConfig {
            pattern,
            load: 1.0,
            packet,
            flit: flit.unwrap_or(packet),
            injection,
            warmup: warmup.unwrap_or(1000 * packet_time),
            measure,
            drain: drain.unwrap_or(10 * measure),
            seed,
            check: false,
            partitions: None,
            threads: 1,
        })
    }

    /// The same configuration at offered load `load`.
    pub(super) fn at_load(&self, load: f64) -> TrafficConfig {
        TrafficConfig {
            load,
            ..self.clone()
        }
    }
}

/// An input error in `field` of the command line.
pub(super) fn command_line(field: &str, message: String) -> Error {
    Error::input(Location::file("command line").with_field(field), message)
}

/// Checks that an offered load is in (0, 1].
pub(super) fn check_load(load: f64) -> std::result::Result<(), String> {
    if load > 0.0 && load <= 1.0 {
        Ok(())
    } else {
        Err(format!("offered load {load} is outside (0, 1]"))
    }
}

/// Checks the packet and flit sizes against the machine's header and MTU.
pub(super) fn check_packet(machine: &Machine, packet: u64, flit: u64) -> Result<()> {
    let header = machine.nic.header.0;
    if packet <= header || packet > machine.nic.mtu.0 {
        return Err(command_line(
            "packet",
            format!(
                "packet size {packet} B is out of range: a packet must be larger than the header ({header} B) and at most the MTU ({} B)",
                machine.nic.mtu.0
            ),
        ));
    }
    if flit == 0 || flit > packet {
        return Err(command_line(
            "flit",
            "the flit must be between 1 byte and the packet size".into(),
        ));
    }
    Ok(())
}
