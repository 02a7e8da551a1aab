//! Long outputs formatted on threads and written in order: rows cut in chunks, worker `k`
//! of `threads` formatting chunks `k`, `k + threads`, ... into text while the calling
//! thread writes the finished ones (the large JSON, `json_threads`; the links' CSV,
//! `tables`). The text is the same as one thread's, whatever the count.

use std::io::Write;
use std::ops::Range;
use std::sync::mpsc::{sync_channel, Receiver};

/// How a chunk of rows (a range of their indices) becomes text.
pub(crate) type Format<'a> = &'a (dyn Fn(Range<usize>) -> std::io::Result<Vec<u8>> + Sync);

/// Writes rows `0..len` into `w`, `chunk` at a time, formatted by `format` on `threads`
/// threads (on this one alone for 1).
pub(crate) fn write_in_chunks(
    w: &mut impl Write,
    len: usize,
    (threads, chunk): (usize, usize),
    format: Format<'_>,
) -> std::io::Result<()> {
    let chunks = len.div_ceil(chunk);
    let range = |c: usize| c * chunk..((c + 1) * chunk).min(len);
    if threads <= 1 || chunks <= 1 {
        for c in 0..chunks {
            w.write_all(&format(range(c))?)?;
        }
        return Ok(());
    }
    std::thread::scope(|s| {
        let receivers: Vec<Receiver<std::io::Result<Vec<u8>>>> = (0..threads.min(chunks))
            .map(|k| {
                // One chunk ahead a worker: the text held at once stays a few chunks.
                let (send, receive) = sync_channel(1);
                // A worker the system cannot start leaves its channel closed: the writer
                // reports it.
                let _ = std::thread::Builder::new().spawn_scoped(s, move || {
                    for c in (k..chunks).step_by(threads) {
                        // A closed channel: the writer stopped on an error.
                        if send.send(format(range(c))).is_err() {
                            return;
                        }
                    }
                });
                receive
            })
            .collect();
        for c in 0..chunks {
            let text = receivers[c % receivers.len()]
                .recv()
                .map_err(|_| std::io::Error::other("a worker formatting the output stopped"))??;
            w.write_all(&text)?;
        }
        Ok(())
    })
}
