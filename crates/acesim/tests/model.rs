//! The packet model against hand-computed expectations (DESIGN.md §2 and issue 2).

use acesim::frontends::schedule;
use acesim::units::{transfer_time, Ps};
use acesim::{simulate, Error, Machine, MachineSource, Results};

fn machine(toml: &str, sets: &[&str]) -> Machine {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    MachineSource::from_text("test.toml", toml)
        .with_overrides(&sets)
        .load()
        .expect("test machine loads")
}

fn run(m: &Machine, sched: &str) -> Results {
    simulate(
        m,
        schedule::parse("test.sched", sched).expect("schedule parses"),
    )
    .expect("run finishes")
}

const TABLE1: &str = include_str!("../presets/table1.toml");

/// Table 1 numbers, used in the equations below.
const L: Ps = 600; // cable latency
const D_ROUTER: Ps = 4_000 + 4_000 + 4_000 + 128_000; // routing + VA + SA + switch latency
const B: u64 = 4_000_000_000;
const DMA: u64 = 2_800_000_000;
const H: u64 = 32; // header
const C: u64 = 32; // control packet

/// Expected (dma_start, landed, complete) of one uncontended single-packet put of `s` bytes
/// over `r` routers, issued at `t0`, with library overhead `tpp` (issue 2, "The model").
fn put_times(t0: Ps, tpp: Ps, s: u64, r: u64) -> (Ps, Ps, Ps) {
    let start = t0 + tpp;
    let head_in = start + transfer_time(s, DMA);
    let tail_at_nic = head_in + (r + 1) * L + r * D_ROUTER + transfer_time(s + H, B);
    let t_end = tail_at_nic + transfer_time(s, DMA);
    let ctrl = t_end + (r + 1) * L + r * D_ROUTER + transfer_time(C, B);
    (start, t_end, ctrl + tpp)
}

fn check_single_put(toml: &str, sets: &[&str], ranks: u32, dst: u32, routers: u64) {
    let m = machine(toml, sets);
    let tpp = m.node.overhead.0;
    for s in [0u64, 1, 4, 1000, 2016] {
        let sched = format!("ranks {ranks}\nrank 0\ncompute 3us\nput {dst} {s} tag=7 handle=a\ncomplete a\nrank {dst}\npoll 7\n");
        let res = run(&m, &sched);
        let op = &res.operations.row(0);
        let (start, landed, complete) = put_times(3_000_000, tpp, s, routers);
        assert_eq!(
            op.dma_start_ps,
            Some(start),
            "DMA start, size {s}, {sets:?}"
        );
        assert_eq!(op.landed_ps, Some(landed), "T_end, size {s}, {sets:?}");
        assert_eq!(
            op.complete_ps,
            Some(complete),
            "completion, size {s}, {sets:?}"
        );
        assert_eq!(res.per_rank[0].finish_ps, complete);
        assert_eq!(
            res.per_rank[dst as usize].finish_ps, landed,
            "poll returns at T_end"
        );
        assert_eq!(res.predicted_time_ps, complete);
    }
}

#[test]
fn single_packet_put_matches_the_equation_on_a_crossbar() {
    check_single_put(TABLE1, &[], 2, 1, 1);
    check_single_put(TABLE1, &["node.overhead=0.8us"], 2, 1, 1);
}

#[test]
fn single_packet_put_matches_the_equation_on_mesh_torus_and_trees() {
    // 1D mesh of 5 routers: node 0 to node 4 crosses all 5.
    check_single_put("[topology]\nkind='mesh'\ndims=[5]", &[], 5, 4, 5);
    // 3D torus 4x4x4: node 0 to (2,1,3) = 2+1+1 hops (3 wraps to -1) -> 5 routers.
    check_single_put(
        "[topology]\nkind='torus'\ndims=[4,4,4]",
        &["node.overhead=250ns"],
        64,
        2 + 4 + 48,
        5,
    );
    // 2-ary 3-tree: node 0 to node 7 climbs to the top: 5 switches.
    check_single_put("[topology]\nkind='fat_tree'\nk=2\nn=3", &[], 8, 7, 5);
    // Leaf/spine: different leaves, 3 switches.
    check_single_put(
        "[topology]\nkind='leaf_spine'\nnodes_per_leaf=4\nspines=2",
        &[],
        8,
        6,
        3,
    );
}

#[test]
fn get_is_a_request_then_the_data() {
    let m = machine(TABLE1, &["node.overhead=100ns"]);
    let s = 1000;
    let res = run(
        &m,
        &format!("ranks 2\nrank 1\nget 0 {s} handle=g\ncomplete g\n"),
    );
    let op = &res.operations.row(0);
    let tpp = 100_000;
    let request_at_remote = tpp + 2 * L + D_ROUTER + transfer_time(C, B);
    let head_in = request_at_remote + transfer_time(s, DMA);
    let landed = head_in + 2 * L + D_ROUTER + transfer_time(s + H, B) + transfer_time(s, DMA);
    assert_eq!(op.kind, "get");
    assert_eq!((op.src, op.dst), (0, 1));
    assert_eq!(op.dma_start_ps, Some(request_at_remote));
    assert_eq!(op.landed_ps, Some(landed));
    assert_eq!(op.complete_ps, Some(landed + tpp));
}

#[test]
fn a_2mb_put_is_bound_by_the_dma_rate() {
    let m = machine(TABLE1, &[]);
    let res = run(&m, "ranks 2\nrank 0\nput 1 2MB handle=1\ncomplete 1\n");
    let op = &res.operations.row(0);
    let bw = op.bandwidth_bytes_per_s.unwrap();
    assert!((2.78e9..2.8e9).contains(&bw), "effective bandwidth {bw}");
    // The DMA engines stream without gaps. The short last packet (128 B) arrives while the
    // receive engine still writes the full packet before it, so T_end is that full packet's
    // flight and receive DMA plus the last packet's receive DMA.
    let packets = 2_000_000u64.div_ceil(2016);
    let last = 2_000_000 - (packets - 1) * 2016;
    assert_eq!(last, 128);
    let full_sent = (packets - 1) * transfer_time(2016, DMA);
    let flight = 2 * L + D_ROUTER + transfer_time(2048, B) + transfer_time(2016, DMA);
    assert_eq!(
        op.landed_ps.unwrap() - op.dma_start_ps.unwrap(),
        full_sent + flight + transfer_time(last, DMA)
    );
}

#[test]
fn packets_cut_through_multi_hop_paths() {
    // One full packet over 5 routers: one serialization, not six.
    let m = machine("[topology]\nkind='mesh'\ndims=[5]", &[]);
    let s = 2016;
    let res = run(&m, &format!("ranks 5\nrank 0\nput 4 {s}\n"));
    let landed = res.operations.row(0).landed_ps.unwrap();
    let (_, expected, _) = put_times(0, 0, s, 5);
    assert_eq!(landed, expected);
    let store_and_forward =
        2 * transfer_time(s, DMA) + 6 * transfer_time(s + H, B) + 6 * L + 5 * D_ROUTER;
    assert!(landed + 5 * transfer_time(s + H, B) == store_and_forward);
}

#[test]
fn two_puts_share_a_link_fairly() {
    // Fast DMA so the shared router link (4 GB/s) is the bottleneck: 0->2 and 1->3 share r1->r2.
    let m = machine(
        "[topology]\nkind='mesh'\ndims=[4]",
        &["nic.dma_rate=100GB/s"],
    );
    let size = 1_000_000u64;
    let res = run(
        &m,
        &format!("ranks 4\nrank 0\nput 2 {size}\nrank 1\nput 3 {size}\n"),
    );
    let wire: u64 = size + size.div_ceil(2016) * H;
    let alone = transfer_time(wire, B);
    for op in &res.operations {
        let t = op.landed_ps.unwrap() - op.dma_start_ps.unwrap();
        let ratio = t as f64 / (2 * alone) as f64;
        assert!(
            (0.98..1.02).contains(&ratio),
            "each put gets half the link: ratio {ratio}"
        );
    }
    let shared = res.links.iter().find(|l| l.name == "r1.p0->r2").unwrap();
    assert_eq!(shared.bytes, 2 * wire);
}

#[test]
fn two_puts_share_a_receive_dma_engine_fairly() {
    let m = machine(TABLE1, &[]);
    let size = 2_000_000u64;
    let res = run(
        &m,
        &format!("ranks 3\nrank 0\nput 2 {size}\nrank 1\nput 2 {size}\n"),
    );
    let alone = transfer_time(size, DMA);
    let (a, b) = (
        res.operations.row(0).landed_ps.unwrap(),
        res.operations.row(1).landed_ps.unwrap(),
    );
    for t in [a, b] {
        let ratio = t as f64 / (2 * alone) as f64;
        assert!(
            (0.99..1.01).contains(&ratio),
            "shared receive DMA: ratio {ratio}"
        );
    }
    assert!(
        a.abs_diff(b) <= 2 * transfer_time(2016, DMA),
        "interleaved packet by packet"
    );
}

/// A hot spot (three senders into one slow receive engine) next to an unrelated flow that
/// shares a router input with one of the hot flows.
fn hot_spot(buffer: &str) -> Ps {
    let m = machine(
        "[topology]\nkind='mesh'\ndims=[3]\nnodes_per_router=2",
        &[
            "router.vcs=1",
            &format!("router.buffer_per_vc={buffer}"),
            "nic.dma_rate=1.5GB/s",
        ],
    );
    let hot = "put 5 4MB\n";
    let sched = format!("ranks 6\nrank 0\n{hot}rank 2\n{hot}rank 4\n{hot}rank 1\nput 3 1MB\n");
    let res = run(&m, &sched);
    let f = res.operations.iter().find(|o| o.src == 1).unwrap();
    f.landed_ps.unwrap() - f.dma_start_ps.unwrap()
}

#[test]
fn finite_buffers_back_up_a_hot_spot_into_unrelated_flows() {
    let free = hot_spot("unbounded");
    let backed_up = hot_spot("4 KiB");
    let dma_bound = transfer_time(1_000_000, 1_500_000_000);
    assert!(
        (free as f64) < dma_bound as f64 * 1.01,
        "without backpressure the flow runs at its DMA rate"
    );
    assert!(
        backed_up as f64 > 1.5 * free as f64,
        "backpressure slows it: {backed_up} vs {free}"
    );
}

fn ring_load(m: &Machine) -> Result<Results, Error> {
    // Every node of an 8-ring sends 256 KB four and three hops away: all wrap links busy.
    let mut sched = String::from("ranks 8\n");
    for r in 0..8 {
        sched += &format!(
            "rank {r}\nput {} 256KB\nput {} 256KB\n",
            (r + 4) % 8,
            (r + 3) % 8
        );
    }
    simulate(m, schedule::parse("ring", &sched).unwrap())
}

#[test]
fn torus_with_dateline_vcs_is_deadlock_free_under_load() {
    let m = machine(
        "[topology]\nkind='torus'\ndims=[8]",
        &["router.buffer_per_vc=2KiB", "nic.dma_rate=8GB/s"],
    );
    let res = ring_load(&m).expect("no deadlock with two VC classes");
    assert_eq!(
        res.operations
            .iter()
            .filter(|o| o.complete_ps.is_some())
            .count(),
        16
    );
    // The same load with one VC (which validation refuses) does deadlock: the VCs matter.
    let mut one_vc = m.clone();
    one_vc.config_mut().router.vcs = 1;
    match ring_load(&one_vc) {
        Err(Error::Deadlock(report)) => assert!(report.network.is_some()),
        other => panic!(
            "expected a network deadlock, got {:?}",
            other.map(|r| r.predicted_time_ps)
        ),
    }
}

#[test]
fn links_never_exceed_bandwidth_and_bytes_are_conserved() {
    let m = machine(
        "[topology]\nkind='torus'\ndims=[4,4]",
        &["router.buffer_per_vc=4KiB"],
    );
    let mut sched = String::from("ranks 16\n");
    for r in 0..16u32 {
        sched += &format!(
            "rank {r}\nput {} 100KB\nput {} 30KB\nget {} 10KB\n",
            (r * 7 + 3) % 16,
            (r + 1) % 16,
            (r + 5) % 16
        );
    }
    let res = run(&m, &sched);
    let mut injected = 0;
    let mut ejected = 0;
    for l in &res.links {
        assert!(
            l.busy_ps <= res.predicted_time_ps,
            "{} busy beyond the run",
            l.name
        );
        // A link sends at most its bandwidth: bytes / bandwidth <= busy time (+1 ps rounding per packet).
        assert!(
            transfer_time(l.bytes, l.bandwidth_bytes_per_s) <= l.busy_ps + l.packets,
            "{} over bandwidth",
            l.name
        );
        assert!(l.utilization <= 1.0);
        match l.class {
            "injection" => injected += l.bytes,
            "ejection" => ejected += l.bytes,
            _ => {}
        }
    }
    assert_eq!(injected, ejected);
    assert_eq!(injected, res.bytes_injected);
}

#[test]
fn same_inputs_give_identical_results() {
    let m = machine("[topology]\nkind='fat_tree'\nk=4\nn=2", &[]);
    let mut sched = String::from("ranks 16\n");
    for r in 0..16u32 {
        sched += &format!(
            "rank {r}\ncompute {}ns\nput {} 50KB tag=1\npoll 1\n",
            r * 13,
            (r + 5) % 16
        );
    }
    let strip = |r: Results| {
        let mut r = r;
        r.wall_seconds = 0.0;
        (r.to_json(), r.links_csv())
    };
    assert_eq!(strip(run(&m, &sched)), strip(run(&m, &sched)));
}

#[test]
fn same_node_puts_use_the_dma_engines_and_wait_their_turn() {
    let m = machine(TABLE1, &[]);
    let res = run(&m, "ranks 2\nrank 0\nput 1 1MB\nput 0 1MB\n");
    let (net, local) = (&res.operations.row(0), &res.operations.row(1));
    let packets = 1_000_000u64.div_ceil(2016);
    let last = 1_000_000 - (packets - 1) * 2016;
    let dma_all: Ps = (packets - 1) * transfer_time(2016, DMA) + transfer_time(last, DMA);
    // FIFO: the local put's DMA starts when the network put's last DMA ends.
    assert_eq!(
        local.dma_start_ps,
        Some(net.dma_start_ps.unwrap() + dma_all)
    );
    // Local: send and receive DMA engines pipeline packet by packet, no network. The short
    // last packet waits for the receive engine to finish the full packet before it.
    assert_eq!(last, 64);
    assert_eq!(
        local.landed_ps,
        Some(local.dma_start_ps.unwrap() + dma_all + transfer_time(2016, DMA))
    );
    assert_eq!(local.complete_ps, local.landed_ps);
    assert!(!res.links.iter().any(|l| l.class == "network"));
}

#[test]
fn a_poll_that_nothing_satisfies_is_reported_with_its_source_line() {
    let m = machine(TABLE1, &[]);
    let sched = "ranks 3\nrank 0\nput 1 8 tag=1 @prog.c:5\nrank 1\npoll 1 @prog.c:9\npoll 1 @prog.c:10\nrank 2\npoll 4\n";
    match simulate(&m, schedule::parse("d.sched", sched).unwrap()) {
        Err(Error::Deadlock(r)) => {
            let text = r.to_string();
            assert_eq!(r.blocked.len(), 2, "{text}");
            assert!(text.contains("rank 1: `poll 1` at prog.c:10"), "{text}");
            assert!(text.contains("rank 2: `poll 4` at d.sched:8"), "{text}");
        }
        other => panic!(
            "expected deadlock, got {:?}",
            other.map(|r| r.predicted_time_ps)
        ),
    }
}

#[test]
fn backpressure_reaches_the_send_dma_engine() {
    // Rank 0's first put goes into a hot spot that drains at a third of its DMA rate; its
    // NIC's send buffer fills, the DMA engine waits, and the second put (to an idle node)
    // starts only when the first has been DMA'd out entirely.
    let m = machine(
        "[topology]\nkind='mesh'\ndims=[3]\nnodes_per_router=2",
        &[
            "router.vcs=1",
            "router.buffer_per_vc=4KiB",
            "nic.dma_rate=1.5GB/s",
        ],
    );
    let hot = "put 5 1MB\n";
    let sched = format!("ranks 6\nrank 0\n{hot}put 1 64KB\nrank 2\n{hot}rank 4\n{hot}");
    let res = run(&m, &sched);
    let second = res.operations.iter().find(|o| o.dst == 1).unwrap();
    let unhindered = transfer_time(1_000_000, 1_500_000_000);
    let dma_start = second.dma_start_ps.unwrap();
    assert!(
        dma_start as f64 > 2.0 * unhindered as f64,
        "DMA waited for the hot spot: {dma_start} vs {unhindered}"
    );
    let n = res.links.iter().find(|l| l.name == "nic0->r0").unwrap();
    assert!(
        n.stall_ps.unwrap_or(0) > unhindered,
        "the injection link stalled on credits"
    );
}

/// A link's busy time is exactly the sum of its packets' serialization times, whether that
/// time fits the link's memo of its last packet size (32 bits of picoseconds) or not: at
/// 200 KB/s a 2 KiB packet takes 10.24 ms, more than 2^32 ps.
#[test]
fn serialization_times_are_exact_on_fast_and_very_slow_links() {
    for bandwidth in ["4GB/s", "200KB/s"] {
        let m = machine(TABLE1, &[&format!("link.bandwidth={bandwidth}")]);
        // Three full packets of 2016 B payload + 32 B header from rank 0.
        let res = run(&m, "ranks 2\nrank 0\nput 1 6048 tag=1\nrank 1\npoll 1\n");
        let injection = res
            .links
            .iter()
            .find(|l| l.class == "injection" && l.packets == 3)
            .expect("rank 0's injection link sent the three packets");
        let per_packet = transfer_time(2048, injection.bandwidth_bytes_per_s);
        assert_eq!(injection.busy_ps, 3 * per_packet, "{bandwidth}");
        if bandwidth == "200KB/s" {
            assert!(per_packet > u32::MAX as Ps);
        }
    }
}

/// (landed, complete) of an uncontended single-packet put of `s` bytes on a crossbar (one
/// router, two NIC links) with link bandwidth `b`, cable latency `l`, overhead 0, issued at 0.
fn crossbar_put(s: u64, b: u64, l: Ps) -> (Ps, Ps) {
    let head_in = transfer_time(s, DMA);
    let t_end = head_in + 2 * l + D_ROUTER + transfer_time(s + H, b) + transfer_time(s, DMA);
    (t_end, t_end + 2 * l + D_ROUTER + transfer_time(C, b))
}

fn put_once(m: &Machine, s: u64) -> (Ps, Ps) {
    let res = run(
        m,
        &format!("ranks 2\nrank 0\nput 1 {s} tag=1 handle=a\ncomplete a\nrank 1\npoll 1\n"),
    );
    let op = &res.operations.row(0);
    (op.landed_ps.expect("landed"), op.complete_ps.expect("done"))
}

const XBAR_FAST: &str = "[topology]\nkind = \"crossbar\"\n[link]\nbandwidth = \"12.5 GB/s\"\n";

#[test]
fn switch_throughput_follows_the_links_unless_set() {
    // No switch_throughput: packets leave at the 12.5 GB/s the link has (the old 4 GB/s
    // default capped every output).
    let m = machine(XBAR_FAST, &[]);
    assert!(m.warnings().is_empty(), "{:?}", m.warnings());
    assert_eq!(put_once(&m, 1000), crossbar_put(1000, 12_500_000_000, L));
    // Set below the links by the user: honoured, and warned about.
    let m = machine(XBAR_FAST, &["router.switch_throughput=4GB/s"]);
    assert_eq!(put_once(&m, 1000), crossbar_put(1000, B, L));
    let w = m.warnings();
    assert_eq!(w.len(), 1);
    assert!(
        w[0].starts_with("router.switch_throughput (4 GB/s) is below link.bandwidth"),
        "{w:?}"
    );
    // The papers' preset keeps its explicit 4 GB/s: equal to its links, no warning.
    let t1 = machine(TABLE1, &[]);
    assert!(t1.warnings().is_empty());
    assert_eq!(put_once(&t1, 1000), crossbar_put(1000, B, L));
    // ... and warns once a faster link is asked for.
    assert_eq!(
        machine(TABLE1, &["link.bandwidth=25GB/s"]).warnings().len(),
        1
    );
}

#[test]
fn partial_link_tables_take_the_rest_from_link() {
    // [nic_link] gives only a bandwidth: its latency is [link]'s 5 ns, not a default.
    let toml = "[topology]\nkind = \"crossbar\"\n[link]\nbandwidth = \"16 GB/s\"\nlatency = \"5 ns\"\n[nic_link]\nbandwidth = \"8 GB/s\"\n";
    let m = machine(toml, &[]);
    assert_eq!(m.nic_link().latency.0, 5_000);
    assert_eq!(put_once(&m, 1000), crossbar_put(1000, 8_000_000_000, 5_000));
    // [global_link] gives only a latency: its bandwidth is [link]'s, not 4 GB/s.
    let df = machine(
        "[topology]\nkind = \"dragonfly\"\np = 2\na = 4\nh = 2\n[link]\nbandwidth = \"16 GB/s\"\n[global_link]\nlatency = \"200 ns\"\n",
        &[],
    );
    assert_eq!(df.global_link().bandwidth.0, 16_000_000_000);
    assert_eq!(df.global_link().latency.0, 200_000);
    // `acesim machine` prints every field in force, and it loads back the same.
    let text = df.in_force().to_toml();
    for line in [
        "[nic_link]",
        "[global_link]",
        "send_overhead = \"0 ps\"",
        "recv_overhead = \"0 ps\"",
    ] {
        assert!(text.contains(line), "{line} missing from:\n{text}");
    }
    let back = machine(&text, &[]);
    assert_eq!(back.global_link(), df.global_link());
    assert_eq!(back.nic_link(), df.nic_link());
}

#[test]
fn network_latency_starts_at_the_dma_and_latency_at_the_issue() {
    // A single-packet put on an idle NIC: the DMA starts right after T_pp, so the latency
    // is the network latency plus T_pp.
    let m = machine(TABLE1, &["node.overhead=0.6us"]);
    let tpp = 600_000;
    let res = run(
        &m,
        "ranks 2\nrank 0\nput 1 1000 tag=1 handle=a\ncomplete a\nrank 1\npoll 1\n",
    );
    let a = &res.operations.row(0);
    let (start, _, complete) = put_times(0, tpp, 1000, 1);
    assert_eq!(a.dma_start_ps, Some(start));
    assert_eq!(a.latency_ps, Some(complete));
    assert_eq!(a.network_latency_ps, Some(complete - start));
    // Two puts issued together, the first of 100 kB (36 us of DMA): the second is issued
    // at T_pp and its DMA waits for the first's; its latency holds that wait, its network
    // latency does not.
    let res = run(
        &m,
        "ranks 2\nrank 0\nput 1 100000 tag=1 handle=a\nput 1 1000 tag=1 handle=b\ncomplete a\ncomplete b\nrank 1\npoll 1\npoll 1\n",
    );
    let b = &res.operations.row(1);
    let b_issue = b.issue_ps;
    let b_start = b.dma_start_ps.expect("started");
    assert_eq!(b_issue, tpp);
    assert!(
        b_start >= start + transfer_time(100_000, DMA) - 100,
        "the second DMA waits for the first ({b_start})"
    );
    let b_done = b.complete_ps.expect("done");
    assert_eq!(b.latency_ps, Some(b_done - b_issue));
    assert_eq!(b.network_latency_ps, Some(b_done - b_start));
}

#[test]
fn the_summary_says_collectives_ran() {
    let m = machine(TABLE1, &[]);
    let res = run(
        &m,
        "ranks 2\nrank 0\nbarrier\nallreduce 8\nrank 1\nbarrier\nallreduce 8\n",
    );
    assert!(res.operations.is_empty());
    let line = res
        .summary()
        .lines()
        .find(|l| l.starts_with("ranks:"))
        .expect("counts line")
        .to_string();
    assert!(line.contains("operations: 0 (+"), "{line}");
    assert!(line.contains("in 2 collective calls)"), "{line}");
}

#[test]
fn messages_within_a_node_copied_in_memory_take_latency_plus_size_over_bandwidth() {
    // Two ranks on one node, `node.intra_node = "memory"` at 10 GB/s and 0.5 µs, overheads 1 µs.
    let m = machine(
        TABLE1,
        &[
            "placement.ranks_per_node=2",
            "node.overhead=\"1us\"",
            "node.intra_node=\"memory\"",
            "node.intra_node_bandwidth=\"10 GB/s\"",
            "node.intra_node_latency=\"0.5us\"",
        ],
    );
    let (tpp, lat, bw) = (1_000_000, 500_000, 10_000_000_000u64);
    let r = run(
        &m,
        "ranks 2\nrank 0\nsend 1 1MiB\nput 1 4KiB tag=1 handle=h\ncomplete h\nrank 1\nrecv 0 1MiB\npoll 1\n",
    );
    let (send, put) = (&r.operations.row(0), &r.operations.row(1));
    // Rendezvous: the request-to-send and the receiver's get request are handshakes of the
    // latency each; then the data is copied.
    let data_start = tpp + lat + lat;
    assert_eq!(send.dma_start_ps, Some(data_start));
    let landed = data_start + lat + transfer_time(1 << 20, bw);
    assert_eq!(send.landed_ps, Some(landed));
    // The put is issued once the send completed (its data copied) and its overhead paid.
    let put_start = landed + tpp;
    assert_eq!(put.dma_start_ps, Some(put_start));
    let put_landed = put_start + lat + transfer_time(4096, bw);
    assert_eq!(put.landed_ps, Some(put_landed));
    // The acknowledgement is a handshake, then the completion overhead.
    assert_eq!(put.complete_ps, Some(put_landed + lat + tpp));
    // Nothing crossed the NIC.
    assert_eq!(r.packet_hops, 0);
    assert!(r.all_links.iter().all(|l| l.bytes == 0));
}

#[test]
fn messages_between_nodes_ignore_the_intra_node_path() {
    let sched = "ranks 2\nrank 0\nput 1 4KiB tag=1 handle=h\ncomplete h\nrank 1\npoll 1\n";
    let nic = run(&machine(TABLE1, &[]), sched);
    let memory = run(&machine(TABLE1, &["node.intra_node=\"memory\""]), sched);
    assert_eq!(nic.predicted_time_ps, memory.predicted_time_ps);
    assert!(memory.packet_hops > 0);
}

#[test]
fn link_rows_name_and_place_every_wired_link_as_the_topology_does() {
    // The link table keeps compact rows and makes names and ends when read: they must be
    // the topology's, on every shape (NIC links, router links, dragonfly local and global).
    use acesim::machine::topology::{LinkEnd, Peer, Topology};
    for toml in [
        "[topology]\nkind = 'torus'\ndims = [3, 4]\nnodes_per_router = 2\n",
        "[topology]\nkind = 'fat_tree'\nk = 4\nn = 2\n",
        "[topology]\nkind = 'dragonfly'\np = 2\na = 4\nh = 2\ng = 3\n",
        "[topology]\nkind = 'leaf_spine'\nnodes_per_leaf = 2\nspines = 2\nleaves = 3\n",
    ] {
        let m = machine(toml, &[]);
        let r = run(&m, "ranks 2\nrank 0\nput 1 5000 tag=1\nrank 1\npoll 1\n");
        let topo = Topology::build(&m, 2).unwrap();
        let wired: Vec<u32> = (0..topo.num_links())
            .filter(|&l| l >= topo.num_ports() || topo.ports.peer[l as usize] != Peer::None)
            .collect();
        assert_eq!(r.all_links.len(), wired.len(), "{toml}");
        for (row, &l) in r.all_links.iter().zip(&wired) {
            assert_eq!(row.link, l);
            assert_eq!(row.name, topo.link_name(l), "{toml}");
            let src = (l < topo.num_ports()).then(|| topo.ports.port_router[l as usize]);
            let dst = match topo.link_end(l) {
                Some(LinkEnd::RouterIn(p)) => Some(topo.ports.port_router[p as usize]),
                _ => None,
            };
            assert_eq!(
                (row.src_router, row.dst_router),
                (src, dst),
                "{toml}: {}",
                row.name
            );
            assert_eq!(r.all_links.by_id(l).unwrap().name, row.name);
            assert_eq!(r.all_links.by_name(&row.name), Some(l));
        }
        // The busiest links come first (ties to the lower id), as many as asked.
        let busiest = r.all_links.busiest(3);
        let mut by_use: Vec<(u64, u32)> = r.all_links.iter().map(|l| (l.busy_ps, l.link)).collect();
        by_use.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let want: Vec<u32> = by_use.iter().take(3).map(|x| x.1).collect();
        assert_eq!(busiest, want, "{toml}");
        let bytes: u64 = r.all_links.bytes().map(|(_, b)| b).sum();
        assert_eq!(bytes, r.all_links.iter().map(|l| l.bytes).sum::<u64>());
        assert!(bytes > 5000);
    }
}
