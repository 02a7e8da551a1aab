//! SimGrid time-independent traces: any text either reads into a program or gives an input
//! error located in the file (never a panic). Seed the corpus with tests/data/simgrid-ti/*.txt.

#![no_main]

use acesim::frontends::dumpi::TraceOptions;
use acesim::frontends::ti;
use acesim::Error;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let opts = TraceOptions {
        flops: Some(1e9),
        ..Default::default()
    };
    match ti::parse("fuzz.txt", text, &opts) {
        Ok((p, _)) => assert_eq!(p.ops.len(), p.ranks as usize),
        Err(Error::Input { location, .. }) => {
            assert!(
                location.file.starts_with("fuzz.txt"),
                "error not located in the file"
            );
        }
        Err(e) => panic!("reading gave a non-input error: {e}"),
    }
});
