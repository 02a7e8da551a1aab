//! A process's partitions of a run across processes with several threads each (`mpirun -np
//! P acesim run --threads T`): its T partitions run each window on T threads and are one
//! partition to the other processes. What one of its partitions hands another of its own
//! stays in the process; what it hands a partition elsewhere goes out addressed. Each
//! partition takes what it was handed in the order of the partitions that handed it, as
//! on threads, so the run is the run of P x T threads.

use crate::engine::Partition;
use crate::units::Ps;

/// What crosses between processes: the partitions that handed it and that take it.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Addressed<C> {
    from: u32,
    to: u32,
    handed: C,
}

pub struct Group<'a, P: Partition> {
    pub parts: &'a mut [P],
    /// The partition number of `parts[0]`; every process has `parts.len()` of them.
    first: usize,
    /// Scratch: what each of its partitions hands each partition of the run.
    outs: Vec<Vec<Vec<P::Crossing>>>,
    /// What each of its partitions was handed this window, with who handed it.
    pending: Vec<Vec<(u32, P::Crossing)>>,
    /// The group's tally from its partitions'.
    combine: fn(&[P::Tally]) -> P::Tally,
    /// Events its partitions handed each other.
    pub crossings: u64,
}

impl<'a, P: Partition> Group<'a, P> {
    /// The partitions `parts` of a run of `total`, numbered from `first`.
    pub fn new(
        parts: &'a mut [P],
        (first, total): (usize, usize),
        combine: fn(&[P::Tally]) -> P::Tally,
    ) -> Self {
        let n = parts.len();
        Group {
            parts,
            first,
            outs: (0..n)
                .map(|_| (0..total).map(|_| Vec::new()).collect())
                .collect(),
            pending: (0..n).map(|_| Vec::new()).collect(),
            combine,
            crossings: 0,
        }
    }
}

impl<P: Partition> Partition for Group<'_, P> {
    type Crossing = Addressed<P::Crossing>;
    type Tally = P::Tally;

    fn next_time(&self) -> Option<Ps> {
        self.parts.iter().filter_map(|p| p.next_time()).min()
    }

    fn run_until(&mut self, end: Ps, out: &mut [Vec<Self::Crossing>]) -> Result<(), String> {
        let results: Vec<Result<(), String>> = std::thread::scope(|s| {
            let mut work = self.parts.iter_mut().zip(self.outs.iter_mut());
            let mine = work.next();
            let others: Vec<_> = work
                .map(|(p, o)| s.spawn(move || p.run_until(end, o)))
                .collect();
            let mut all = vec![mine.map_or(Ok(()), |(p, o)| p.run_until(end, o))];
            for h in others {
                all.push(
                    h.join()
                        .unwrap_or_else(|_| Err("a partition's thread panicked".into())),
                );
            }
            all
        });
        results.into_iter().collect::<Result<Vec<()>, String>>()?;
        let (first, mine) = (self.first, self.parts.len());
        for (i, handed) in self.outs.iter_mut().enumerate() {
            let from = (first + i) as u32;
            for (to, mail) in handed.iter_mut().enumerate() {
                for h in mail.drain(..) {
                    if (first..first + mine).contains(&to) {
                        self.crossings += 1;
                        self.pending[to - first].push((from, h));
                    } else {
                        out[to / mine].push(Addressed {
                            from,
                            to: to as u32,
                            handed: h,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    fn receive(&mut self, from: &mut Vec<Self::Crossing>) {
        for a in from.drain(..) {
            self.pending[a.to as usize - self.first].push((a.from, a.handed));
        }
    }

    fn received(&mut self) {
        let mut batch = Vec::new();
        for (part, pending) in self.parts.iter_mut().zip(&mut self.pending) {
            // By partition that handed it, each one's in the order it handed them.
            pending.sort_by_key(|(from, _)| *from);
            let mut events = pending.drain(..).peekable();
            while let Some((from, h)) = events.next() {
                batch.push(h);
                if events.peek().is_none_or(|(next, _)| *next != from) {
                    part.receive(&mut batch);
                    batch.clear();
                }
            }
        }
    }

    fn tally(&self) -> Self::Tally {
        let tallies: Vec<P::Tally> = self.parts.iter().map(|p| p.tally()).collect();
        (self.combine)(&tallies)
    }
}
