//! Graph topologies (`kind = "graph"`, docs/graph-topologies.md): a graph of a built-in
//! shape runs as that shape, to the picosecond; links with their own timing are the
//! bottleneck they should be; up*/down*, layered and table routes are deadlock-free and
//! reach their bounds; every bad graph is a located error.

use acesim::frontends::schedule;
use acesim::machine::topology::graph_routes::RouteScheme;
use acesim::machine::topology::{Shape, Topology};
use acesim::network::Model;
use acesim::run::simulate::{simulate_with, Options};
use acesim::{Machine, MachineSource, Results};
use std::path::PathBuf;

mod common;
use common::{booksim_text, flit_point};

/// Writes `name` (graph text) to a fresh folder and loads a machine naming it (the
/// machine holds what it read; the folder goes when it is loaded).
fn graph_machine(name: &str, graph: &str, rest: &str) -> acesim::Result<Machine> {
    let dir = tempfile::tempdir().unwrap();
    let file: PathBuf = dir.path().join(format!("{name}.graph"));
    std::fs::write(&file, graph).unwrap();
    let text = format!(
        "[topology]\nkind = 'graph'\nfile = '{}'\n{rest}",
        file.display()
    );
    MachineSource::from_text(format!("{name}.toml"), text).load()
}

/// The default `[link]` (`machine::config`).
const DEFAULT_BW: &str = "4 GB/s";
const DEFAULT_LAT: &str = "600 ps";

fn machine(text: &str) -> Machine {
    MachineSource::from_text("m.toml", text).load().unwrap()
}

fn run(m: &Machine, sched: &str, model: Model) -> Results {
    let prog = schedule::parse("g.sched", sched).unwrap();
    let options = Options {
        model,
        check: true,
        ..Default::default()
    };
    simulate_with(m, prog, &options).unwrap()
}

/// A line of `routers` routers with `per` nodes each, linked in order.
fn line(routers: u32, per: u32, link: &str) -> String {
    let mut g = String::new();
    for r in 0..routers {
        g += &format!("router {r} nodes {}-{}\n", r * per, r * per + per - 1);
    }
    for r in 1..routers {
        g += &format!("link {} {r} {link}\n", r - 1);
    }
    g
}

/// Every rank puts `bytes` to every other, all at once (contention on every link).
fn all_to_all(ranks: u32, bytes: u64) -> String {
    let mut s = format!("ranks {ranks}\n");
    for r in 0..ranks {
        s += &format!("rank {r}\n");
        for d in (0..ranks).filter(|&d| d != r) {
            s += &format!("put {d} {bytes}\n");
        }
    }
    s
}

#[test]
fn a_line_graph_runs_as_the_mesh_it_describes() {
    let mesh = machine("[topology]\nkind = 'mesh'\ndims = [4]\nnodes_per_router = 2\n");
    let graph = graph_machine("line", &line(4, 2, ""), "").unwrap();
    for (sched, what) in [
        (all_to_all(8, 3000), "all-to-all"),
        (
            "ranks 8\nrank 0\nput 7 100000\nget 5 2000\nrank 6\nput 1 40\n".to_string(),
            "puts and a get",
        ),
    ] {
        for model in [Model::Packet, Model::Flow] {
            let (a, b) = (run(&mesh, &sched, model), run(&graph, &sched, model));
            assert_eq!(a.predicted_time_ps, b.predicted_time_ps, "{what} {model:?}");
            assert_eq!(a.events, b.events, "{what} {model:?}");
        }
    }
}

#[test]
fn links_with_their_own_timing_are_timed_by_it() {
    // Every link set to 5 GB/s and 300 ns: the mesh with that [link].
    let slow = "bandwidth=5GB/s latency=300ns";
    // The NICs' links keep the default [link] of the graph's machine.
    let mesh = machine(&format!("[topology]\nkind = 'mesh'\ndims = [4]\n[link]\nbandwidth = '5 GB/s'\nlatency = '300 ns'\n[nic_link]\nbandwidth = '{DEFAULT_BW}'\nlatency = '{DEFAULT_LAT}'\n"));
    let graph = graph_machine("slow", &line(4, 1, slow), "").unwrap();
    let sched = all_to_all(4, 5000);
    for model in [Model::Packet, Model::Flow] {
        let (a, b) = (run(&mesh, &sched, model), run(&graph, &sched, model));
        assert_eq!(a.predicted_time_ps, b.predicted_time_ps, "{model:?}");
    }
    // One slow link in the middle of a fast line: a put across it pays its bandwidth and
    // latency, one beside it does not.
    let mut mixed = line(4, 1, "");
    mixed = mixed.replace("link 1 2 \n", "link 1 2 bandwidth=1GB/s latency=300ns\n");
    let mixed = graph_machine("mixed", &mixed, "").unwrap();
    let fast = graph_machine("fast", &line(4, 1, ""), "").unwrap();
    let across = "ranks 4\nrank 0\nput 3 1000000\n";
    let beside = "ranks 4\nrank 2\nput 3 1000000\n";
    for model in [Model::Packet, Model::Flow] {
        let (m, f) = (run(&mixed, across, model), run(&fast, across, model));
        // 1 MB at 1 GB/s is 1 ms at least, with the headers (497 packets of 32 B) 1.016
        // ms; on the fast line the DMA engine (2.8 GB/s) sets the pace.
        let t = m.predicted_time_ps;
        assert!(
            (1_015_904_000 + 300_000..1_030_000_000).contains(&t),
            "{model:?} {t}"
        );
        assert!(f.predicted_time_ps * 2 < t, "{model:?}");
        // The links table gives each link its own bandwidth: the slow link's two ways at
        // 1 GB/s, every other network link at the [link] default (4 GB/s), whichever
        // link of the class comes last.
        for l in m.all_links.iter().filter(|l| l.class == "network") {
            let slow = matches!(l.name.as_str(), "r1.p1->r2" | "r2.p0->r1");
            let want = if slow { 1_000_000_000 } else { 4_000_000_000 };
            assert_eq!(l.bandwidth_bytes_per_s, want, "{model:?} {}", l.name);
        }
        assert_eq!(
            m.all_links
                .iter()
                .filter(|l| l.bandwidth_bytes_per_s == 1_000_000_000)
                .count(),
            2,
            "{model:?}"
        );
        let (m, f) = (run(&mixed, beside, model), run(&fast, beside, model));
        assert_eq!(m.predicted_time_ps, f.predicted_time_ps, "{model:?}");
    }
}

/// A ring of `k` routers, one node each.
fn ring(k: u32) -> String {
    let mut g = String::new();
    for r in 0..k {
        g += &format!("router {r} nodes {r}\n");
    }
    for r in 0..k {
        g += &format!("link {r} {}\n", (r + 1) % k);
    }
    g
}

/// A pseudo-random connected graph: a spanning path plus `extra` chords (a fixed LCG).
fn random_graph(routers: u32, extra: u32, seed: u64) -> String {
    let mut x = seed;
    let mut next = |n: u32| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((x >> 33) % n as u64) as u32
    };
    let mut g = String::new();
    for r in 0..routers {
        g += &format!("router {r} nodes {r}\n");
    }
    for r in 1..routers {
        g += &format!("link {} {r}\n", next(r));
    }
    for _ in 0..extra {
        let (a, b) = (next(routers), next(routers));
        if a != b {
            g += &format!("link {a} {b}\n");
        }
    }
    g
}

/// The routers a route visits, from the topology's routing function.
fn walk(t: &Topology, src: u32, dst: u32) -> Vec<u32> {
    let mut r = t.nic_router(src);
    let mut path = vec![r];
    while r != t.nic_router(dst) {
        let hop = t.route(r, src, dst);
        let acesim::machine::topology::Peer::Router(p) = t.ports.peer[hop.port as usize] else {
            panic!("left the network before the destination");
        };
        r = t.ports.port_router[p as usize];
        path.push(r);
        assert!(
            path.len() <= t.num_routers as usize,
            "route loops: {path:?}"
        );
    }
    path
}

/// Breadth-first distances between routers over the built ports.
fn distances(t: &Topology, from: u32) -> Vec<u32> {
    let mut dist = vec![u32::MAX; t.num_routers as usize];
    let mut queue = std::collections::VecDeque::from([from]);
    dist[from as usize] = 0;
    while let Some(r) = queue.pop_front() {
        let (a, b) = (
            t.ports.port_base[r as usize],
            t.ports.port_base[r as usize + 1],
        );
        for p in a..b {
            if let acesim::machine::topology::Peer::Router(q) = t.ports.peer[p as usize] {
                let q = t.ports.port_router[q as usize];
                if dist[q as usize] == u32::MAX {
                    dist[q as usize] = dist[r as usize] + 1;
                    queue.push_back(q);
                }
            }
        }
    }
    dist
}

#[test]
fn up_down_routes_never_turn_up_and_layered_routes_are_shortest() {
    for (i, g) in [
        ring(8),
        ring(5),
        random_graph(30, 25, 3),
        random_graph(50, 80, 9),
    ]
    .iter()
    .enumerate()
    {
        for routes in ["updown", "layered"] {
            let m = graph_machine(
                &format!("r{i}{routes}"),
                g,
                &format!("routes = '{routes}'\n[router]\nvcs = 64\n"),
            )
            .unwrap();
            let t = Topology::build(&m, 1).unwrap();
            let Shape::Graph(net) = &t.shape else {
                panic!("a graph")
            };
            let level = distances(&t, 0);
            let rank = |r: u32| (level[r as usize], r);
            let mut longest = 0;
            for s in 0..t.num_nics() {
                let dist = distances(&t, t.nic_router(s));
                for d in 0..t.num_nics() {
                    let path = walk(&t, s, d);
                    longest = longest.max(path.len() as u32 - 1);
                    if routes == "layered" {
                        assert_eq!(path.len() as u32 - 1, dist[t.nic_router(d) as usize]);
                    } else {
                        // Up (toward a lower rank) then down, never down then up.
                        let ups: Vec<bool> =
                            path.windows(2).map(|w| rank(w[1]) < rank(w[0])).collect();
                        assert!(
                            ups.windows(2).all(|u| u[0] || !u[1]),
                            "graph {i}: {s}->{d} turns up after down: {path:?}"
                        );
                    }
                }
            }
            assert_eq!(net.routes.diameter, longest, "graph {i} {routes}");
            assert_eq!(t.max_route_hops(), longest);
            let want = if routes == "layered" {
                longest as u8
            } else {
                1
            };
            assert_eq!(t.vc_classes, want.max(1), "graph {i} {routes}");
        }
    }
}

#[test]
fn a_ring_saturates_under_its_channel_load_bound_without_deadlock() {
    // A ring of 8 routers, one node each, uniform traffic on shortest paths: the busiest
    // link carries k/8 = 1.0 of the offered load, so the bound is 1.0 of the injection
    // bandwidth. up*/down* from router 0 ranks router 4 below 3 and 5, so a packet from
    // 3 to 5 cannot go 3 -> 4 (down) -> 5 (up): it goes round by the root, and the
    // links near the root carry more: more hops, a lower saturation throughput.
    let layered = graph_machine(
        "sat-l",
        &ring(8),
        &format!("routes = 'layered'\n{}", booksim_text("")),
    )
    .unwrap();
    let updown = graph_machine("sat-u", &ring(8), &booksim_text("")).unwrap();
    let light = flit_point(&layered, "uniform", 0.3);
    assert!(!light.saturated && (light.accepted - light.offered).abs() < 0.01);
    let full_l = flit_point(&layered, "uniform", 1.0);
    let full_u = flit_point(&updown, "uniform", 1.0);
    assert!(
        full_l.accepted > 0.5 && full_l.accepted <= 1.0,
        "layered {}",
        full_l.accepted
    );
    assert!(full_u.accepted > 0.3, "updown {}", full_u.accepted);
    assert!(
        full_u.hops_mean > full_l.hops_mean,
        "up*/down* takes detours"
    );
}

#[test]
fn tables_are_followed_and_checked() {
    // A square 0-1-2-3-0 routed by hand, the long way round between 0 and 1 in one
    // direction: the tables are followed (3 hops from router 1 to 0).
    let square = "router 0 nodes 0\nrouter 1 nodes 1\nrouter 2 nodes 2\nrouter 3 nodes 3\nlink 0 1\nlink 1 2\nlink 2 3\nlink 3 0\n";
    let routes = "route 0 1 via 1\nroute 0 2 via 3\nroute 0 3 via 3\nroute 1 0 via 2\nroute 1 2 via 2\nroute 1 3 via 2\nroute 2 0 via 3\nroute 2 1 via 1\nroute 2 3 via 3\nroute 3 0 via 0\nroute 3 1 via 2\nroute 3 2 via 2\n";
    let m = graph_machine("table", &format!("{square}{routes}"), "").unwrap();
    let t = Topology::build(&m, 1).unwrap();
    let Shape::Graph(net) = &t.shape else {
        panic!("a graph")
    };
    assert_eq!(net.routes.scheme, RouteScheme::Table);
    assert_eq!(walk(&t, 1, 0), vec![1, 2, 3, 0]);
    assert_eq!(walk(&t, 0, 1), vec![0, 1]);
    assert_eq!(net.routes.diameter, 3);
    // Every route clockwise: the ring's channels wait on each other.
    let mut clockwise = String::new();
    for s in 0..4 {
        for d in (0..4).filter(|&d| d != s) {
            clockwise += &format!("route {s} {d} via {}\n", (s + 1) % 4);
        }
    }
    let e = graph_machine("cw", &format!("{square}{clockwise}"), "")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cw.graph:") && e.contains("field `route`") && e.contains("can deadlock"),
        "{e}"
    );
    assert!(e.contains("0->1") && e.contains("3->0"), "{e}");
    // A loop: 2 sends toward 1 through 3, which sends it back.
    let looping = routes.replace("route 2 1 via 1", "route 2 1 via 3");
    let e = graph_machine("loop", &format!("{square}{looping}"), "")
        .unwrap_err()
        .to_string();
    assert!(e.contains("loop") && e.contains("2 -> 3 -> 2"), "{e}");
    // A missing entry, a next hop that is not a neighbour, a duplicate.
    let missing = routes.replace("route 2 3 via 3\n", "");
    let e = graph_machine("miss", &format!("{square}{missing}"), "")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no route at router 2 toward router 3"), "{e}");
    let far = routes.replace("route 0 2 via 3", "route 0 2 via 2");
    let e = graph_machine("far", &format!("{square}{far}"), "")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("far.graph:10") && e.contains("no link to router 2"),
        "{e}"
    );
    let twice = format!("{square}{routes}route 3 2 via 0\n");
    let e = graph_machine("twice", &twice, "").unwrap_err().to_string();
    assert!(
        e.contains("second route at router 3 toward router 2"),
        "{e}"
    );
    // Tables with another scheme asked for: refused, not ignored.
    let e = graph_machine("both", &format!("{square}{routes}"), "routes = 'updown'\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("gives routing tables"), "{e}");
}

#[test]
fn bad_graphs_are_located_errors() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "router 0 nodes 0 1\nrouter 1 nodes 2\nlink 0 1\nlink 1 7\n",
            "",
            "dangling.graph:4:8: field `link`: dangling link: router 7 is not declared",
        ),
        (
            "router 0 nodes 0 1\nrouter 1 nodes 3\nlink 0 1\n",
            "",
            "field `nodes`: node 2 is on no router",
        ),
        (
            "router 0 nodes 0 1\nrouter 1 nodes 1\nlink 0 1\n",
            "",
            ":2:",
        ),
        (
            "router 0 nodes 0\nrouter 1 nodes 1\nrouter 2\nlink 0 1\n",
            "",
            "the network is disconnected",
        ),
        (
            "router 0 nodes 0\nrouter 2 nodes 1\nlink 0 2\n",
            "",
            "router 1 is not declared",
        ),
        (
            "router 0 nodes 0\nrouter 0 nodes 1\n",
            "",
            "already declared on line 1",
        ),
        ("router 0 nodes 0-1\nrouter 1\nlink 0 0\n", "", "to itself"),
        (
            "router 0 nodes 0-1\nrouter 1\nlink 0 1 bandwidth=5 GB/s\n",
            "",
            "without spaces (bandwidth=5GB/s)",
        ),
        (
            "router 0 nodes 0-1\nrouter 1\nlink 0 1 latency=fast\n",
            "",
            "field `latency`",
        ),
        (
            "router 0 nodes 0-1\nrouter 1\nlnk 0 1\n",
            "",
            "did you mean `link`",
        ),
        ("router 0\n", "", "no router has nodes"),
        ("# nothing\n", "", "declares no router"),
        (
            "router 0 nodes 0-1\n",
            "routes = 'shortest'\n",
            "unknown routes 'shortest'",
        ),
        (
            "router 0 nodes 0-1\n",
            "root = 3\n",
            "root router 3 is not in the graph",
        ),
        (
            "router 0 nodes 0-1\n",
            "routes = 'table'\n",
            "has no `route` lines",
        ),
        (
            "router 0 nodes 0\nrouter 1 nodes 1\nrouter 2 nodes 2\nlink 0 1\nlink 1 2\n",
            "routes = 'layered'\n[router]\nvcs = 1\n",
            "needs 2 virtual channels",
        ),
    ];
    for (i, (graph, rest, want)) in cases.iter().enumerate() {
        let name = if i == 0 {
            "dangling".to_string()
        } else {
            format!("bad{i}")
        };
        let e = graph_machine(&name, graph, rest).unwrap_err().to_string();
        assert!(e.contains(want), "case {i}: {e}");
    }
    let e = MachineSource::from_text("m.toml", "[topology]\nkind = 'graph'\n")
        .load()
        .unwrap_err()
        .to_string();
    assert!(e.contains("needs `file`"), "{e}");
    let e = MachineSource::from_text(
        "m.toml",
        "[topology]\nkind = 'graph'\nfile = '/nonexistent/x.graph'\n",
    )
    .load()
    .unwrap_err()
    .to_string();
    assert!(e.contains("m.toml:3") && e.contains("no such file"), "{e}");
}

#[test]
fn a_graph_file_is_found_beside_its_machine_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("two.graph"), line(2, 2, "")).unwrap();
    let toml = dir.path().join("two.toml");
    std::fs::write(&toml, "[topology]\nkind = 'graph'\nfile = 'two.graph'\n").unwrap();
    let m = MachineSource::open(toml.to_str().unwrap())
        .unwrap()
        .load()
        .unwrap();
    assert_eq!(Topology::build(&m, 4).unwrap().num_nodes, 4);
}
