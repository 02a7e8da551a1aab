//! A large text of rank blocks read on threads: its head (up to the rank count) on this
//! thread, then the rest cut at lines that open a block into stretches of about equal
//! size, each read by its own reader side by side. The readers' outcomes come back in file
//! order; merging them, and finding the error one reader would have met first, is the
//! format's own business (`schedule::parts`, `goal::parts`).

use crate::error::Result;

/// A stretch smaller than this is not worth a thread (bytes): about 10 ms of reading
/// (`nn-1m`'s 327 MB schedule takes 2.6–3.8 s on one thread).
pub const MIN_STRETCH_BYTES: usize = 1 << 20;

/// How many stretches a text of `len` bytes is read in on up to `threads` threads, none
/// under `min_stretch` bytes (at least one).
pub fn stretch_count(len: usize, threads: usize, min_stretch: usize) -> usize {
    threads.min(len / min_stretch.max(1)).max(1)
}

/// A reader of one format that can take a stretch of its text alone.
pub trait StretchReader<'a>: Sized + Send {
    /// A reader of the whole text, from its first line.
    fn new(file: &'a str, text: &'a str) -> Self;
    /// A reader of a stretch past the head, which gave `ranks`.
    fn part(file: &'a str, text: &'a str, ranks: u32) -> Self;
    /// The rank count, once the head has given it.
    fn rank_count(&self) -> Option<u32>;
    /// Reads `stretch`, whole lines whose first is line `first_line`.
    fn read(&mut self, stretch: &'a str, first_line: usize) -> Result<()>;
}

/// What reading in stretches gave.
pub enum Stretches<R, O> {
    /// The text gave no rank count: the head reader, which read all of it.
    NoRanks(R),
    /// Each stretch's outcome, in file order: the first, the head reader's, and the others.
    Read { first: O, others: Vec<O> },
}

/// Reads `text` in up to `parts` stretches cut at lines `is_start` accepts, each by
/// `outcome(reader, stretch, first_line)` on its own thread (the first on this one, by the
/// reader that read the head). An error in the head is returned as it is.
pub fn read_in_stretches<'a, R, O>(
    file: &'a str,
    text: &'a str,
    parts: usize,
    is_start: fn(&str) -> bool,
    outcome: impl Fn(R, &'a str, usize) -> O + Sync,
) -> Result<Stretches<R, O>>
where
    R: StretchReader<'a>,
    O: Send,
{
    // Up to the rank count on this thread: every part needs it.
    let mut head = R::new(file, text);
    let (mut pos, mut line) = (0, 1);
    while head.rank_count().is_none() && pos < text.len() {
        let end =
            memchr::memchr(b'\n', &text.as_bytes()[pos..]).map_or(text.len(), |i| pos + i + 1);
        head.read(&text[pos..end], line)?;
        (pos, line) = (end, line + 1);
    }
    let Some(ranks) = head.rank_count() else {
        return Ok(Stretches::NoRanks(head));
    };
    let starts: Vec<usize> = std::iter::once(pos)
        .chain(cuts(text, pos, parts, is_start))
        .collect();
    let first_lines = line_numbers(text, &starts, line);
    let stretch = |k: usize| &text[starts[k]..starts.get(k + 1).copied().unwrap_or(text.len())];
    let outcome = &outcome;
    let (first, others) = std::thread::scope(|s| {
        let others: Vec<_> = (1..starts.len())
            .map(|k| {
                let (stretch, first_line) = (stretch(k), first_lines[k]);
                s.spawn(move || outcome(R::part(file, text, ranks), stretch, first_line))
            })
            .collect();
        let first = outcome(head, stretch(0), first_lines[0]);
        let others = others
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect();
        (first, others)
    });
    Ok(Stretches::Read { first, others })
}

/// Where a text read on threads is cut after byte `from`: at lines `is_start` accepts (each
/// the first line of a stretch a reader can take alone), near equal shares of the text after
/// `from`, in order. Fewer than `parts - 1` cuts where such lines are scarce.
pub fn cuts(text: &str, from: usize, parts: usize, is_start: impl Fn(&str) -> bool) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut cuts: Vec<usize> = Vec::new();
    for k in 1..parts {
        let target = from + (text.len() - from) * k / parts;
        let mut at = match target {
            t if t == 0 || bytes[t - 1] == b'\n' => t,
            t => match memchr::memchr(b'\n', &bytes[t..]) {
                Some(i) => t + i + 1,
                None => break,
            },
        };
        while at < text.len() {
            let end = memchr::memchr(b'\n', &bytes[at..]).map_or(text.len(), |i| at + i);
            let line = &text[at..end];
            if is_start(line.strip_suffix('\r').unwrap_or(line)) {
                break;
            }
            at = end + 1;
        }
        if at < text.len() && at > cuts.last().copied().unwrap_or(from) {
            cuts.push(at);
        }
    }
    cuts
}

/// The line numbers of the bytes `starts` (line starts, in order), the first being line
/// `first_line`.
pub fn line_numbers(text: &str, starts: &[usize], first_line: usize) -> Vec<usize> {
    let mut numbers = Vec::with_capacity(starts.len());
    let mut line = first_line;
    for (k, &start) in starts.iter().enumerate() {
        if k > 0 {
            line += memchr::memchr_iter(b'\n', &text.as_bytes()[starts[k - 1]..start]).count();
        }
        numbers.push(line);
    }
    numbers
}
