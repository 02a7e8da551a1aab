//! Small programs run on the `table1` preset: a schedule (or a GOAL file when the text has
//! `num_ranks`) of at most 8 ranks and 200 operations with small messages either runs or
//! stops with an error (bad input, deadlock); a panic or an internal error is a bug.

#![no_main]

use acesim::{goal, schedule, Error, MachineSource};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

mod guards;

fn machine() -> &'static acesim::MachineConfig {
    static MACHINE: OnceLock<acesim::MachineConfig> = OnceLock::new();
    MACHINE.get_or_init(|| {
        let (name, text) = acesim::config::PRESETS
            .iter()
            .find(|(name, _)| *name == "table1")
            .expect("the table1 preset exists");
        MachineSource::from_text(*name, *text)
            .load()
            .expect("the table1 preset loads")
    })
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
    match acesim::simulate(machine(), program) {
        Ok(_) | Err(Error::Input { .. }) | Err(Error::Deadlock(_)) => {}
        Err(e) => panic!("simulation failed: {e}"),
    }
});
