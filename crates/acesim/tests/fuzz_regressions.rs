//! Inputs the fuzz targets (fuzz/, docs/fuzzing.md) found to crash acesim, each fed back
//! exactly: bad input must give a located `Error::Input`, never a panic.

use acesim::error::Location;
use acesim::frontends::schedule;
use acesim::{Error, MachineSource};

/// The location of an input error; panics on any other outcome.
fn input_error<T: std::fmt::Debug>(result: acesim::Result<T>) -> (Location, String) {
    match result {
        Err(Error::Input { location, message }) => (location, message),
        other => panic!("expected an input error, got {other:?}"),
    }
}

#[test]
fn schedule_line_with_only_a_source_location() {
    // fuzz/artifacts/schedule/crash-a6ad49cd...: a line holding nothing but `@FILE:LINE`
    // indexed the (empty) operation tokens.
    let text = "# acesim schedule 1\nranks 2\n @fig1.c:9\nputig1.c:11\nrank 1\npoll 0 @fig1.c:13\n";
    let (loc, msg) = input_error(schedule::parse("fuzz.sched", text));
    assert_eq!(
        (loc.file.as_str(), loc.line, loc.column),
        ("fuzz.sched", Some(3), Some(2))
    );
    assert!(msg.contains("without an operation"), "{msg}");
}

#[test]
fn schedule_source_location_without_a_file_name() {
    // fuzz/artifacts/schedule/crash-dc2658b4...: `@:50` was read as line 50 of a file named
    // "", so errors about the operation pointed nowhere (":50: field `size`").
    let text =
        "# acesim schedule 1\nranks 4\nrank 0\nput 1 sim schedulee=2 @:50\nw\\itall r2 r4 @mgenr6";
    let (loc, msg) = input_error(schedule::parse("fuzz.sched", text));
    assert_eq!(
        (loc.file.as_str(), loc.line, loc.column),
        ("fuzz.sched", Some(4), Some(23))
    );
    assert!(msg.contains("'@:50' is not a source location"), "{msg}");
}

/// Loads a machine, writes it back with `to_toml` and loads that.
fn round_trip(text: &str) {
    let config = MachineSource::from_text("m.toml", text).load().unwrap();
    let written = config.to_toml();
    let again = MachineSource::from_text("w.toml", written.as_str()).load();
    assert_eq!(again.unwrap(), config, "{written}");
}

#[test]
fn machine_with_the_largest_bandwidth_writes_back() {
    // fuzz/artifacts/machine_toml/crash-fef6949b... (the limits.toml seed): writing a
    // bandwidth above u64::MAX / 10 overflowed `value * 10`.
    round_trip(
        r#"# Values at or near the limits validation allows.
[topology]
kind = "torus"
dims = [16384, 16384]
nodes_per_router = 1

[router]
switch_latency = "999999.9999999999 s"
switch_throughput = "18446744073709551615 B/s"
vcs = 64
buffer_per_vc = "1 TiB"
ugal_threshold = 1e300

[link]
bandwidth = "1844674407370955.1 KB/s"
latency = "900719925474099.3 ns"

[nic]
count = 64
mtu = "1099511627776 B"
header = "1099511627775 B"

[placement]
ranks_per_node = 4096
seed = 9223372036854775807
"#,
    );
    round_trip("[topology]\nkind = \"crossbar\"\n[link]\nbandwidth = \"18014398509481984.1 KB/s\"");
}

#[test]
fn machine_with_long_times_and_large_bandwidths_writes_back_exactly() {
    // Found while writing the fuzz targets: one-decimal values were formatted through a
    // float, which rounds past 2^53 (900719925474099.3 ns was written as ...099.2).
    round_trip("[topology]\nkind = \"crossbar\"\n[link]\nlatency = \"900719925474099.3 ns\"");
    round_trip("[topology]\nkind = \"crossbar\"\n[link]\nbandwidth = \"1234567890123456.7 KB/s\"");
    round_trip(
        "[topology]\nkind = \"crossbar\"\n[link]\nlatency = \"0.6 ns\"\nbandwidth = \"2.8 GB/s\"",
    );
}

#[test]
fn torus_whose_size_overflows_64_bits_is_rejected() {
    // Found while writing the fuzz targets: the router count of `dims` was multiplied in 64
    // bits without an overflow check (2^64 wrapped to 0 and passed the size check).
    for dims in [
        "[65536, 65536, 65536, 65536]",
        "[4294967295, 4294967295, 4294967295]",
    ] {
        let text = format!("[topology]\nkind = \"torus\"\ndims = {dims}\n");
        let (loc, msg) = input_error(MachineSource::from_text("m.toml", text).load());
        assert_eq!(loc.field.as_deref(), Some("topology.dims"));
        assert_eq!((loc.file.as_str(), loc.line), ("m.toml", Some(3)));
        assert!(msg.contains("more than acesim supports"), "{msg}");
    }
}

#[test]
fn fat_tree_with_2_pow_31_levels_is_rejected() {
    // Found while writing the fuzz targets: `n as i32` made n = 2^31 a negative exponent,
    // so 2^-2147483648 nodes passed the size check.
    let text = "[topology]\nkind = \"fat_tree\"\nk = 2\nn = 2147483648\n";
    let (loc, msg) = input_error(MachineSource::from_text("m.toml", text).load());
    assert_eq!(loc.field.as_deref(), Some("topology.n"));
    assert_eq!((loc.file.as_str(), loc.line), ("m.toml", Some(4)));
    assert!(msg.contains("more than acesim supports"), "{msg}");
}

#[test]
fn leaf_spine_with_more_ports_than_32_bits_is_rejected() {
    // Found while writing the fuzz targets: 2^28 leaves of 65,535 ports each passed every
    // check and the build ran out of memory (and port numbers would have wrapped).
    let text = "[topology]\nkind = \"leaf_spine\"\nleaves = 268435456\nnodes_per_leaf = 1\nspines = 32767\nlinks_per_spine = 2\n";
    let config = MachineSource::from_text("m.toml", text).load().unwrap();
    let (loc, msg) = input_error(acesim::run::simulate::layout(&config, 8));
    assert_eq!(loc.field.as_deref(), Some("topology"));
    assert!(
        msg.contains("router ports is more than acesim supports"),
        "{msg}"
    );
}

#[test]
fn a_request_name_is_reused_only_after_its_wait() {
    let e = acesim::frontends::schedule::parse(
        "r.sched",
        "ranks 2\nrank 0\nisend 1 4 req=a\nisend 1 4 req=a\nwait a\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("r.sched:4:11: field `req`: request 'a' is reused before the request it named at line 3"),
        "{e}"
    );
    let e = acesim::frontends::schedule::parse(
        "r.sched",
        "ranks 2\nrank 0\nput 1 4 handle=h\nput 1 4 handle=h\ncomplete h\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("handle 'h' is reused before the put it named at line 3"),
        "{e}"
    );
    // After a wait (or complete, waitall, waitany, test) the name is free again.
    for done in ["wait a", "waitall a", "waitany a", "test a"] {
        let text = format!("ranks 2\nrank 0\nisend 1 4 req=a\n{done}\nisend 1 4 req=a\nwait a\nrank 1\nrecv 0 4\nrecv 0 4\n");
        assert!(
            acesim::frontends::schedule::parse("r.sched", &text).is_ok(),
            "{done}"
        );
    }
}

#[test]
fn messages_stay_short_and_say_what_to_write() {
    // A non-breaking space separates like any space.
    assert!(
        acesim::frontends::schedule::parse("n.sched", "ranks\u{a0}2\nrank 0\ncompute 1us\n")
            .is_ok()
    );
    // An exponent is named as such.
    let e = acesim::frontends::schedule::parse("e.sched", "ranks 2\nrank 0\ncompute 1e3ns\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("'1e3ns' uses an exponent"), "{e}");
    // A huge value is not echoed whole; the start and the end stay.
    let huge = "x".repeat(1_000_000);
    let e = acesim::frontends::schedule::parse(
        "h.sched",
        &format!("ranks 2\nrank 0\nput 1 4 tag={huge}\n"),
    )
    .unwrap_err()
    .to_string();
    assert!(e.len() < 1_000, "{} bytes", e.len());
    assert!(e.contains("characters left out"), "{e}");
    assert!(e.starts_with("h.sched:3:"), "{e}");
    // A deadlock circle of 1000 ranks is shown by its ends.
    let n = 1000;
    let mut text = format!("ranks {n}\n");
    for r in 0..n {
        text += &format!(
            "rank {r}\nrecv {} 4\nsend {} 4\n",
            (r + 1) % n,
            (r + n - 1) % n
        );
    }
    let m = acesim::MachineSource::from_text("m.toml", "[topology]\nkind = \"crossbar\"\n")
        .load()
        .unwrap();
    let e = acesim::simulate(
        &m,
        acesim::frontends::schedule::parse("c.sched", &text).unwrap(),
    )
    .unwrap_err()
    .to_string();
    let cycle = e.lines().find(|l| l.contains("cycle:")).expect("a cycle");
    assert!(cycle.len() < 300, "{cycle}");
    assert!(cycle.contains("... 985 more ranks ..."), "{cycle}");
}

#[test]
fn a_put_deadlock_names_the_rank_that_would_put_and_the_circle() {
    // Each rank polls for a put the other issues only after its own poll.
    let m = acesim::MachineSource::from_text("m.toml", "[topology]\nkind = \"crossbar\"\n")
        .load()
        .unwrap();
    let text = "ranks 2\nrank 0\npoll 1\nput 1 4 tag=2\nrank 1\npoll 2\nput 0 4 tag=1\n";
    let e = acesim::simulate(
        &m,
        acesim::frontends::schedule::parse("p.sched", text).unwrap(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains(
            "waits for a put with tag 1 that rank 1 issues only later in its program, at p.sched:7"
        ),
        "{e}"
    );
    assert!(e.contains("cycle: rank 0 -> rank 1 -> rank 0"), "{e}");
}

#[test]
fn dumpi_counts_that_add_up_past_2_to_the_64() {
    // fuzz/artifacts/dumpi/crash-dd35a918...: a v-collective's per-rank counts were added
    // with `sum()`, which overflowed on a corrupt record.
    use acesim::frontends::dumpi::{self, TraceOptions};
    let bytes = include_bytes!("fuzz-artifacts/dumpi-crash-dd35a918.bin");
    let cursor = std::io::Cursor::new(&bytes[..]);
    let (loc, msg) = input_error(dumpi::read_rank(
        cursor,
        "fuzz-0000.bin",
        4,
        &TraceOptions::default(),
    ));
    assert!(loc.file.starts_with("fuzz-0000.bin, record"), "{loc:?}");
    assert!(msg.contains("more than 2^64 bytes"), "{msg}");
}

#[test]
fn dumpi_sends_whose_bytes_add_up_past_2_to_the_64() {
    // fuzz/artifacts/dumpi/crash-3647794a...: the trace summary's point-to-point bytes were
    // added with `+=`, which overflowed on sends of corrupt sizes (the OTF2 and TI readers
    // already saturated). The summary now saturates; the program is read.
    use acesim::frontends::dumpi::{self, TraceOptions};
    let bytes = include_bytes!("fuzz-artifacts/dumpi-crash-3647794a.bin");
    let cursor = std::io::Cursor::new(&bytes[..]);
    match dumpi::read_rank(cursor, "fuzz-0000.bin", 4, &TraceOptions::default()) {
        Ok(p) => assert_eq!(p.ops.len(), 4),
        Err(e) => {
            let (loc, msg) = input_error::<()>(Err(e));
            assert!(loc.file.starts_with("fuzz-0000.bin"), "{loc:?}: {msg}");
        }
    }
}

#[test]
fn set_value_with_a_run_of_quotes() {
    // fuzz/artifacts/machine_toml/crash-d2878ea8...: a `--set` value that is not TOML was
    // handed to toml_edit as a bare string, and its choice of quotes for a run of 267 `"`
    // overflowed a counter (a panic in a checked build). The value is quoted here now: it
    // stays what was given, and an unknown field is reported as such.
    let body = "[topology]\nkind = \"mesh\"\ndims = [2, 2]\n";
    let quotes = "\"".repeat(267);
    for field in ["router.swi\0control_pacgy.dims", "topology.kind"] {
        let overrides = vec![format!("{field}=[4,4]{quotes}")];
        let result = MachineSource::from_text("m.toml", body)
            .with_overrides(&overrides)
            .load();
        let (loc, msg) = input_error(result);
        assert!(
            loc.file == "command line" || loc.file == "m.toml",
            "{loc}: {msg}"
        );
    }
    // A string of quotes is kept as given.
    let text = acesim::machine::load::apply_override(body, &format!("name.x={quotes}"))
        .expect("a string value");
    let doc: toml::Table = text.parse().expect("the document is TOML");
    assert_eq!(doc["name"]["x"].as_str(), Some(quotes.as_str()));
}
