//! The machine presets (docs/machine.md, "Presets"): each is the size it says, and a large
//! put across it streams at its links' payload rate less the fixed latencies.

use acesim::frontends::schedule;
use acesim::{simulate, MachineSource};

/// (preset, routers, nodes, NICs per node, link bandwidth in bytes/s, payload share of a
/// full packet)
const PRESETS: [(&str, usize, usize, usize, f64, f64); 4] = [
    ("hdr-fat-tree", 40, 400, 1, 25e9, 4096.0 / 4122.0),
    ("ndr-fat-tree", 64, 1024, 1, 50e9, 4096.0 / 4122.0),
    ("slingshot", 256, 4096, 1, 25e9, 4064.0 / 4096.0),
    ("tofu-d", 768, 768, 6, 6.8e9, 1888.0 / 1920.0),
];

#[test]
fn each_preset_is_the_machine_it_describes() {
    for (name, routers, nodes, nics, link, payload) in PRESETS {
        let m = MachineSource::open(name).unwrap().load().unwrap();
        assert_eq!(m.config().nic.count as usize, nics, "{name}");
        // 8 MiB from the first node to the last: the payload rate of one link (the DMA
        // engines run at the link's rate), less the first packet's way across (a few µs
        // against 0.3 to 1.2 ms).
        let last = nodes - 1;
        let sched = format!(
            "ranks {nodes}\nrank 0\nput {last} 8MiB tag=1 handle=h\ncomplete h\nrank {last}\npoll 1\n"
        );
        let res = simulate(&m, schedule::parse("p.sched", &sched).unwrap()).unwrap();
        let size = format!("{routers} routers, {nodes} nodes, {nics} NICs/node");
        assert!(res.topology.ends_with(&size), "{name}: {}", res.topology);
        let bw = res.operations.row(0).bandwidth_bytes_per_s.unwrap();
        let rate = link * payload;
        assert!(
            bw <= rate * 1.000_001 && bw >= 0.98 * rate,
            "{name}: {bw:.4e} B/s against a payload rate of {rate:.4e}"
        );
    }
}
