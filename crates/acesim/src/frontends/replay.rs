//! How a trace is replayed and how any program is laid out on the machine, as a user writes
//! it (command-line options or Python keyword arguments), read once for both: the trace
//! options of the readers (calls ignored, compute scale and threshold, host speed) and the
//! job layout of `program::adjust` (jobs side by side, a message cap, collectives skipped).

use crate::error::{Error, Location, Result};
use crate::frontends::dumpi::TraceOptions;
use crate::machine::loaded::Machine;
use crate::program::adjust;
use crate::program::Program;

/// The options as written; `source` and `field` name them in errors as the caller spells
/// them (`command line`, `--compute-scale`; `arguments`, `compute_scale`).
#[derive(Debug, Clone, Default)]
pub struct ReplayArgs {
    pub ignore_calls: Vec<String>,
    pub compute_scale: Option<f64>,
    pub compute_threshold: Option<String>,
    pub flops: Option<String>,
    pub jobs: Option<String>,
    pub max_message: Option<String>,
    /// `run` (or absent) or `skip`.
    pub collectives: Option<String>,
}

/// How the caller spells a field: where it was given, and its name there.
pub struct Spelling {
    pub source: &'static str,
    pub field: fn(&str) -> String,
}

/// `--compute-scale` on the command line.
pub const COMMAND_LINE: Spelling = Spelling {
    source: "command line",
    field: |f| f.replace('_', "-"),
};

/// `compute_scale=` in Python.
pub const PYTHON: Spelling = Spelling {
    source: "arguments",
    field: |f| f.to_string(),
};

impl ReplayArgs {
    fn bad(&self, s: &Spelling, field: &str, message: impl Into<String>) -> Error {
        Error::input(
            Location::file(s.source).with_field((s.field)(field)),
            message,
        )
    }

    /// The readers' options.
    pub fn trace_options(&self, s: &Spelling) -> Result<TraceOptions> {
        let compute_scale = self.compute_scale.unwrap_or(1.0);
        if !(compute_scale.is_finite() && compute_scale >= 0.0) {
            return Err(self.bad(
                s,
                "compute_scale",
                format!("expected a factor of 0 or more, found {compute_scale}"),
            ));
        }
        let compute_threshold = match &self.compute_threshold {
            Some(text) => {
                crate::units::parse_time(text).map_err(|m| self.bad(s, "compute_threshold", m))?
            }
            None => 0,
        };
        let flops = match &self.flops {
            Some(text) => {
                Some(crate::frontends::ti::parse_flops(text).map_err(|m| self.bad(s, "flops", m))?)
            }
            None => None,
        };
        Ok(TraceOptions {
            ignore_calls: self.ignore_calls.clone(),
            compute_scale,
            compute_threshold,
            flops,
        })
    }

    /// `program` laid out as asked on `machine`: messages capped, collectives skipped, the
    /// job repeated.
    pub fn lay_out(
        &self,
        mut program: Program,
        machine: &Machine,
        s: &Spelling,
    ) -> Result<Program> {
        if let Some(text) = &self.max_message {
            let max = crate::units::parse_size(text).map_err(|m| self.bad(s, "max_message", m))?;
            adjust::cap_messages(&mut program, max);
        }
        match self.collectives.as_deref().unwrap_or("run") {
            "run" => {}
            "skip" => adjust::skip_collectives(&mut program),
            other => {
                return Err(self.bad(
                    s,
                    "collectives",
                    format!("expected `run` or `skip`, found `{other}`"),
                ))
            }
        }
        let jobs = match self.jobs.as_deref() {
            None => return Ok(program),
            Some("fill") => {
                // Nodes of the machine as built for one job (a size-open topology is built
                // for the ranks it must hold: then one job fills it).
                let nodes = crate::machine::topology::planned_size(machine, program.ranks).nodes;
                let per_node = u64::from(machine.placement.ranks_per_node);
                let slots = nodes * per_node;
                let jobs = slots / u64::from(program.ranks.max(1));
                if jobs == 0 {
                    return Err(self.bad(
                        s,
                        "jobs",
                        format!(
                            "one job of {} ranks does not fit: the machine holds {slots} ranks ({nodes} nodes x {per_node} ranks per node)",
                            program.ranks
                        ),
                    ));
                }
                jobs.min(u64::from(u32::MAX)) as u32
            }
            Some(n) => n.parse::<u32>().map_err(|_| {
                self.bad(
                    s,
                    "jobs",
                    format!("expected a number of jobs or `fill`, found `{n}`"),
                )
            })?,
        };
        if jobs == 0 {
            return Err(self.bad(s, "jobs", "expected 1 or more jobs, found 0"));
        }
        adjust::repeat_jobs(&program, jobs)
    }
}
