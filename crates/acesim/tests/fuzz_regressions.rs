//! Inputs the fuzz targets (fuzz/, docs/fuzzing.md) found to crash acesim, each fed back
//! exactly: bad input must give a located `Error::Input`, never a panic.

use acesim::error::Location;
use acesim::{schedule, Error};

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
