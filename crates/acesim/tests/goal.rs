//! GOAL programs (dependency graphs) against hand-computed times: a rank's CPUs run one
//! computation or send overhead at a time, and nothing finishes before its compute.

use acesim::frontends::goal;
use acesim::run::simulate::{simulate_with, Options};
use acesim::units::{transfer_time, Ps};
use acesim::{simulate, Error, Machine, MachineSource, Results};
use proptest::prelude::*;

const TABLE1: &str = include_str!("../presets/table1.toml");
const DMA: u64 = 2_800_000_000;
const US: Ps = 1_000_000;

fn machine(sets: &[&str]) -> Machine {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    MachineSource::from_text("table1.toml", TABLE1)
        .with_overrides(&sets)
        .load()
        .expect("machine loads")
}

fn run_goal(m: &Machine, text: &str) -> Results {
    let options = Options {
        check: true,
        trace: true,
        ..Default::default()
    };
    simulate_with(
        m,
        goal::parse("t.goal", text).expect("GOAL parses"),
        &options,
    )
    .expect("run finishes")
}

fn goal_error(m: &Machine, text: &str) -> String {
    match goal::parse("t.goal", text) {
        Err(e) => e.to_string(),
        Ok(p) => simulate(m, p).expect_err("must be refused").to_string(),
    }
}

#[test]
fn independent_computations_share_the_cpu() {
    let m = machine(&[]);
    let r = run_goal(
        &m,
        "num_ranks 1\nrank 0 {\nl1: calc 1000\nl2: calc 1000\n}\n",
    );
    assert_eq!(r.predicted_time_ps, 2 * US);
    assert_eq!(r.per_rank[0].compute_ps, 2 * US);
}

#[test]
fn a_chain_of_computations_adds_up() {
    let m = machine(&[]);
    let text = "num_ranks 1\nrank 0 {\nl1: calc 1000\nl2: calc 1000\nl3: calc 1000\nl2 requires l1\nl3 requires l2\n}\n";
    assert_eq!(run_goal(&m, text).predicted_time_ps, 3 * US);
}

#[test]
fn a_send_that_irequires_a_computation_waits_for_the_cpu() {
    // The send may start once the calc has started, but its overhead needs the CPU, which
    // the calc holds for 1 us: overhead 1..1.6 us, then the 8-byte DMA.
    let m = machine(&["node.overhead=0.6us"]);
    let text = "num_ranks 2\nrank 0 {\nl1: calc 1000\nl2: send 8b to 1 tag 0\nl2 irequires l1\n}\nrank 1 {\nl1: recv 8b from 0 tag 0\n}\n";
    let r = run_goal(&m, text);
    let send = &r.operations.row(0);
    assert_eq!(send.issue_ps, US);
    assert_eq!(send.dma_start_ps, Some(US + 600_000));
    assert_eq!(send.complete_ps, Some(US + 600_000 + transfer_time(8, DMA)));
    assert_eq!(
        r.per_rank[0].finish_ps,
        US + 600_000 + transfer_time(8, DMA)
    );
    // Without a send overhead the send needs no CPU: it leaves at once, the rank ends
    // when its calc does.
    let r = run_goal(&machine(&[]), text);
    assert_eq!(r.operations.row(0).issue_ps, 0);
    assert_eq!(r.per_rank[0].finish_ps, US);
}

#[test]
fn a_receive_is_posted_while_the_cpu_computes() {
    // Rank 1 sends at 0; rank 0 posts its receive at 0 although its CPU computes.
    let m = machine(&[]);
    let text = "num_ranks 2\nrank 0 {\nl1: calc 1000\nl2: recv 8b from 1 tag 4\n}\nrank 1 {\nl1: send 8b to 0 tag 4\n}\n";
    let r = run_goal(&m, text);
    assert_eq!(r.receives.row(0).posted_ps, 0);
    assert!(r.receives.row(0).complete_ps.expect("received") < US);
    assert_eq!(r.per_rank[0].finish_ps, US);
}

#[test]
fn each_named_cpu_runs_its_own_work() {
    let m = machine(&[]);
    let two = "num_ranks 1\nrank 0 {\nl1: calc 1000 cpu 0\nl2: calc 1000 cpu 1\n}\n";
    assert_eq!(run_goal(&m, two).predicted_time_ps, US);
    let three =
        "num_ranks 1\nrank 0 {\nl1: calc 1000 cpu 0\nl2: calc 1000 cpu 1\nl3: calc 500 cpu 1\n}\n";
    assert_eq!(run_goal(&m, three).predicted_time_ps, 1_500_000);
}

#[test]
fn block_comments_are_ignored_anywhere() {
    let m = machine(&[]);
    let text = "/* Schedgen */ num_ranks 1\nrank 0 {\n/* Iallreduce begin */\nl1: calc 1000 /* one\nmicrosecond */\nl2: calc /* inline */ 1000\n// l3: calc 5 /* not a block comment\n}\n";
    assert_eq!(run_goal(&m, text).predicted_time_ps, 2 * US);
    let e = goal_error(&m, "num_ranks 1\nrank 0 {\nl1: calc 1\n/* open\n}\n");
    assert_eq!(
        e, "t.goal:4:1: comment `/*` is never closed with `*/`",
        "{e}"
    );
}

#[test]
fn wildcard_receives_do_not_take_collective_messages() {
    // Rank 1 sends a collective message (tag 1000000) before its own (tag 5). Rank 0's
    // wildcard receive must take tag 5, as MPI's separate collective context makes it.
    let m = machine(&[]);
    let text = "num_ranks 2\nrank 0 {\nl1: calc 1000\nl2: recv 8b from -1 tag -1\nl3: recv 4b from 1 tag 1000000\nl2 requires l1\nl3 requires l2\n}\nrank 1 {\nl1: send 4b to 0 tag 1000000\nl2: send 8b to 0 tag 5\nl2 requires l1\n}\n";
    // (Taking it would leave l3 waiting forever: run_goal would fail.)
    let r = run_goal(&m, text);
    // Collective traffic is not listed among the program's own receives.
    assert_eq!(r.receives.len(), 1);
    assert_eq!(r.receives.row(0).tag, Some(5));
    assert_eq!(r.receives.row(0).src, Some(1));
}

#[test]
fn cpu_and_nic_options_are_checked() {
    let m = machine(&[]);
    let e = goal_error(&m, "num_ranks 2\nrank 0 {\nl1: calc 1 cpu 64\n}\n");
    assert!(
        e.starts_with("t.goal:3:16: field `cpu`: cpu 64 is out of range"),
        "{e}"
    );
    let e = goal_error(&m, "num_ranks 2\nrank 0 {\nl1: calc 1 cpu x\n}\n");
    assert!(e.contains("'x' is not a cpu number"), "{e}");
    let e = goal_error(
        &m,
        "num_ranks 2\nrank 0 {\nl1: send 1b to 1 tag 0 nic 99\n}\n",
    );
    assert!(
        e.contains("t.goal:3") && e.contains("nic=99 but the machine has 1 NIC(s)"),
        "{e}"
    );
    // A NIC the machine has is used.
    let m2 = machine(&["nic.count=2"]);
    let r = run_goal(
        &m2,
        "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0 nic 1\n}\nrank 1 {\nl1: recv 8b from 0 tag 0\n}\n",
    );
    assert_eq!(r.per_rank.len(), 2);
    assert!(matches!(
        goal::parse("t.goal", "num_ranks 2\nrank 0 {\nl1: calc 1 nic\n}\n"),
        Err(Error::Input { .. })
    ));
}

#[test]
fn loggopsim_example_computes_what_it_says() {
    // LogGOPSim's own example: about 2.89 s of calc per rank (sweep of its calc lines).
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/goal/loggopsim2_schedule.goal"
    );
    let text = std::fs::read_to_string(path).expect("tests/data/goal is in the repository");
    let r = run_goal(&machine(&[]), &text);
    for rank in &r.per_rank {
        assert!(rank.compute_ps > 2_800_000 * US / 1000, "{rank:?}");
        assert!(rank.finish_ps >= rank.compute_ps, "{rank:?}");
    }
    assert!(r.predicted_time_ps >= 2_890_522 * US / 1000);
}

/// A calc of `ns` on CPU `cpu`, with dependencies (operation, is `irequires`).
type RandomOp = (u32, u8, Vec<(usize, bool)>);

/// A random acyclic GOAL rank: each operation may require or irequire earlier ones.
fn random_goal(ops: &[RandomOp]) -> String {
    let mut text = String::from("num_ranks 2\nrank 0 {\n");
    for (i, (ns, cpu, _)) in ops.iter().enumerate() {
        text += &format!("l{i}: calc {ns} cpu {cpu}\n");
    }
    for (i, (_, _, deps)) in ops.iter().enumerate() {
        for &(d, irequires) in deps {
            if d < i {
                let kind = if irequires { "irequires" } else { "requires" };
                text += &format!("l{i} {kind} l{d}\n");
            }
        }
    }
    text += "l99: send 8b to 1 tag 0\nl99 requires l0\n}\nrank 1 {\nl0: recv 8b from 0 tag 0\n}\n";
    text
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// One CPU never computes twice at once, and a rank never finishes before the sum of
    /// its CPUs' compute (checked by the run's own invariants too).
    #[test]
    fn cpus_never_overlap_and_ranks_never_finish_early(
        ops in prop::collection::vec(
            (1u32..5000, 0u8..3, prop::collection::vec((0usize..12, any::<bool>()), 0..3)),
            1..12,
        )
    ) {
        let text = random_goal(&ops);
        let r = run_goal(&machine(&["node.overhead=0.2us"]), &text);
        let mut per_cpu = [0 as Ps; 3];
        for (ns, cpu, _) in &ops {
            per_cpu[*cpu as usize] += *ns as Ps * 1000;
        }
        let total: Ps = per_cpu.iter().sum();
        prop_assert_eq!(r.per_rank[0].compute_ps, total);
        prop_assert!(r.per_rank[0].finish_ps >= *per_cpu.iter().max().unwrap_or(&0));
        // With every calc on one CPU, the computations are a line: no two overlap.
        if ops.iter().all(|o| o.1 == 0) {
            prop_assert!(r.per_rank[0].finish_ps >= total);
            let mut spans: Vec<(Ps, Ps)> = r.trace.as_ref().expect("traced").iter()
                .filter(|t| t.rank == 0 && (t.kind == "compute" || t.kind == "overhead"))
                .map(|t| (t.start_ps, t.end_ps)).collect();
            spans.sort();
            for w in spans.windows(2) {
                prop_assert!(w[1].0 >= w[0].1, "overlap {:?}", w);
            }
        }
    }
}
