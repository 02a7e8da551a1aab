//! Result rows made on the run's threads: a million ranks' rows or eight million links'
//! are each made apart from the others, and land in index order whatever the count.

use rayon::prelude::*;

/// Fewer rows than this are made on the calling thread: starting threads costs more.
const THREADS_FROM: usize = 65_536;

/// Rows a thread takes at a time.
const CHUNK: usize = 8_192;

/// `make(0), make(1), …, make(len - 1)`, on up to `threads` threads (on this one alone
/// for 1, or for fewer than `THREADS_FROM` rows).
pub(crate) fn rows_on<T: Send>(
    len: usize,
    threads: usize,
    make: impl Fn(usize) -> T + Sync + Send,
) -> Vec<T> {
    if threads > 1 && len >= THREADS_FROM {
        // A pool the system cannot start: the rows are made here.
        if let Ok(pool) = rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
            // An indexed iterator's rows are written in place, in index order.
            return pool.install(|| {
                (0..len)
                    .into_par_iter()
                    .with_min_len(CHUNK)
                    .map(&make)
                    .collect()
            });
        }
    }
    (0..len).map(make).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_in_index_order_on_any_number_of_threads() {
        for len in [0, 1, THREADS_FROM - 1, THREADS_FROM, 3 * THREADS_FROM + 17] {
            let one = rows_on(len, 1, |i| (i as u64) * 7 + 1);
            assert_eq!(one.len(), len);
            assert!(one.iter().enumerate().all(|(i, &v)| v == i as u64 * 7 + 1));
            for threads in [2, 3, 8] {
                assert_eq!(rows_on(len, threads, |i| (i as u64) * 7 + 1), one);
            }
        }
    }
}
