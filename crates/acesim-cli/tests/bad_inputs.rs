//! Bad inputs, one test each, run through the real `acesim` binary in a scratch folder.
//!
//! Every case checks: the exact exit code (2 input, 3 cannot finish); that standard error
//! names the place (file and line, with the column and field when the error is about a
//! field) and says what was expected; that nothing panicked; and that nothing was left
//! behind: the scratch folder holds only the inputs afterwards (no output file, no
//! temporary file) and the temporary folder the command was given ($TMPDIR) is empty.
//! docs/errors.md shows these messages.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// The output flags a subcommand takes, unless the case gives its own.
fn output_flags(args: &[&str]) -> Vec<&'static str> {
    let has = |f: &str| args.iter().any(|a| a.starts_with(f));
    let mut out = Vec::new();
    match args.first().copied() {
        Some("run") => {
            if !has("--json") {
                out.extend(["--json", "out.json"]);
            }
            if !has("--links-csv") {
                out.extend(["--links-csv", "links.csv"]);
            }
        }
        Some("traffic") => {
            if !has("--json") {
                out.extend(["--json", "out.json"]);
            }
            if !has("--csv") {
                out.extend(["--csv", "out.csv"]);
            }
        }
        Some("record") if !has("-o") => out.extend(["-o", "out.sched"]),
        _ => {}
    }
    out
}

/// Writes `files` to a fresh folder, runs `acesim ARGS` there (plus the output flags of
/// the subcommand) and checks the exit code, that standard error contains every needle,
/// no panic, and that nothing was left behind. Returns standard error.
fn fails(files: &[(&str, &str)], args: &[&str], code: i32, needles: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let before = names(dir.path());
    let mut all: Vec<&str> = args.to_vec();
    // Flags go before a `--` that starts a program's own arguments.
    let at = all.iter().position(|a| *a == "--").unwrap_or(all.len());
    all.splice(at..at, output_flags(args));
    let o = Command::new(env!("CARGO_BIN_EXE_acesim"))
        .args(&all)
        .current_dir(dir.path())
        .env("TMPDIR", tmp.path())
        .env("PYTHONPATH", repo().join("python"))
        .output()
        .expect("acesim runs");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(
        o.status.code(),
        Some(code),
        "{all:?}: wrong exit code:\n{err}"
    );
    for n in needles {
        assert!(err.contains(n), "{all:?}: expected `{n}` in:\n{err}");
    }
    assert!(!err.contains("panicked"), "{all:?}: panic:\n{err}");
    assert_eq!(
        names(dir.path()),
        before,
        "{all:?}: files left behind in the working folder"
    );
    assert!(
        names(tmp.path()).is_empty(),
        "{all:?}: temporary files left behind: {:?}",
        names(tmp.path())
    );
    err
}

const RING: &str = "ranks 2\nrank 0\nput 1 4 tag=0\nrank 1\npoll 0\n";

/// A machine-file case: `m.toml` with RING.
fn machine_fails(toml: &str, needles: &[&str]) {
    fails(
        &[("m.toml", toml), ("r.sched", RING)],
        &["run", "r.sched", "-m", "m.toml"],
        2,
        needles,
    );
}

/// A schedule case: `x.sched` run on table1.
fn schedule_fails(text: &str, needles: &[&str]) {
    fails(&[("x.sched", text)], &["run", "x.sched"], 2, needles);
}

/// A GOAL case: `x.goal` run on table1.
fn goal_fails(text: &str, needles: &[&str]) {
    fails(&[("x.goal", text)], &["run", "x.goal"], 2, needles);
}

/// A C case: `p.c` run with 2 ranks.
fn c_fails(source: &str, needles: &[&str]) {
    fails(
        &[("p.c", source)],
        &["run", "p.c", "--ranks", "2"],
        2,
        needles,
    );
}

/// A Python case: `p.py` run with 2 ranks (skipped without python3).
fn python_fails(source: &str, needles: &[&str]) {
    let has_python = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_python {
        eprintln!("python3 not found: skipping");
        return;
    }
    fails(
        &[("p.py", source)],
        &["run", "p.py", "--ranks", "2"],
        2,
        needles,
    );
}

const XBAR: &str = "[topology]\nkind = \"crossbar\"\n";

// ---- Machine files ---------------------------------------------------------------------

#[test]
fn machine_toml_syntax_error() {
    machine_fails(
        "[topology\nkind = \"crossbar\"\n",
        &["m.toml:1:10: invalid table header", "expected `.`, `]`"],
    );
}

#[test]
fn machine_unknown_key() {
    machine_fails(
        &format!("{XBAR}colour = 3\n"),
        &["m.toml:3:1: unknown field `colour`, expected one of `kind`, `nodes`"],
    );
}

#[test]
fn machine_unknown_table() {
    machine_fails(
        &format!("{XBAR}[routr]\nvcs = 2\n"),
        &[
            "error[input]: m.toml:3:2: unknown field `routr`; did you mean `router`? (expected one of `topology`, `router`",
            "3 | [routr]",
        ],
    );
}

#[test]
fn machine_wrong_type() {
    machine_fails(
        &format!("{XBAR}[router]\nvcs = \"two\"\n"),
        &["m.toml:4:7: invalid type: string \"two\", expected u32"],
    );
}

#[test]
fn machine_bad_unit() {
    machine_fails(
        &format!("{XBAR}[link]\nlatency = \"10 parsecs\"\n"),
        &["m.toml:4:11: 'parsecs' is not a time unit (ps, ns, us, ms, s)"],
    );
}

#[test]
fn machine_negative_time() {
    machine_fails(
        &format!("{XBAR}[link]\nlatency = \"-1 ns\"\n"),
        &["m.toml:4:11: '-1' is negative: expected 0 or more"],
    );
}

#[test]
fn machine_negative_count() {
    machine_fails(
        &format!("{XBAR}[nic]\ncount = -1\n"),
        &["m.toml:4:9: invalid value: integer `-1`, expected u32"],
    );
}

#[test]
fn machine_zero_virtual_channels() {
    machine_fails(
        &format!("{XBAR}[router]\nvcs = 0\n"),
        &["m.toml:4:7: field `router.vcs`: a router needs at least 1 virtual channel"],
    );
}

#[test]
fn machine_buffer_smaller_than_a_packet() {
    machine_fails(
        &format!("{XBAR}[router]\nbuffer_per_vc = \"1 KiB\"\n"),
        &["m.toml:4:17: field `router.buffer_per_vc`: a virtual cut-through buffer must hold a whole packet: router.buffer_per_vc = 1 KiB is smaller than the largest packet (2048 B)"],
    );
}

#[test]
fn machine_packet_larger_than_the_default_buffer() {
    // The buffer is a default: the packet size the user wrote is blamed, at its line.
    machine_fails(
        &format!("{XBAR}[nic]\nmtu = \"32 KiB\"\n"),
        &["m.toml:4:7: field `nic.mtu`: a virtual cut-through buffer must hold a whole packet: router.buffer_per_vc = 16 KiB is smaller than the largest packet (32768 B)"],
    );
}

#[test]
fn machine_dragonfly_routing_that_needs_more_virtual_channels() {
    machine_fails(
        "[topology]\nkind = \"dragonfly\"\np = 1\na = 2\nh = 1\n[router]\nrouting = \"valiant\"\n",
        &["m.toml:7:11: field `router.routing`: valiant routing on a dragonfly with finite buffers needs 3 virtual channels (one class per global hop taken), not router.vcs = 2"],
    );
}

#[test]
fn machine_zero_bandwidth() {
    machine_fails(
        &format!("{XBAR}[link]\nbandwidth = \"0 GB/s\"\n"),
        &["m.toml:4:13: bandwidth '0 GB/s' must be greater than zero"],
    );
}

#[test]
fn machine_unknown_topology_kind() {
    machine_fails(
        "[topology]\nkind = \"hypercube\"\n",
        &["m.toml:2:8: field `topology.kind`: unknown topology 'hypercube' (expected crossbar, mesh, torus, fat_tree, leaf_spine, dragonfly, hyperx, slimfly or graph)"],
    );
}

#[test]
fn machine_seven_dimensions() {
    machine_fails(
        "[topology]\nkind = \"torus\"\ndims = [2, 2, 2, 2, 2, 2, 2]\n",
        &["m.toml:3:8: field `topology.dims`: a torus has 1 to 6 dimensions, not 7"],
    );
}

#[test]
fn machine_dims_and_wrap_lengths_differ() {
    machine_fails(
        "[topology]\nkind = \"torus\"\ndims = [4, 4]\nwrap = [true]\n",
        &["m.toml:4:8: field `topology.wrap`: wrap has 1 entries but dims has 2 dimensions"],
    );
}

#[test]
fn machine_dragonfly_with_too_many_groups() {
    machine_fails(
        "[topology]\nkind = \"dragonfly\"\np = 2\na = 2\nh = 1\ng = 9\n",
        &["m.toml:6:5: field `topology.g`: 9 groups cannot be wired: each group has a·h = 2 global links, so at most a·h + 1 = 3 groups"],
    );
}

#[test]
fn machine_fat_tree_with_arity_zero() {
    machine_fails(
        "[topology]\nkind = \"fat_tree\"\nk = 0\nn = 2\n",
        &["m.toml:3:5: field `topology.k`: k must be at least 2"],
    );
}

#[test]
fn machine_field_of_another_topology() {
    machine_fails(
        "[topology]\nkind = \"torus\"\ndims = [4]\nk = 4\n",
        &["m.toml:4:5: field `topology.k`: 'k' does not apply to a torus (its fields: dims, wrap, nodes_per_router)"],
    );
}

#[test]
fn machine_unknown_routing() {
    machine_fails(
        &format!("{XBAR}[router]\nrouting = \"zigzag\"\n"),
        &["m.toml:4:11: field `router.routing`: unknown routing 'zigzag' (expected auto, minimal, valiant, ugal, random, adaptive or dal)"],
    );
}

#[test]
fn machine_dragonfly_routing_on_a_torus() {
    machine_fails(
        "[topology]\nkind = \"torus\"\ndims = [4]\n[router]\nrouting = \"valiant\"\n",
        &["m.toml:5:11: field `router.routing`: 'valiant' routing is for dragonflies and slim flies; a torus routes with `auto` (minimal)"],
    );
}

#[test]
fn machine_torus_with_one_virtual_channel() {
    machine_fails(
        "[topology]\nkind = \"torus\"\ndims = [4]\n[router]\nvcs = 1\n",
        &["m.toml:5:7: field `router.vcs`: a torus with finite buffers needs at least 2 virtual channels"],
    );
}

#[test]
fn machine_unknown_collective_algorithm() {
    // Refused when the machine is read, even by a program without collectives.
    machine_fails(
        &format!("{XBAR}[collectives]\nallreduce = \"magic\"\n"),
        &["m.toml:4:13: field `collectives.allreduce`: unknown allreduce algorithm 'magic' (expected auto, recursive_doubling, ring, rabenseifner)"],
    );
}

#[test]
fn machine_algorithm_that_does_not_fit_the_call() {
    let sched = "ranks 3\nrank 0\nallgather 8\nrank 1\nallgather 8\nrank 2\nallgather 8\n";
    fails(
        &[("x.sched", sched)],
        &[
            "run",
            "x.sched",
            "--set",
            "collectives.allgather=recursive_doubling",
        ],
        2,
        &["x.sched:3: field `collectives.allgather`: recursive_doubling allgather needs a power-of-two number of ranks (p = 3) (the machine's collectives.allgather)"],
    );
}

#[test]
fn machine_file_missing() {
    fails(
        &[("r.sched", RING)],
        &["run", "r.sched", "-m", "machines/none.toml"],
        2,
        &["machines/none.toml: no such machine file, and not a preset (presets: table1, tofu, tofu-d, hdr-fat-tree, ndr-fat-tree, slingshot)"],
    );
}

#[test]
fn machine_preset_unknown() {
    fails(
        &[("r.sched", RING)],
        &["run", "r.sched", "-m", "table2"],
        2,
        &["table2: no such machine file, and not a preset (presets: table1, tofu, tofu-d, hdr-fat-tree, ndr-fat-tree, slingshot)"],
    );
}

#[test]
fn set_unknown_field() {
    fails(
        &[("r.sched", RING)],
        &["run", "r.sched", "--set", "router.colour=3"],
        2,
        &["command line: field `router.colour`: --set router.colour=3: unknown field `colour`, expected one of `routing`"],
    );
}

#[test]
fn set_bad_value() {
    fails(
        &[("r.sched", RING)],
        &["run", "r.sched", "--set", "router.vcs=lots"],
        2,
        &["command line: field `router.vcs`: --set router.vcs=lots: invalid type: string \"lots\", expected u32"],
    );
}

#[test]
fn set_bad_unit() {
    fails(
        &[("r.sched", RING)],
        &["run", "r.sched", "--set", "link.latency=5parsecs"],
        2,
        &["command line: field `link.latency`: --set link.latency=5parsecs: 'parsecs' is not a time unit (ps, ns, us, ms, s)"],
    );
}

#[test]
fn a_bare_number_where_a_quantity_is_expected_says_how_to_write_it() {
    fails(
        &[("r.sched", RING)],
        &["run", "r.sched", "--set", "link.bandwidth=10"],
        2,
        &["--set link.bandwidth=10: invalid type: integer `10`, expected a string: `link.bandwidth` takes a quantity with its unit, as a string, e.g. \"25 GB/s\" or \"200 Gb/s\""],
    );
    fails(
        &[("r.sched", RING), ("m.toml", "[router]\nswitch_latency = 2.5\n")],
        &["run", "r.sched", "--machine", "m.toml"],
        2,
        &["m.toml:2:18: invalid type: floating point `2.5`, expected a string: `switch_latency` takes a quantity with its unit, as a string, e.g. \"100ns\""],
    );
}

#[test]
fn set_without_equals() {
    fails(
        &[("r.sched", RING)],
        &["run", "r.sched", "--set", "router.vcs"],
        2,
        &["command line: --set router.vcs: expected FIELD=VALUE, e.g. router.switch_latency=100ns"],
    );
}

#[test]
fn set_below_a_value() {
    fails(
        &[("r.sched", RING)],
        &["run", "r.sched", "--set", "router.vcs.x=3"],
        2,
        &["command line: field `router.vcs.x`: --set router.vcs.x=3: 'vcs' is not a table"],
    );
}

// ---- Placement files ---------------------------------------------------------------------

const FOUR: &str = "ranks 4\n";

#[test]
fn placement_file_missing() {
    fails(
        &[("r.sched", FOUR)],
        &["run", "r.sched", "--placement", "nodes.txt"],
        2,
        &["nodes.txt: field `placement.file`: cannot read the placement file: No such file or directory"],
    );
}

#[test]
fn placement_file_with_too_few_ranks() {
    fails(
        &[("r.sched", FOUR), ("p.txt", "0\n1\n2\n")],
        &["run", "r.sched", "--placement", "p.txt"],
        2,
        &["p.txt:3: field `node`: the placement file places 3 ranks but the run has 4 (one line per rank)"],
    );
}

#[test]
fn placement_file_with_too_many_ranks() {
    fails(
        &[("r.sched", FOUR), ("p.txt", "0\n0\n1\n1\n2\n")],
        &[
            "run",
            "r.sched",
            "--placement",
            "p.txt",
            "--ranks-per-node",
            "2",
        ],
        2,
        &["p.txt:5:1: field `node`: a node for rank 4 but the run has 4 ranks (one line per rank, rank 0 first)"],
    );
}

#[test]
fn placement_file_with_a_node_the_machine_lacks() {
    fails(
        &[
            ("r.sched", FOUR),
            ("p.txt", "0\n1\n2\n99\n"),
            ("m.toml", "[topology]\nkind = \"crossbar\"\nnodes = 4\n"),
        ],
        &["run", "r.sched", "-m", "m.toml", "--placement", "p.txt"],
        2,
        &["p.txt:4:1: field `node`: rank 3 is placed on node 99 but the machine has 4 nodes (0..3)"],
    );
}

#[test]
fn placement_file_with_a_negative_node() {
    fails(
        &[("r.sched", FOUR), ("p.txt", "0\n1\n-2\n3\n")],
        &["run", "r.sched", "--placement", "p.txt"],
        2,
        &["p.txt:3:1: field `node`: '-2' is not a node number (expected one non-negative integer per line)"],
    );
}

// ---- Schedules -----------------------------------------------------------------------------

#[test]
fn schedule_unknown_operation() {
    schedule_fails(
        "ranks 2\nrank 0\njump 1\n",
        &["x.sched:3:1: unknown operation `jump` (expected compute, put, get"],
    );
}

#[test]
fn schedule_missing_argument() {
    schedule_fails(
        "ranks 2\nrank 0\nput 1\n",
        &["x.sched:3:1: expected `put DST SIZE [options]`"],
    );
}

#[test]
fn schedule_size_that_is_not_a_number() {
    schedule_fails(
        "ranks 2\nrank 0\nput 1 four\n",
        &["x.sched:3:7: field `size`: 'four' is not a size: expected a number of bytes with an optional unit, e.g. 4096 or 64KiB"],
    );
}

#[test]
fn schedule_source_rank_out_of_range() {
    schedule_fails(
        "ranks 2\nrank 1\nrecv 5 8\n",
        &["x.sched:3:6: field `src`: rank 5 is out of range: there are 2 ranks (0..1)"],
    );
}

#[test]
fn schedule_rank_block_out_of_range() {
    schedule_fails(
        "ranks 2\nrank 2\n",
        &["x.sched:2:6: field `rank`: rank 2 is out of range: there are 2 ranks (0..1)"],
    );
}

#[test]
fn schedule_negative_size() {
    schedule_fails(
        "ranks 2\nrank 0\nsend 1 -8\n",
        &["x.sched:3:8: field `size`: size -8 is negative: expected 0 or more bytes"],
    );
}

#[test]
fn schedule_bad_size_unit() {
    schedule_fails(
        "ranks 2\nrank 0\nput 1 4parsecs\n",
        &["x.sched:3:7: field `size`: 'parsecs' is not a size unit (B, KB, MB, GB, KiB, MiB, GiB)"],
    );
}

#[test]
fn schedule_time_without_unit() {
    schedule_fails(
        "ranks 2\nrank 0\ncompute 10\n",
        &["x.sched:3:9: field `time`: '10' has no unit: write the time with a unit, e.g. 10ns (ps, ns, us, ms, s)"],
    );
}

#[test]
fn schedule_duplicate_rank_block() {
    schedule_fails(
        "ranks 2\nrank 0\ncompute 1ns\nrank 1\nrank 0\n",
        &["x.sched:5:6: field `rank`: rank 0 has a second block (a rank has one block; its first is at line 2)"],
    );
}

#[test]
fn schedule_operation_before_ranks() {
    schedule_fails(
        "compute 1ns\nranks 2\n",
        &["x.sched:1:1: the schedule must start with `ranks N`"],
    );
}

#[test]
fn schedule_operation_before_a_rank_block() {
    schedule_fails(
        "ranks 2\ncompute 1ns\n",
        &["x.sched:2:1: `compute` before any `rank R` line"],
    );
}

#[test]
fn schedule_zero_ranks() {
    schedule_fails(
        "ranks 0\n",
        &["x.sched:1:7: field `ranks`: '0' is not a positive rank count"],
    );
}

#[test]
fn schedule_empty() {
    schedule_fails(
        "# nothing here\n",
        &["x.sched:1:1: empty schedule: expected `ranks N`"],
    );
}

#[test]
fn schedule_wait_on_an_unknown_request() {
    schedule_fails(
        "ranks 2\nrank 0\nwait r9\n",
        &["x.sched:3:6: field `request`: request 'r9' was not created by an earlier put, get, isend or irecv on rank 0"],
    );
}

#[test]
fn schedule_negative_tag() {
    schedule_fails(
        "ranks 2\nrank 0\nsend 1 4 tag=-5\n",
        &["x.sched:3:10: field `tag`: tag -5 is out of range: tags are 0 to 2^63-1 (a receive may use tag=any)"],
    );
}

#[test]
fn schedule_tag_too_large() {
    schedule_fails(
        "ranks 2\nrank 0\nput 1 4 tag=99999999999999999999\n",
        &["x.sched:3:9: field `tag`: tag 99999999999999999999 is out of range: tags are 0 to 2^63-1"],
    );
}

#[test]
fn schedule_unknown_option() {
    schedule_fails(
        "ranks 2\nrank 0\nput 1 4 colour=red\n",
        &["x.sched:3:9: field `colour`: `put` has no option `colour` (options: tag, handle, nic)"],
    );
}

#[test]
fn schedule_unknown_communicator() {
    schedule_fails(
        "ranks 2\nrank 0\nsend 1 4 comm=rows\n",
        &["x.sched:3:10: field `comm`: communicator 'rows' was not created by an earlier comm_split or comm_dup on rank 0"],
    );
}

#[test]
fn schedule_nonblocking_send_without_request_name() {
    schedule_fails(
        "ranks 2\nrank 0\nisend 1 4\n",
        &["x.sched:3:1: field `req`: `isend` needs a request name: req=NAME"],
    );
}

#[test]
fn schedule_region_never_closed() {
    schedule_fails(
        "ranks 2\nrank 0\nregion_begin setup\ncompute 1ns\n",
        &["x.sched:3:1: field `region`: rank 0: region setup is never closed (expected a region_end in the same rank block)"],
    );
}

#[test]
fn schedule_regions_closed_out_of_order() {
    schedule_fails(
        "ranks 2\nrank 0\nregion_begin a\nregion_begin b\nregion_end a\n",
        &["x.sched:5:12: field `region`: region_end a but the innermost open region is b"],
    );
}

#[test]
fn schedule_unterminated_quote() {
    schedule_fails(
        "ranks 2\nrank 0\nregion_begin \"pack phase\n",
        &["x.sched:3:14: unterminated quoted string: expected a closing \" on the same line"],
    );
}

#[test]
fn schedule_bad_source_location() {
    schedule_fails(
        "ranks 2\nrank 0\nput 1 4 @prog.c\n",
        &["x.sched:3:9: '@prog.c' is not a source location like @prog.c:12"],
    );
}

#[test]
fn schedule_source_location_without_an_operation() {
    // Used to panic (an index out of bounds in the reader).
    schedule_fails(
        "ranks 2\nrank 0\n@prog.c:3\n",
        &["x.sched:3:1: a source location without an operation: expected `OPERATION ... @FILE:LINE`"],
    );
}

#[test]
fn schedule_collective_root_out_of_range() {
    schedule_fails(
        "ranks 2\nrank 0\nbcast 8 root=5\nrank 1\nbcast 8 root=5\n",
        &["x.sched:3: field `root`: root 5 is out of range: the communicator has 2 ranks"],
    );
}

#[test]
fn schedule_unknown_collective_algorithm() {
    schedule_fails(
        "ranks 2\nrank 0\nallreduce 8 algo=magic\nrank 1\nallreduce 8 algo=magic\n",
        &["x.sched:3: field `algo`: unknown allreduce algorithm 'magic' (allreduce algorithms: recursive_doubling, ring, rabenseifner)"],
    );
}

#[test]
fn schedule_mismatched_collectives_are_found_before_the_run() {
    schedule_fails(
        "ranks 2\nrank 0\nallreduce 8\nrank 1\nbcast 8\n",
        &["x.sched:5: field `collective`: mismatched collective calls on world: call #1 is `bcast 8 B root=0` on rank 1 but `allreduce 8 B` on rank 0 (x.sched:3)"],
    );
}

#[test]
fn schedule_nic_index_beyond_the_machine() {
    schedule_fails(
        "ranks 2\nrank 0\nget 1 4 nic=2\n",
        &["x.sched:3: field `nic`: rank 0: nic=2 but the machine has 1 NIC(s) per node (nic.count)"],
    );
}

// ---- GOAL files ---------------------------------------------------------------------------

#[test]
fn goal_without_num_ranks() {
    goal_fails(
        "rank 0 {\n}\n",
        &["x.goal:1:1: a GOAL file starts with `num_ranks N`"],
    );
}

#[test]
fn goal_bad_rank_line() {
    goal_fails(
        "num_ranks 2\nrank 0\n",
        &["x.goal:2:1: expected `rank R {`"],
    );
}

#[test]
fn goal_requires_an_unknown_label() {
    goal_fails(
        "num_ranks 2\nrank 0 {\nl1: calc 1\nl1 requires l9\n}\n",
        &["x.goal:4:13: field `label`: rank 0: label l9 is not defined"],
    );
}

#[test]
fn goal_dependency_cycle() {
    goal_fails(
        "num_ranks 2\nrank 0 {\nl1: calc 1\nl2: calc 1\nl1 requires l2\nl2 irequires l1\n}\n",
        &["x.goal:3:1: field `requires`: rank 0: the dependencies form a cycle (involving l1, l2)"],
    );
}

#[test]
fn goal_operation_depends_on_itself() {
    goal_fails(
        "num_ranks 2\nrank 0 {\nl1: calc 1\nl1 requires l1\n}\n",
        &["x.goal:4:13: field `label`: l1 depends on itself: an operation can only require others"],
    );
}

#[test]
fn goal_bad_size() {
    goal_fails(
        "num_ranks 2\nrank 0 {\nl1: send 8kb to 1 tag 0\n}\n",
        &["x.goal:3:10: field `size`: '8kb' is not a size in bytes like 8b"],
    );
}

#[test]
fn goal_negative_size() {
    goal_fails(
        "num_ranks 2\nrank 0 {\nl1: send -8b to 1 tag 0\n}\n",
        &["x.goal:3:10: field `size`: size -8b is negative: expected 0 or more bytes"],
    );
}

#[test]
fn goal_source_rank_out_of_range() {
    goal_fails(
        "num_ranks 2\nrank 0 {\nl1: recv 8b from 7 tag 0\n}\n",
        &["x.goal:3:18: field `src`: rank 7 is out of range: num_ranks is 2"],
    );
}

#[test]
fn goal_rank_block_out_of_range() {
    goal_fails(
        "num_ranks 2\nrank 3 {\n}\n",
        &["x.goal:2:6: field `rank`: rank 3 is out of range: num_ranks is 2"],
    );
}

#[test]
fn goal_unknown_operation() {
    goal_fails(
        "num_ranks 2\nrank 0 {\nl1: jump 1\n}\n",
        &["x.goal:3:5: field `operation`: unknown GOAL operation `jump` (expected send, recv or calc)"],
    );
}

#[test]
fn goal_block_not_closed() {
    goal_fails(
        "num_ranks 2\nrank 0 {\nl1: calc 1\n",
        &["x.goal:2:1: rank 0 block is not closed with `}`"],
    );
}

#[test]
fn goal_label_defined_twice() {
    goal_fails(
        "num_ranks 2\nrank 0 {\nl1: calc 1\nl1: calc 2\n}\n",
        &["x.goal:4:1: field `label`: label l1 is defined twice in rank 0 (first at line 3); labels are unique per rank"],
    );
}

#[test]
fn goal_send_without_to() {
    goal_fails(
        "num_ranks 2\nrank 0 {\nl1: send 8b 1 tag 0\n}\n",
        &["x.goal:3:5: field `operation`: expected `send SIZEb to RANK tag TAG`"],
    );
}

#[test]
fn goal_negative_send_tag() {
    goal_fails(
        "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag -3\n}\n",
        &["x.goal:3:22: field `tag`: tag -3 is out of range: a send needs a tag of 0 or more"],
    );
}

#[test]
fn goal_calc_that_is_not_whole_nanoseconds() {
    goal_fails(
        "num_ranks 2\nrank 0 {\nl1: calc 1.5\n}\n",
        &["x.goal:3:10: field `time`: '1.5' is not a time in nanoseconds"],
    );
}

// ---- MGEN C programs ------------------------------------------------------------------------

#[test]
fn c_program_that_does_not_compile() {
    c_fails(
        "#include \"mgen.h\"\nint MGEN_Main(int argc, char **argv) {\n  MGEN_rdma_put(1, 4 0);\n  return 0;\n}\n",
        &["p.c: the C compiler", "failed:", "p.c:3:"],
    );
}

#[test]
fn c_program_that_crashes_in_one_rank() {
    c_fails(
        "#include \"mgen.h\"\nint MGEN_Main(int argc, char **argv) {\n  int me; MGEN_Comm_rank(MGEN_COMM_WORLD, &me);\n  if (me == 1) { volatile int *p = 0; *p = 3; }\n  return 0;\n}\n",
        &["p.c: recording the program failed:\nrank 1: program killed by signal 11 (segmentation fault) after its last MGEN call, MGEN_Comm_rank at p.c:3"],
    );
}

#[test]
fn c_program_that_aborts_in_one_rank() {
    c_fails(
        "#include \"mgen.h\"\n#include <stdlib.h>\nint MGEN_Main(int argc, char **argv) {\n  int me; MGEN_Comm_rank(MGEN_COMM_WORLD, &me);\n  MGEN_Comp(10);\n  if (me == 1) abort();\n  return 0;\n}\n",
        &["rank 1: program killed by signal 6 (aborted) after its last MGEN call, MGEN_Comp at p.c:5"],
    );
}

#[test]
fn c_program_that_exits_with_an_error() {
    c_fails(
        "#include \"mgen.h\"\n#include <stdlib.h>\nint MGEN_Main(int argc, char **argv) {\n  int me; MGEN_Comm_rank(MGEN_COMM_WORLD, &me);\n  if (me == 0) exit(3);\n  return 0;\n}\n",
        &["rank 0: the program exited with code 3 before MGEN_Main returned, after its last MGEN call, MGEN_Comm_rank at p.c:4"],
    );
}

#[test]
fn c_program_with_a_bad_destination_rank() {
    c_fails(
        "#include \"mgen.h\"\nint MGEN_Main(int argc, char **argv) {\n  int me; MGEN_Comm_rank(MGEN_COMM_WORLD, &me);\n  if (me == 0) MGEN_rdma_put(5, 4, 0);\n  return 0;\n}\n",
        &["p.c:4: field `dst`: rank 5 is out of range: there are 2 ranks (0..1) (schedule recorded from p.c, line 4)"],
    );
}

#[test]
fn c_program_with_a_negative_tag() {
    c_fails(
        "#include \"mgen.h\"\nint MGEN_Main(int argc, char **argv) {\n  int me; MGEN_Comm_rank(MGEN_COMM_WORLD, &me);\n  if (me == 0) MGEN_rdma_put(1, 4, -2);\n  return 0;\n}\n",
        &["p.c:4: field `tag`: tag -2 is out of range: tags are 0 to 2^63-1"],
    );
}

#[test]
fn c_program_with_an_invalid_communicator() {
    c_fails(
        "#include \"mgen.h\"\nint MGEN_Main(int argc, char **argv) {\n  int n;\n  MGEN_Comm_size(MGEN_COMM_WORLD + 7, &n);\n  return 0;\n}\n",
        &["p.c:4: MGEN_Comm_size: invalid communicator"],
    );
}

#[test]
fn record_of_a_crashing_program_writes_no_schedule() {
    fails(
        &[("p.c", "#include \"mgen.h\"\n#include <stdlib.h>\nint MGEN_Main(int argc, char **argv) {\n  MGEN_Comp(10);\n  abort();\n}\n")],
        &["record", "p.c", "--ranks", "2"],
        2,
        &["rank 0: program killed by signal 6 (aborted) after its last MGEN call, MGEN_Comp at p.c:4"],
    );
}

// ---- Python programs ------------------------------------------------------------------------

#[test]
fn python_program_with_a_syntax_error() {
    python_fails(
        "def program(ctx)\n    pass\n",
        &[
            "recording p.py failed:",
            "File \"p.py\", line 1",
            "SyntaxError: expected ':'",
        ],
    );
}

#[test]
fn python_program_with_a_bad_destination_rank() {
    python_fails(
        "def program(ctx):\n    ctx.put(ctx.rank + 5, 4)\n",
        &["p.py:2: field `dst`: rank 5 is out of range: there are 2 ranks (0..1)"],
    );
}

// ---- Command line ---------------------------------------------------------------------------

const C_OK: &str = "#include \"mgen.h\"\nint MGEN_Main(int argc, char **argv) {\n  MGEN_Comp(1);\n  return 0;\n}\n";

#[test]
fn cli_zero_ranks() {
    fails(
        &[("p.c", C_OK)],
        &["run", "p.c", "--ranks", "0"],
        2,
        &["command line: field `ranks`: --ranks must be at least 1"],
    );
}

#[test]
fn cli_timeline_links_without_a_timeline() {
    fails(
        &[("r.sched", "ranks 2\nrank 0\nput 1 4 tag=0\nrank 1\npoll 0\n")],
        &["run", "r.sched", "--timeline-links", "busiest:2"],
        2,
        &["command line: field `timeline-links`: --timeline-links chooses the links drawn in a timeline: it needs --timeline FILE"],
    );
}

#[test]
fn cli_max_sim_time_without_a_unit() {
    fails(
        &[(
            "r.sched",
            "ranks 2\nrank 0\nput 1 4 tag=0\nrank 1\npoll 0\n",
        )],
        &["run", "r.sched", "--max-sim-time", "10"],
        2,
        &["command line: field `max-sim-time`:"],
    );
}

#[test]
fn cli_memory_limit_that_is_not_a_size() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("r.sched"),
        "ranks 2\nrank 0\nput 1 4 tag=0\nrank 1\npoll 0\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_acesim"))
        .args(["run", "r.sched", "--json", "out.json"])
        .env("ACESIM_MEMORY_LIMIT", "lots")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("environment: field `ACESIM_MEMORY_LIMIT`"),
        "{err}"
    );
    assert!(!dir.path().join("out.json").exists());
}

#[test]
fn cli_ranks_missing_for_a_c_program() {
    fails(
        &[("p.c", C_OK)],
        &["run", "p.c"],
        2,
        &["command line: field `ranks`: --ranks is needed to run the C program p.c"],
    );
}

#[test]
fn cli_more_ranks_than_the_recorder_runs() {
    fails(
        &[("p.c", C_OK)],
        &["run", "p.c", "--ranks", "20000000"],
        2,
        &["command line: field `ranks`: --ranks 20000000: programs are recorded for at most 16777216 ranks"],
    );
}

#[test]
fn cli_ranks_disagree_with_a_goal_file() {
    fails(
        &[("t.goal", "num_ranks 2\n")],
        &["run", "t.goal", "--ranks", "3"],
        2,
        &["command line: field `ranks`: --ranks 3 but t.goal is a schedule for 2 ranks"],
    );
}

#[test]
fn cli_zero_ranks_for_validate() {
    fails(
        &[],
        &["validate", "--ranks", "0"],
        2,
        &["command line: field `ranks`: --ranks must be at least 1"],
    );
}

#[test]
fn cli_program_file_missing() {
    fails(
        &[],
        &["run", "missing.sched"],
        2,
        &["missing.sched: No such file or directory"],
    );
}

#[test]
fn cli_c_program_file_missing() {
    fails(
        &[],
        &["run", "missing.c", "--ranks", "2"],
        2,
        &["missing.c: no such file"],
    );
}

#[test]
fn cli_ranks_disagree_with_a_schedule() {
    fails(
        &[("r.sched", RING)],
        &["run", "r.sched", "--ranks", "8"],
        2,
        &["command line: field `ranks`: --ranks 8 but r.sched is a schedule for 2 ranks"],
    );
}

#[test]
fn cli_program_that_is_not_text() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bin.sched"), b"ranks 2\nrank \xff\xfe\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_acesim"))
        .args(["run", "bin.sched", "--json", "out.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bin.sched:2:6: not UTF-8 text: expected a text file"),
        "{err}"
    );
    assert_eq!(names(dir.path()), BTreeSet::from(["bin.sched".to_string()]));
}

#[test]
fn cli_c_program_that_is_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d.c")).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_acesim"))
        .args(["run", "d.c", "--ranks", "2"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("d.c: not a file: expected an MGEN C source file"),
        "{err}"
    );
    assert_eq!(names(dir.path()), BTreeSet::from(["d.c".to_string()]));
}

#[test]
fn cli_output_folder_missing() {
    // The JSON could be written, the CSV could not: neither is, and the run never starts.
    fails(
        &[("r.sched", RING)],
        &["run", "r.sched", "--links-csv", "results/links.csv"],
        2,
        &["results/links.csv: cannot write this output file: the folder 'results' does not exist"],
    );
}

#[test]
fn cli_output_folder_is_a_file() {
    fails(
        &[("r.sched", RING)],
        &["run", "r.sched", "--json", "r.sched/out.json"],
        2,
        &["r.sched/out.json: cannot write this output file: 'r.sched' is not a folder"],
    );
}

#[test]
fn cli_output_folder_not_writable() {
    let dir = tempfile::tempdir().unwrap();
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::write(dir.path().join("r.sched"), RING).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    if std::fs::write(ro.join("probe"), "").is_ok() {
        // Running as root: permissions do not stop writes; nothing to test here.
        eprintln!("the read-only folder is writable (root?): skipping");
        return;
    }
    let o = Command::new(env!("CARGO_BIN_EXE_acesim"))
        .args([
            "run",
            "r.sched",
            "--json",
            "out.json",
            "--links-csv",
            "ro/links.csv",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("ro/links.csv: cannot write this output file: cannot create a file in 'ro': permission denied"),
        "{err}"
    );
    assert!(!dir.path().join("out.json").exists());
    assert!(std::fs::read_dir(&ro).unwrap().next().is_none());
}

#[test]
fn cli_bad_timeline_links() {
    fails(
        &[("r.sched", RING)],
        &[
            "run",
            "r.sched",
            "--timeline",
            "t.json",
            "--timeline-links",
            "busiest:x",
        ],
        2,
        &["command line: field `timeline-links`: 'busiest:x': expected busiest:N with N a number"],
    );
}

#[test]
fn cli_unknown_flag() {
    fails(
        &[("r.sched", RING)],
        &["run", "r.sched", "--jsn", "x.json"],
        2,
        &[
            "error: unexpected argument '--jsn' found",
            "Usage: acesim run",
        ],
    );
}

#[test]
fn traffic_load_out_of_range() {
    fails(
        &[],
        &["traffic", "--load", "2.0"],
        2,
        &["command line: field `load`: offered load 2 is outside (0, 1]"],
    );
}

#[test]
fn traffic_load_not_a_number() {
    fails(
        &[],
        &["traffic", "--load", "0.1:abc:0.1"],
        2,
        &["command line: field `load`: 'abc' is not a number"],
    );
}

#[test]
fn traffic_unknown_pattern() {
    fails(
        &[],
        &["traffic", "--pattern", "spiral"],
        2,
        &["command line: field `pattern`: unknown traffic pattern 'spiral'; valid patterns: uniform,"],
    );
}

#[test]
fn traffic_zero_byte_packet() {
    fails(
        &[],
        &["traffic", "--packet", "0B"],
        2,
        &["command line: field `packet`: packet size 0 B is out of range: a packet must be larger than the header (32 B) and at most the MTU (2048 B)"],
    );
}

#[test]
fn traffic_packet_with_a_bad_unit() {
    fails(
        &[],
        &["traffic", "--packet", "10parsecs"],
        2,
        &["command line: field `packet`: 'parsecs' is not a size unit (B, KB, MB, GB, KiB, MiB, GiB)"],
    );
}

// ---- Programs that cannot finish ----------------------------------------------------------

#[test]
fn deadlock_receive_never_sent() {
    fails(
        &[("x.sched", "ranks 2\nrank 0\ncompute 1us\nrank 1\nrecv 0 8 tag=3\n")],
        &["run", "x.sched"],
        3,
        &[
            "error[deadlock]: the program can never finish (1 rank blocked at 1.000 us)",
            "rank 1: `recv 0 8 tag=3` at x.sched:5 waits for a message from rank 0 with tag 3 on world that is never sent",
        ],
    );
}

#[test]
fn deadlock_waitall_on_a_request_never_completed() {
    fails(
        &[(
            "x.sched",
            "ranks 3\nrank 0\nirecv 1 8 req=a\nirecv 2 8 req=b tag=4\nwaitall a b\nrank 1\nsend 0 8\n",
        )],
        &["run", "x.sched"],
        3,
        &["rank 0: `waitall (2 requests)` at x.sched:5 waits for a message from rank 2 with tag 4 on world that is never sent"],
    );
}

#[test]
fn deadlock_two_rendezvous_sends_facing_each_other() {
    fails(
        &[(
            "x.sched",
            "ranks 2\nrank 0\nsend 1 1MiB\nrecv 1 1MiB\nrank 1\nsend 0 1MiB\nrecv 0 1MiB\n",
        )],
        &["run", "x.sched"],
        3,
        &[
            "(2 ranks blocked at",
            "rank 0: `send 1 1048576 tag=0` at x.sched:3 waits for a receive matching its 1048576 B message to rank 1 (rendezvous)",
            "rank 1: `send 0 1048576 tag=0` at x.sched:6 waits for a receive matching its 1048576 B message to rank 0 (rendezvous)",
        ],
    );
}

#[test]
fn deadlock_in_a_c_program_names_its_source_lines() {
    fails(
        &[(
            "p.c",
            "#include \"mgen.h\"\nint MGEN_Main(int argc, char **argv) {\n  int me; MGEN_Comm_rank(MGEN_COMM_WORLD, &me);\n  char b[8];\n  MGEN_Recv(b, 8, MGEN_BYTE, 1 - me, 0, MGEN_COMM_WORLD, MGEN_STATUS_IGNORE);\n  return 0;\n}\n",
        )],
        &["run", "p.c", "--ranks", "2"],
        3,
        &[
            "rank 0: `recv 1 8 tag=0` at p.c:5 waits for a message from rank 1",
            "rank 1: `recv 0 8 tag=0` at p.c:5 waits for a message from rank 0",
        ],
    );
}

#[test]
fn traffic_that_cannot_run_on_the_machine_is_refused() {
    // The default machine has one node: nothing to measure (it used to print offered 0,
    // NaN latencies and "stable").
    fails(
        &[],
        &["traffic", "--load", "0.1"],
        2,
        &["field `pattern`: uniform needs at least two nodes, and this machine has 1"],
    );
    // --ranks sizes a crossbar, and is refused where it would be ignored.
    fails(
        &[("t.toml", "[topology]\nkind = \"torus\"\ndims = [4, 4]\n")],
        &["traffic", "-m", "t.toml", "--ranks", "3", "--load", "0.1"],
        2,
        &["field `ranks`: --ranks 3: synthetic traffic runs on every node of the machine, and this torus has 16"],
    );
    fails(
        &[("f.toml", "[topology]\nkind = \"fat_tree\"\nk = 2\nn = 3\n")],
        &[
            "traffic",
            "-m",
            "f.toml",
            "--pattern",
            "tornado",
            "--load",
            "0.1",
        ],
        2,
        &["field `pattern`: tornado moves half-way along the dimensions of a mesh or torus"],
    );
    fails(
        &[],
        &["traffic", "--ranks", "2", "--pattern", "bit_reverse", "--load", "0.1"],
        2,
        &["bit_reverse sends nothing on this machine: every one of its 2 nodes is its own destination"],
    );
}

#[test]
fn c_program_with_a_bad_split_colour_is_located_in_the_c_file() {
    // It was reported at a line of the recorded schedule, which the user never saw.
    c_fails(
        "#include \"mgen.h\"\nint MGEN_Main(int argc, char **argv) {\n  int me; MGEN_Comm c;\n  MGEN_Comm_rank(MGEN_COMM_WORLD, &me);\n  MGEN_Comm_split(MGEN_COMM_WORLD, -5, me, &c);\n  return 0;\n}\n",
        &["p.c:5: field `color`: '-5' is not a color"],
    );
}

#[test]
fn machine_intra_node_path_unknown_or_without_bandwidth() {
    machine_fails(
        "[topology]\nkind = \"crossbar\"\n[node]\nintra_node = \"shm\"\n",
        &[
            "m.toml:4",
            "node.intra_node",
            "unknown intra-node path 'shm'",
            "expected nic or memory",
        ],
    );
    machine_fails(
        "[topology]\nkind = \"crossbar\"\n[node]\nintra_node = \"memory\"\nintra_node_bandwidth = \"0 B/s\"\n",
        &["m.toml:5:24", "bandwidth '0 B/s' must be greater than zero"],
    );
}

#[test]
fn traffic_refuses_the_options_of_programs() {
    for opt in [["--ranks-per-node", "2"], ["--placement", "cyclic"]] {
        let mut args = vec!["traffic", "--load", "0.1"];
        args.extend(opt);
        let field = opt[0].trim_start_matches('-');
        fails(
            &[],
            &args,
            2,
            &[&format!("command line: field `{field}`: {} places a program's ranks on nodes; synthetic traffic has no ranks", opt[0])],
        );
    }
}

#[test]
fn a_run_on_threads_the_machine_or_model_cannot_take() {
    let torus = "[topology]\nkind = \"torus\"\ndims = [2, 2]\n";
    let prog = "ranks 2\nrank 0\nput 1 100 tag=1\nrank 1\npoll 1\n";
    let run = |extra: &[&'static str]| {
        let mut args = vec!["run", "p.sched", "-m", "m.toml"];
        args.extend_from_slice(extra);
        args
    };
    fails(
        &[("m.toml", torus), ("p.sched", prog)],
        &run(&["--threads", "5"]),
        2,
        &["--threads: field `partitions`: 5 partitions for a torus of 4 router(s)"],
    );
    fails(
        &[("m.toml", torus), ("p.sched", prog)],
        &run(&["--threads", "2", "--model", "flow"]),
        2,
        &["the flow model runs on one thread"],
    );
    fails(
        &[("m.toml", torus), ("p.sched", prog)],
        &run(&["--threads", "2", "--partitions", "2"]),
        2,
        &["--partitions measures how a serial run would split"],
    );
    fails(
        &[
            (
                "m.toml",
                "[topology]\nkind = \"torus\"\ndims = [4]\n[link]\nlatency = \"0ns\"\n",
            ),
            ("p.sched", prog),
        ],
        &run(&["--threads", "2"]),
        2,
        &["has no latency (0 ps), so they could never advance apart"],
    );
}

#[test]
fn traffic_on_more_threads_than_the_machine_splits_into() {
    let torus = "[topology]\nkind = \"torus\"\ndims = [2, 2]\n";
    fails(
        &[("m.toml", torus)],
        &["traffic", "-m", "m.toml", "--load", "0.1", "--threads", "5"],
        2,
        &["--threads: field `partitions`: 5 partitions for a torus of 4 router(s)"],
    );
    fails(
        &[("m.toml", torus)],
        &[
            "traffic",
            "-m",
            "m.toml",
            "--load",
            "0.1",
            "--threads",
            "2",
            "--partitions",
            "2",
        ],
        2,
        &["--partitions measures how a serial run would split: it runs on one thread"],
    );
    fails(
        &[(
            "m.toml",
            "[topology]\nkind = \"torus\"\ndims = [4]\n[link]\nlatency = \"0ns\"\n",
        )],
        &["traffic", "-m", "m.toml", "--load", "0.1", "--threads", "2"],
        2,
        &["has no latency (0 ps), so they could never advance apart"],
    );
}

#[test]
fn parquet_folder_that_cannot_be_written() {
    // Checked before the run: nothing is written, not even the other outputs.
    fails(
        &[("r.sched", RING)],
        &["run", "r.sched", "--parquet", "no/such/tables"],
        2,
        &["no/such/tables: field `parquet`: the folder 'no/such' does not exist"],
    );
    fails(
        &[("r.sched", RING), ("t", "a file")],
        &["run", "r.sched", "--parquet", "t"],
        2,
        &["t: field `parquet`: exists and is not a folder"],
    );
    // `acesim parquet` on what is not a run's summary: named, and no folder made.
    fails(
        &[("points.json", "[]")],
        &["parquet", "points.json"],
        2,
        &[
            "points.json: not an acesim run summary",
            "the JSON is a list",
        ],
    );
}

#[test]
fn motif_parameters_and_options_that_do_not_apply() {
    fails(
        &[],
        &[
            "run",
            "motif:halo3d",
            "--ranks",
            "64",
            "--param",
            "dims=4x4x2",
        ],
        2,
        &["motif:halo3d: field `dims`: dims 4x4x2 hold 32 ranks, not the 64 of the run"],
    );
    fails(
        &[],
        &[
            "run",
            "motif:ring",
            "--ranks",
            "4",
            "--param",
            "itterations=3",
        ],
        2,
        &["field `itterations`: ring has no parameter `itterations`; did you mean `iterations`?"],
    );
    fails(
        &[("r.sched", RING)],
        &["run", "r.sched", "--param", "size=1KiB"],
        2,
        &["field `param`: --param sets a motif's parameter (motif:NAME); r.sched takes its arguments after `--`"],
    );
    fails(
        &[],
        &[
            "run",
            "motif:ring",
            "--ranks",
            "4",
            "--schedule-out",
            "s.sched",
        ],
        2,
        &["field `schedule-out`: a motif is generated as the run goes"],
    );
    fails(
        &[],
        &[
            "validate",
            "motif:halo3d",
            "--ranks",
            "64",
            "--param",
            "dims=4x4x2",
        ],
        2,
        &["motif:halo3d: field `dims`: dims 4x4x2 hold 32 ranks, not the 64 of the run"],
    );
}
