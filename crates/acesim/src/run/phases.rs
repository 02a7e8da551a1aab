//! Where a run's wall time goes (`acesim run --timings`): laps of one clock, each named
//! after the phase it ends (reading, linking, building, the events, merging, collecting,
//! writing). Off by default; a lap then costs nothing. The figures vary from run to run,
//! so they go to the terminal, never into the results.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The phases of a run timed so far, shared by the command and the simulation it calls.
#[derive(Debug, Clone, Default)]
pub struct Phases(Option<Arc<Mutex<Laps>>>);

#[derive(Debug)]
struct Laps {
    started: Instant,
    last: Instant,
    laps: Vec<(&'static str, Duration)>,
}

impl Phases {
    /// A clock started now.
    pub fn on() -> Self {
        let now = Instant::now();
        Phases(Some(Arc::new(Mutex::new(Laps {
            started: now,
            last: now,
            laps: Vec::new(),
        }))))
    }

    /// The time since the previous lap (or the start) was spent in `phase`; a phase timed
    /// twice adds up.
    pub fn lap(&self, phase: &'static str) {
        let Some(laps) = &self.0 else { return };
        // A panic elsewhere while the lock was held leaves figures worth printing.
        let mut laps = laps.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let took = now - laps.last;
        laps.last = now;
        match laps.laps.iter_mut().find(|(name, _)| *name == phase) {
            Some((_, total)) => *total += took,
            None => laps.laps.push((phase, took)),
        }
    }

    /// The phases in the order first timed, with their wall seconds, and the whole time
    /// since the clock started.
    pub fn laps(&self) -> Option<(Vec<(&'static str, f64)>, f64)> {
        let laps = self.0.as_ref()?;
        let laps = laps.lock().unwrap_or_else(|e| e.into_inner());
        let each = laps
            .laps
            .iter()
            .map(|&(n, d)| (n, d.as_secs_f64()))
            .collect();
        Some((each, laps.started.elapsed().as_secs_f64()))
    }

    /// A table of the phases for the terminal: name, seconds, share of the whole.
    pub fn report(&self) -> Option<String> {
        let (laps, total) = self.laps()?;
        let mut out = String::from("timings (wall seconds):\n");
        let share = |s: f64| if total > 0.0 { 100.0 * s / total } else { 0.0 };
        for (name, s) in &laps {
            out += &format!("  {name:<22} {s:>9.3}  {:>5.1} %\n", share(*s));
        }
        let timed: f64 = laps.iter().map(|l| l.1).sum();
        if total - timed > 0.0005 {
            out += &format!(
                "  {:<22} {:>9.3}  {:>5.1} %\n",
                "other",
                total - timed,
                share(total - timed)
            );
        }
        out += &format!("  {:<22} {total:>9.3}\n", "total");
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn laps_add_up_to_the_whole_and_repeat_phases_sum() {
        let p = Phases::on();
        std::thread::sleep(Duration::from_millis(20));
        p.lap("first");
        std::thread::sleep(Duration::from_millis(10));
        p.lap("second");
        std::thread::sleep(Duration::from_millis(10));
        p.lap("first");
        let (laps, total) = p.laps().expect("timed");
        let names: Vec<_> = laps.iter().map(|l| l.0).collect();
        assert_eq!(names, ["first", "second"]);
        // Sleeps last at least as long as asked.
        assert!(laps[0].1 >= 0.030 && laps[1].1 >= 0.010, "{laps:?}");
        let sum: f64 = laps.iter().map(|l| l.1).sum();
        assert!(sum <= total + 1e-9, "{sum} > {total}");
        let report = p.report().expect("timed");
        assert!(
            report.contains("first") && report.contains("total"),
            "{report}"
        );
    }

    #[test]
    fn a_clock_that_is_off_times_nothing() {
        let p = Phases::default();
        p.lap("anything");
        assert!(p.laps().is_none() && p.report().is_none());
    }
}
