//! Schedule text: any text either parses or gives a located input error; a parsed schedule
//! written back (`schedule::write`) parses to the same program.

#![no_main]

use acesim::frontends::schedule;
use acesim::program::{OpKind, Program};
use acesim::Error;
use libfuzzer_sys::fuzz_target;

mod guards;

const NAME: &str = "fuzz.sched";

/// The program with its table indices (regions, collective calls, request lists) replaced
/// by what they point at, and source locations as text: two parses of equivalent texts
/// may number their tables differently (rank blocks can come in any order).
fn canonical(p: &Program) -> Vec<Vec<(OpKind, String, String)>> {
    p.ops
        .iter()
        .map(|ops| {
            ops.iter()
                .map(|op| {
                    let (kind, extra) = match op.kind {
                        OpKind::RegionBegin { region } => (
                            OpKind::RegionBegin { region: 0 },
                            p.regions[region as usize].clone(),
                        ),
                        OpKind::RegionEnd { region } => (
                            OpKind::RegionEnd { region: 0 },
                            p.regions[region as usize].clone(),
                        ),
                        OpKind::Coll { call } => (
                            OpKind::Coll { call: 0 },
                            format!("{:?}", p.coll_calls[call as usize]),
                        ),
                        OpKind::WaitAll { list, count } => (
                            OpKind::WaitAll { list: 0, count },
                            format!("{:?}", &p.req_lists[list as usize..(list + count) as usize]),
                        ),
                        OpKind::WaitAny { list, count } => (
                            OpKind::WaitAny { list: 0, count },
                            format!("{:?}", &p.req_lists[list as usize..(list + count) as usize]),
                        ),
                        kind => (kind, String::new()),
                    };
                    (kind, extra, p.describe_loc(op.loc))
                })
                .collect()
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if guards::declares_many_ranks(text) {
        return;
    }
    let program = match schedule::parse(NAME, text) {
        Ok(p) => p,
        Err(Error::Input { location, .. }) => {
            assert!(!location.file.is_empty(), "error without a file");
            assert!(
                location.line.is_some() || location.file == NAME,
                "error without a line: {location}"
            );
            return;
        }
        Err(e) => panic!("parsing gave a non-input error: {e}"),
    };
    let written = schedule::write(&program).expect("a parsed schedule can be written");
    // Read back under the same name, so unannotated operations keep their locations.
    let again = match schedule::parse(NAME, &written) {
        Ok(p) => p,
        Err(e) => panic!("the written schedule does not parse: {e}\n{written}"),
    };
    assert_eq!(again.ranks, program.ranks);
    assert_eq!(again.handles, program.handles, "handles differ:\n{written}");
    assert_eq!(
        again.comm_handles, program.comm_handles,
        "communicators differ:\n{written}"
    );
    assert_eq!(
        canonical(&again),
        canonical(&program),
        "the written schedule reads back differently:\n{written}"
    );
});
