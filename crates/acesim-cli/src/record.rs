//! `acesim record`: a C or Python program as schedule text, without simulating it.

use crate::inputs::{bytes, check_interrupt, check_recorded_ranks, record_timeout_arg};
use crate::output::{check_distinct, write_all, Output};
use crate::signals::interrupt_flag;
use acesim::frontends::record::RecordOptions;
use acesim::frontends::{self, schedule, Format};
use std::path::{Path, PathBuf};

/// The options of `acesim record`.
pub(crate) struct Record<'a> {
    pub program: &'a Path,
    pub ranks: u32,
    pub output: Option<PathBuf>,
    pub record_timeout: Option<String>,
    pub ignore_memory_limit: bool,
    pub args: &'a [String],
}

pub(crate) fn record(r: Record) -> acesim::Result<()> {
    let Record {
        program,
        ranks,
        output,
        record_timeout,
        ignore_memory_limit,
        args,
    } = r;
    check_recorded_ranks(ranks)?;
    let output = output.map(|p| Output::check("-o", &p)).transpose()?;
    check_distinct(&output.iter().collect::<Vec<_>>(), &[("program", program)])?;
    let interrupt = interrupt_flag();
    let options = RecordOptions {
        interrupt: Some(interrupt.clone()),
        timeout_s: record_timeout_arg(record_timeout.as_deref())?,
        memory_check: !ignore_memory_limit,
        ..Default::default()
    };
    let format = Format::of_path(program);
    let text = frontends::load::record(program, format, ranks, args, &options)?;
    check_interrupt(&interrupt, program)?;
    // Parse it so a recorded program with bad values is reported now.
    schedule::parse(
        &format!("schedule recorded from {}", program.display()),
        &text,
    )?;
    match output {
        Some(o) => write_all(vec![(o, bytes(text.as_bytes()))]),
        None => {
            out!("{text}");
            Ok(())
        }
    }
}
