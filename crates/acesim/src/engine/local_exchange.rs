//! An [`Exchange`] between threads of one process: the processes of a run across
//! processes played by threads, so that tests (and machines without MPI) run the code
//! path of `mpirun` exactly, transport aside.

use crate::engine::Exchange;
use std::collections::VecDeque;
use std::sync::{Arc, Barrier, Condvar, Mutex, PoisonError};

/// One of `n` members of a group made by [`LocalExchange::group`], each used on a thread
/// of its own.
pub struct LocalExchange {
    me: usize,
    shared: Arc<Slots>,
}

struct Slots {
    n: usize,
    /// `mail[from * n + to]`: what `from` sent `to` in the current exchange.
    mail: Vec<Mutex<Vec<u8>>>,
    barrier: Barrier,
    /// `queues[from * n + to]`: what `from` sent `to` with `send`, not yet received.
    queues: Vec<(Mutex<VecDeque<Vec<u8>>>, Condvar)>,
}

impl LocalExchange {
    /// The `n` members of a new group, by rank.
    pub fn group(n: usize) -> Vec<LocalExchange> {
        let shared = Arc::new(Slots {
            n,
            mail: (0..n * n).map(|_| Mutex::new(Vec::new())).collect(),
            barrier: Barrier::new(n),
            queues: (0..n * n).map(|_| Default::default()).collect(),
        });
        (0..n)
            .map(|me| LocalExchange {
                me,
                shared: shared.clone(),
            })
            .collect()
    }
}

impl Exchange for LocalExchange {
    fn me(&self) -> usize {
        self.me
    }

    fn count(&self) -> usize {
        self.shared.n
    }

    fn all_to_all(&self, out: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let s = &*self.shared;
        for (to, bytes) in out.into_iter().enumerate() {
            *s.mail[self.me * s.n + to]
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = bytes;
        }
        s.barrier.wait();
        let got = (0..s.n)
            .map(|from| {
                std::mem::take(
                    &mut *s.mail[from * s.n + self.me]
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner),
                )
            })
            .collect();
        // Nobody writes the next exchange's mail before everyone took this one's.
        s.barrier.wait();
        got
    }

    fn all_gather(&self, mine: Vec<u8>) -> Vec<Vec<u8>> {
        self.all_to_all(vec![mine; self.shared.n])
    }

    fn send(&self, to: usize, bytes: &[u8]) {
        let (queue, ready) = &self.shared.queues[self.me * self.shared.n + to];
        queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_back(bytes.to_vec());
        ready.notify_one();
    }

    fn receive(&self, from: usize) -> Vec<u8> {
        let (queue, ready) = &self.shared.queues[from * self.shared.n + self.me];
        let mut q = queue.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(bytes) = q.pop_front() {
                return bytes;
            }
            q = ready.wait(q).unwrap_or_else(PoisonError::into_inner);
        }
    }
}
