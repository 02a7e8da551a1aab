//! DUMPI rank files: any bytes either read into a program or give an input error located
//! in the file (never a panic). Seed the corpus with tests/data/dumpi/*/*.bin.

#![no_main]

use acesim::frontends::dumpi::{self, TraceOptions};
use acesim::Error;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let cursor = std::io::Cursor::new(data);
    match dumpi::read_rank(cursor, "fuzz-0000.bin", 4, &TraceOptions::default()) {
        Ok(p) => assert_eq!(p.ops.len(), 4),
        Err(Error::Input { location, .. }) => {
            assert!(
                location.file.starts_with("fuzz-0000.bin"),
                "error not located in the file"
            );
        }
        Err(e) => panic!("reading gave a non-input error: {e}"),
    }
});
