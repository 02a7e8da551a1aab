//! GOAL text: any text either parses or gives a located input error; a parsed program has
//! one dependency entry per operation.

#![no_main]

use acesim::frontends::goal;
use acesim::Error;
use libfuzzer_sys::fuzz_target;

mod guards;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if guards::declares_many_ranks(text) {
        return;
    }
    let program = match goal::parse("fuzz.goal", text) {
        Ok(p) => p,
        Err(Error::Input { location, .. }) => {
            assert_eq!(location.file, "fuzz.goal", "error not located in the file");
            return;
        }
        Err(e) => panic!("parsing gave a non-input error: {e}"),
    };
    let deps = program
        .deps
        .as_ref()
        .expect("a GOAL program has dependencies");
    assert_eq!(deps.len(), program.ranks as usize);
    for (d, ops) in deps.iter().zip(&program.ops) {
        let n = ops.len();
        assert_eq!(d.requires.len(), n);
        assert_eq!(d.irequires.len(), n);
        assert_eq!(d.after_complete.len(), n);
        assert_eq!(d.after_start.len(), n);
        assert_eq!(d.labels.len(), n);
        let targets = d
            .after_complete
            .lists()
            .chain(d.after_start.lists())
            .flatten();
        assert!(targets.into_iter().all(|&t| (t as usize) < n));
    }
});
