//! Small programs run on small machines: a schedule (or a GOAL file when the text has
//! `num_ranks`) of at most 8 ranks and 200 operations with small messages either runs or
//! stops with an error (bad input, deadlock); a panic or an internal error is a bug.
//!
//! The machine is the `table1` preset, or one of `MACHINES` when the text has a line
//! `# machine NAME`.

#![no_main]

use acesim::frontends::{goal, schedule};
use acesim::{Error, Machine, MachineSource};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

mod guards;

/// Small machines of every topology, with finite buffers, several NICs and ranks per node.
const MACHINES: &[(&str, &str)] = &[
    (
        "torus",
        "[topology]\nkind = \"torus\"\ndims = [2, 2]\nnodes_per_router = 2\n\
         [router]\nbuffer_per_vc = \"4 KiB\"\n[nic]\ncount = 2\nmtu = \"1 KiB\"",
    ),
    (
        "fat_tree",
        "[topology]\nkind = \"fat_tree\"\nk = 2\nn = 3\n\
         [collectives]\nbarrier_transport = \"rdma\"\n[node]\nmemory_bandwidth = \"8 GB/s\"",
    ),
    (
        "dragonfly",
        "[topology]\nkind = \"dragonfly\"\np = 1\na = 2\nh = 1\n\
         [router]\nrouting = \"ugal\"\nvcs = 3\n[placement]\nranks_per_node = 2\npolicy = \"cyclic\"",
    ),
    (
        "leaf_spine",
        "[topology]\nkind = \"leaf_spine\"\nnodes_per_leaf = 2\nspines = 2\nlinks_per_spine = 2\n\
         [nic]\nselection = \"by_rank\"\ncount = 2\n[placement]\nranks_per_node = 2\n\
         [mpi]\neager_threshold = \"1 KiB\"\nsend_overhead = \"100 ns\"",
    ),
];

fn load(name: &str, text: &str) -> Machine {
    MachineSource::from_text(name, text)
        .load()
        .unwrap_or_else(|e| panic!("machine {name}: {e}"))
}

fn machine(text: &str) -> &'static Machine {
    static LOADED: OnceLock<Vec<(&str, Machine)>> = OnceLock::new();
    let loaded = LOADED.get_or_init(|| {
        let table1 = acesim::machine::config::PRESETS
            .iter()
            .find(|(name, _)| *name == "table1")
            .map(|(name, text)| (*name, load(name, text)))
            .expect("the table1 preset exists");
        let mut all = vec![table1];
        all.extend(
            MACHINES
                .iter()
                .map(|(name, text)| (*name, load(name, text))),
        );
        all
    });
    let wanted = text
        .lines()
        .find_map(|l| l.strip_prefix("# machine "))
        .map(str::trim);
    loaded
        .iter()
        .find(|(name, _)| Some(*name) == wanted)
        .map_or(&loaded[0].1, |(_, m)| m)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if guards::declares_many_ranks(text) {
        return;
    }
    let parsed = if text.contains("num_ranks") {
        goal::parse("fuzz.goal", text)
    } else {
        schedule::parse("fuzz.sched", text)
    };
    let Ok(program) = parsed else {
        return;
    };
    if !guards::small_program(&program) {
        return;
    }
    match acesim::simulate(machine(text), program) {
        Ok(_) | Err(Error::Input { .. }) | Err(Error::Deadlock(_)) => {}
        Err(e) => panic!("simulation failed: {e}"),
    }
});
