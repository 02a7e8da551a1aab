//! Machine TOML: any text either loads or gives a located input error; a machine that loads
//! writes back (`to_toml`) to text that loads to the same machine; a small machine builds.
//! Lines starting with `--set ` are taken out of the text and applied as `--set` overrides.

#![no_main]

use acesim::{Error, MachineSource};
use libfuzzer_sys::fuzz_target;

mod guards;

const RANKS: u32 = 8;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut body = String::new();
    let mut overrides = Vec::new();
    for line in text.split_inclusive('\n') {
        match line.strip_prefix("--set ") {
            Some(ov) => overrides.push(ov.trim_end_matches(['\n', '\r']).to_string()),
            None => body.push_str(line),
        }
    }
    let source = MachineSource::from_text("fuzz.toml", body.as_str()).with_overrides(&overrides);
    let config = match source.load() {
        Ok(config) => config,
        Err(Error::Input { location, .. }) => {
            match location.file.as_str() {
                "fuzz.toml" => {
                    let lines = body.lines().count() + 1;
                    assert!(location.line.is_none_or(|l| l <= lines), "{location}");
                }
                "command line" => assert!(!overrides.is_empty(), "{location}"),
                other => panic!("error located in '{other}'"),
            }
            return;
        }
        Err(e) => panic!("loading gave a non-input error: {e}"),
    };
    let written = config.to_toml();
    match MachineSource::from_text("written.toml", written.as_str()).load() {
        Ok(again) => assert_eq!(again, config, "to_toml does not round-trip:\n{written}"),
        Err(e) => panic!("to_toml wrote text that does not load: {e}\n{written}"),
    }
    // A placement file is read from disk: not something to fuzz.
    if config.placement.policy == "file"
        || guards::rough_machine_size(&config, RANKS) > guards::MAX_MACHINE
    {
        return;
    }
    for ranks in [1, RANKS] {
        match acesim::run::simulate::layout(&config, ranks) {
            Ok(_) | Err(Error::Input { .. }) => {}
            Err(e) => panic!("layout gave a non-input error: {e}"),
        }
    }
});
