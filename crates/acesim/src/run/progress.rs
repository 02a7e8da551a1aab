//! How far a long run has gone, for a person watching: the drivers report where they are
//! every quarter of a second (`Progress`), and `Terminal` draws it as one line on stderr
//! when stderr is a terminal (never in files or pipes), cleared when the run ends.

use crate::units::{format_time, Ps};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Status {
    /// A program's run: the simulated time reached, the events so far, ranks finished.
    Run {
        sim_ps: Ps,
        events: u64,
        ranks_finished: u32,
        ranks: u32,
    },
    /// A load point of synthetic traffic: the simulated time against the end of its
    /// measurement window, and the packets measured so far against those needed (all
    /// packets created in the window).
    Traffic {
        load: f64,
        sim_ps: Ps,
        window_end_ps: Ps,
        events: u64,
        measured: u64,
        needed: u64,
    },
}

/// Receives a run's status as it goes, at most once per `every` (checked every few
/// thousand events).
#[derive(Clone)]
pub struct Progress {
    pub receiver: Arc<dyn Fn(Status) + Send + Sync>,
    pub every: Duration,
}

impl Progress {
    /// `receiver`, told every quarter of a second.
    pub fn new(receiver: impl Fn(Status) + Send + Sync + 'static) -> Progress {
        Progress {
            receiver: Arc::new(receiver),
            every: EVERY,
        }
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

/// The driver's side: reports the status when the last report is old enough.
pub struct Reporter {
    progress: Option<Progress>,
    last: Instant,
}

/// The default interval between two reports.
pub const EVERY: Duration = Duration::from_millis(250);

impl Reporter {
    pub fn new(progress: Option<&Progress>) -> Reporter {
        Reporter {
            progress: progress.cloned(),
            last: Instant::now(),
        }
    }

    /// Whether a report is due (cheap: called every few thousand events).
    pub fn due(&mut self) -> bool {
        match &self.progress {
            Some(p) if self.last.elapsed() >= p.every => {}
            _ => return false,
        }
        self.last = Instant::now();
        true
    }

    pub fn report(&self, status: Status) {
        if let Some(p) = &self.progress {
            (p.receiver)(status);
        }
    }
}

/// A line on stderr that shows the status, when stderr is a terminal.
pub struct Terminal {
    bar: ProgressBar,
    started: Instant,
}

impl Terminal {
    /// `None` when stderr is not a terminal (a file, a pipe, a notebook): nothing is drawn.
    pub fn on_stderr() -> Option<Arc<Terminal>> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        Some(Arc::new(Terminal {
            bar,
            started: Instant::now(),
        }))
    }

    /// The receiver that draws on this line.
    pub fn progress(self: &Arc<Self>) -> Progress {
        let me = Arc::clone(self);
        Progress::new(move |s| me.show(s))
    }

    fn show(&self, s: Status) {
        let wall = self.started.elapsed().as_secs_f64().max(1e-9);
        self.bar.set_message(describe(s, wall));
        self.bar.tick();
    }

    /// Clears the line (before the summary is printed).
    pub fn clear(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// The status as the line says it, `wall` seconds into the run.
pub fn describe(s: Status, wall: f64) -> String {
    let rate = |events: u64| {
        let r = events as f64 / wall;
        if r >= 1e6 {
            format!("{:.1} M events/s", r / 1e6)
        } else {
            format!("{:.0} k events/s", r / 1e3)
        }
    };
    match s {
        Status::Run {
            sim_ps,
            events,
            ranks_finished,
            ranks,
        } => format!(
            "simulated {} · {} · {ranks_finished} of {ranks} ranks finished",
            format_time(sim_ps),
            rate(events)
        ),
        Status::Traffic {
            load,
            sim_ps,
            window_end_ps,
            events,
            measured,
            needed,
        } => format!(
            "load {load}: simulated {} of the window's {} · {} · {measured} of {needed} measured packets arrived",
            format_time(sim_ps),
            format_time(window_end_ps),
            rate(events)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_where_the_run_is() {
        let s = Status::Run {
            sim_ps: 12_500_000,
            events: 3_000_000,
            ranks_finished: 3,
            ranks: 8,
        };
        assert_eq!(
            describe(s, 2.0),
            "simulated 12.500 us · 1.5 M events/s · 3 of 8 ranks finished"
        );
        let t = Status::Traffic {
            load: 0.3,
            sim_ps: 1_000_000,
            window_end_ps: 6_000_000,
            events: 500_000,
            measured: 120,
            needed: 400,
        };
        assert_eq!(
            describe(t, 1.0),
            "load 0.3: simulated 1.000 us of the window's 6.000 us · 500 k events/s · 120 of 400 measured packets arrived"
        );
    }

    #[test]
    fn a_reporter_without_a_receiver_is_never_due() {
        let mut r = Reporter::new(None);
        std::thread::sleep(EVERY);
        assert!(!r.due());
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let s2 = Arc::clone(&seen);
        let p = Progress::new(move |s| s2.lock().unwrap().push(s));
        let mut r = Reporter::new(Some(&p));
        assert!(!r.due(), "not before a quarter of a second");
        std::thread::sleep(EVERY);
        assert!(r.due());
        let st = Status::Run {
            sim_ps: 1,
            events: 2,
            ranks_finished: 0,
            ranks: 1,
        };
        r.report(st);
        assert_eq!(*seen.lock().unwrap(), vec![st]);
    }
}
