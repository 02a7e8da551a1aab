//! Properties that must hold for any topology and workload.

use acesim::frontends::schedule;
use acesim::machine::topology::{Peer, Topology};
use acesim::units::transfer_time;
use acesim::{simulate, Machine, MachineSource};
use proptest::prelude::*;

fn load(toml: &str) -> Machine {
    MachineSource::from_text("p.toml", toml)
        .load()
        .expect("machine loads")
}

/// Follows the routing function; returns the routers visited and the VC classes used on
/// router-to-router hops, tagged by dimension (the output port / 2 on a grid).
fn walk(t: &Topology, src: u32, dst: u32) -> (Vec<u32>, Vec<(u32, u8)>) {
    let mut r = t.nic_router(src);
    let mut routers = vec![r];
    let mut classes = Vec::new();
    for _ in 0..10_000 {
        let hop = t.route(r, src, dst);
        assert_eq!(
            t.ports.port_router[hop.port as usize], r,
            "route uses a port of the current router"
        );
        match t.ports.peer[hop.port as usize] {
            Peer::Nic(n) => {
                assert_eq!(n, dst, "delivered to the destination NIC");
                return (routers, classes);
            }
            Peer::Router(p) => {
                classes.push(((hop.port - t.ports.port_base[r as usize]) / 2, hop.class));
                r = t.ports.port_router[p as usize];
                routers.push(r);
            }
            Peer::None => panic!("routed to an unconnected port"),
        }
    }
    panic!("route does not terminate");
}

fn grid() -> impl Strategy<Value = (Vec<u32>, Vec<bool>, u32)> {
    prop::collection::vec((1u32..6, any::<bool>()), 1..5).prop_flat_map(|d| {
        let dims: Vec<u32> = d.iter().map(|x| x.0).collect();
        let wrap: Vec<bool> = d.iter().map(|x| x.1).collect();
        (Just(dims), Just(wrap), 1u32..3)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn grid_routes_are_minimal_loop_free_and_dateline_ordered((dims, wrap, npr) in grid(), seed in any::<u64>()) {
        let toml = format!(
            "[topology]\nkind='mesh'\ndims={dims:?}\nwrap={wrap:?}\nnodes_per_router={npr}\n[router]\nbuffer_per_vc='unbounded'"
        );
        let t = Topology::build(&load(&toml), 1).unwrap();
        let n = t.num_nics();
        let mut x = seed;
        for _ in 0..40 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let (s, d) = ((x >> 33) as u32 % n, (x >> 7) as u32 % n);
            let (routers, classes) = walk(&t, s, d);
            let mut sorted = routers.clone();
            sorted.sort_unstable();
            sorted.dedup();
            prop_assert_eq!(sorted.len(), routers.len(), "no router visited twice");
            // Minimal: the hop count is the sum of per-dimension distances.
            let (rs, rd) = (t.nic_router(s), t.nic_router(d));
            let mut stride = 1;
            let mut want = 0;
            for (i, &k) in dims.iter().enumerate() {
                let (a, b) = ((rs / stride) % k, (rd / stride) % k);
                let lin = a.abs_diff(b);
                want += if wrap[i] && k > 1 { lin.min(k - lin) } else { lin };
                stride *= k;
            }
            prop_assert_eq!(routers.len() as u32 - 1, want);
            // Within a dimension the VC class never goes down (dateline: 0 then 1).
            for w in classes.windows(2) {
                if w[0].0 == w[1].0 {
                    prop_assert!(w[0].1 <= w[1].1, "class decreased in dimension {}", w[0].0);
                }
            }
        }
    }

    #[test]
    fn tree_routes_reach_every_destination(k in 2u32..5, n in 1u32..4, m in 1u32..5, spines in 1u32..4, q in 1u32..3) {
        let ft = Topology::build(&load(&format!("[topology]\nkind='fat_tree'\nk={k}\nn={n}")), 1).unwrap();
        let ls = Topology::build(&load(&format!(
            "[topology]\nkind='leaf_spine'\nnodes_per_leaf={m}\nspines={spines}\nlinks_per_spine={q}\nleaves=3"
        )), 1).unwrap();
        for t in [&ft, &ls] {
            for s in 0..t.num_nics() {
                for d in 0..t.num_nics() {
                    let (routers, _) = walk(t, s, d);
                    let mut sorted = routers.clone();
                    sorted.sort_unstable();
                    sorted.dedup();
                    prop_assert_eq!(sorted.len(), routers.len());
                }
            }
        }
        // Fat tree: up to the lowest common ancestor level and back down.
        for s in 0..ft.num_nics() {
            for d in 0..ft.num_nics() {
                let (routers, _) = walk(&ft, s, d);
                let level = (0..n).find(|&l| s / k.pow(l + 1) == d / k.pow(l + 1)).unwrap_or(n - 1);
                prop_assert_eq!(routers.len() as u32, 2 * level + 1);
            }
        }
    }
}

/// A random workload of puts, gets and polls that always finishes.
fn workload() -> impl Strategy<Value = (u32, Vec<(u32, u32, u64, u8)>)> {
    (2u32..9).prop_flat_map(|ranks| {
        let op = (0..ranks, 0..ranks, 0u64..20_000, 0u8..3);
        (Just(ranks), prop::collection::vec(op, 1..24))
    })
}

fn schedule_text(ranks: u32, ops: &[(u32, u32, u64, u8)]) -> String {
    let mut per_rank = vec![String::new(); ranks as usize];
    let mut polls = vec![0u32; ranks as usize];
    for (i, &(a, b, size, kind)) in ops.iter().enumerate() {
        let r = &mut per_rank[a as usize];
        match kind {
            0 => {
                r.push_str(&format!(
                    "put {b} {size} tag=9 handle=p{i}\ncomplete p{i}\n"
                ));
                polls[b as usize] += 1;
            }
            1 => r.push_str(&format!("get {b} {size} handle=g{i}\n")),
            _ => r.push_str(&format!("compute {}ns\nput {b} {size} tag=9\n", size % 997)),
        }
        if kind == 2 {
            polls[b as usize] += 1;
        }
    }
    let mut text = format!("ranks {ranks}\n");
    for r in 0..ranks as usize {
        text += &format!("rank {r}\n{}", per_rank[r]);
        text += &"poll 9\n".repeat(polls[r] as usize);
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn any_workload_conserves_bytes_respects_bandwidth_and_is_deterministic(
        (ranks, ops) in workload(),
        topo in 0usize..4,
        buffer in prop::sample::select(vec!["'2 KiB'", "'6 KiB'", "'unbounded'"]),
    ) {
        let kinds = [
            "kind='crossbar'",
            "kind='torus'\ndims=[3,3]",
            "kind='mesh'\ndims=[2,2,2]\nnodes_per_router=2",
            "kind='fat_tree'\nk=3\nn=2",
        ];
        let m = load(&format!("[topology]\n{}\n[router]\nbuffer_per_vc={buffer}", kinds[topo]));
        let text = schedule_text(ranks, &ops);
        let run = || simulate(&m, schedule::parse("w", &text).unwrap()).expect("finishes");
        let a = run();
        let (mut inj, mut ej) = (0, 0);
        for l in &a.links {
            prop_assert!(transfer_time(l.bytes, l.bandwidth_bytes_per_s) <= l.busy_ps + l.packets);
            prop_assert!(l.busy_ps <= a.predicted_time_ps);
            match l.class { "injection" => inj += l.bytes, "ejection" => ej += l.bytes, _ => {} }
        }
        prop_assert_eq!(inj, ej);
        for op in &a.operations {
            let (issue, done) = (op.issue_ps, op.complete_ps.expect("every put/get completes"));
            prop_assert!(issue <= op.dma_start_ps.unwrap() && op.landed_ps.unwrap() <= done);
        }
        prop_assert!(a.unpolled_puts.is_empty());
        let mut b = run();
        b.wall_seconds = a.wall_seconds;
        prop_assert_eq!(a.to_json(), b.to_json());
    }
}

#[test]
fn machine_configs_round_trip_through_toml() {
    for text in [
        acesim::machine::config::PRESETS[0].1.to_string(),
        "[topology]\nkind='torus'\ndims=[4,3,2]\nwrap=[true,false,true]\n[router]\nbuffer_per_vc='unbounded'\n[node]\noverhead='0.65 us'\nmemory_bandwidth='12.5 GB/s'\n[nic_link]\nbandwidth='2.5 GB/s'\nlatency='1.25 ns'".to_string(),
    ] {
        let a = load(&text);
        let b = load(&a.to_toml());
        assert_eq!(a, b);
    }
}

/// Random messages (sizes on both sides of the eager threshold) between random ranks.
fn messages() -> impl Strategy<Value = (u32, Vec<(u32, u32, u64)>, u64)> {
    (2u32..6).prop_flat_map(|ranks| {
        let msg = (
            0..ranks,
            0..ranks,
            prop::sample::select(vec![0u64, 8, 2000, 16_384, 16_385, 70_000]),
        );
        (Just(ranks), prop::collection::vec(msg, 1..20), any::<u64>())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn messages_complete_and_never_overtake((ranks, msgs, seed) in messages(), topo in 0usize..2) {
        let m = load(&format!("[topology]\n{}", ["kind='crossbar'", "kind='torus'\ndims=[2,3]"][topo]));
        // Senders isend in list order; each receiver posts one irecv per incoming message,
        // from the right source and any tag, interleaving senders in a seeded order.
        let mut send_ops = vec![String::new(); ranks as usize];
        let mut incoming: Vec<Vec<u32>> = vec![Vec::new(); ranks as usize];
        for (i, &(s, d, size)) in msgs.iter().enumerate() {
            send_ops[s as usize] += &format!("isend {d} {size} tag={i} req=s{i}\n");
            incoming[d as usize].push(s);
        }
        let mut x = seed | 1;
        let mut text = format!("ranks {ranks}\n");
        for r in 0..ranks as usize {
            let mut order = incoming[r].clone();
            for i in (1..order.len()).rev() {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                order.swap(i, (x % (i as u64 + 1)) as usize);
            }
            text += &format!("rank {r}\n{}", send_ops[r]);
            for (j, s) in order.iter().enumerate() {
                text += &format!("irecv {s} 1MB tag=any req=r{j}\n");
            }
            let reqs: Vec<String> = (0..order.len()).map(|j| format!("r{j}")).chain(
                msgs.iter().enumerate().filter(|(_, mm)| mm.0 as usize == r).map(|(i, _)| format!("s{i}"))).collect();
            if !reqs.is_empty() {
                text += &format!("waitall {}\n", reqs.join(" "));
            }
        }
        let res = simulate(&m, schedule::parse("p", &text).unwrap()).expect("finishes");
        prop_assert!(res.unmatched_messages.is_empty());
        prop_assert_eq!(res.receives.len(), msgs.len());
        // Per (sender, receiver) the tags (send order) arrive in increasing order.
        for s in 0..ranks {
            for d in 0..ranks {
                let tags: Vec<i64> = res.receives.iter().filter(|r| r.rank == d && r.src == Some(s)).map(|r| r.tag.unwrap()).collect();
                let mut sorted = tags.clone();
                sorted.sort_unstable();
                prop_assert_eq!(tags, sorted, "messages {}->{} overtook", s, d);
            }
        }
    }
}
