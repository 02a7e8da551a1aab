//! A large schedule read on threads. After `ranks N` the text is cut at `rank R` lines into
//! stretches of about equal size, each read by its own reader; the first reader then takes
//! in the others' blocks in order, renumbering what they named (`Reader::absorb`). The
//! error reported is the one a single reader would have met first.

use crate::error::{Error, Result};
use crate::frontends::schedule::line::At;
use crate::frontends::schedule::read::{self, Reader};
use crate::frontends::stretches::{
    read_in_stretches, stretch_count, StretchReader, Stretches, MIN_STRETCH_BYTES,
};
use crate::program::ops::Program;
use std::sync::Arc;

/// Reads a schedule on up to `threads` threads: a large one's rank blocks are split into
/// stretches read side by side. The same program, or the same first error, on any number
/// of threads.
pub fn parse_on(file: &str, text: &str, threads: usize) -> Result<Program> {
    parse(file, text, threads, MIN_STRETCH_BYTES)
}

/// `parse_on`, reading whole only the blocks of the ranks `only` marks, given the rank
/// count (`Reader::only`; `None`: every rank's); the program is then `partial`. A schedule
/// whose rank count cannot be read, that has `repeat` blocks, or whose partial reading
/// fails is read whole: its error is the whole reading's first.
pub fn parse_only(
    file: &str,
    text: &str,
    threads: usize,
    only: &dyn Fn(u32) -> Option<Vec<bool>>,
) -> Result<Program> {
    let own = rank_count(file, text).and_then(only);
    let Some(own) = own else {
        return parse_on(file, text, threads);
    };
    let own: Arc<[bool]> = own.into();
    match read_own(file, text, threads, MIN_STRETCH_BYTES, &own) {
        // A loop's operations stream from the ranks' whole lists.
        Ok(p) if p.stream.is_none() => Ok(p),
        _ => parse_on(file, text, threads),
    }
}

/// The rank count of `ranks N`, if the schedule's head gives one.
fn rank_count(file: &str, text: &str) -> Option<u32> {
    let mut head = Reader::new(file, text);
    for (i, line) in crate::frontends::lines::lines(text).enumerate() {
        if let Some(ranks) = head.rank_count() {
            return Some(ranks);
        }
        head.read(line, i + 1).ok()?;
    }
    head.rank_count()
}

/// Reads `text` on up to `threads` threads, in stretches of at least `min_part` bytes.
fn parse(file: &str, text: &str, threads: usize, min_part: usize) -> Result<Program> {
    let parts = stretch_count(text.len(), threads, min_part);
    if parts < 2 {
        return read::parse(file, text);
    }
    match read_in_stretches(file, text, parts, is_rank_line, Outcome::of)? {
        Stretches::NoRanks(head) => head.finish(),
        Stretches::Read { first, others } => merge(first, others),
    }
}

/// `parse`, reading whole only the blocks of the ranks `own` marks.
fn read_own<'a>(
    file: &'a str,
    text: &'a str,
    threads: usize,
    min_part: usize,
    own: &Arc<[bool]>,
) -> Result<Program> {
    let parts = stretch_count(text.len(), threads, min_part);
    if parts < 2 {
        let mut reader = Reader::new(file, text).only(own.clone());
        reader.read(text, 1)?;
        return reader.finish();
    }
    let outcome = |reader: Reader<'a>, stretch: &'a str, first_line: usize| {
        Outcome::of(reader.only(own.clone()), stretch, first_line)
    };
    match read_in_stretches(file, text, parts, is_rank_line, outcome)? {
        Stretches::NoRanks(head) => head.finish(),
        Stretches::Read { first, others } => merge(first, others),
    }
}

/// Where the reading of a part stopped.
struct Failure {
    error: Error,
    /// At the part's end (a block left open), which a single reader meets on the next
    /// part's first line, after that line's own checks.
    at_end: bool,
}

struct Outcome<'a> {
    reader: Reader<'a>,
    failure: Option<Failure>,
}

impl<'a> Outcome<'a> {
    fn of(mut reader: Reader<'a>, stretch: &'a str, first_line: usize) -> Self {
        let failure = match reader.read(stretch, first_line) {
            Err(error) => Some(Failure {
                error,
                at_end: false,
            }),
            Ok(()) => reader.end_part().err().map(|error| Failure {
                error,
                at_end: true,
            }),
        };
        Outcome { reader, failure }
    }

    fn starts(&self) -> &[read::BlockStart] {
        self.reader.starts.as_deref().unwrap_or_default()
    }
}

/// The parts' blocks taken in by the first, each part's blocks checked against those before
/// it (a rank has one block); or the first error in the file.
fn merge(first: Outcome, others: Vec<Outcome>) -> Result<Program> {
    let mut outcomes = others.into_iter();
    let mut base = first.reader;
    let mut failure = first.failure;
    loop {
        let next = outcomes.next();
        if let Some(f) = failure {
            if let (true, Some(next)) = (f.at_end, next) {
                if let Some(e) = first_line_error(&mut base, next) {
                    return Err(e);
                }
            }
            return Err(f.error);
        }
        let Some(next) = next else {
            return base.finish();
        };
        for s in next.starts() {
            if base.mark_seen(s.rank) {
                return Err(second_block(&base, s));
            }
        }
        failure = next.failure;
        base.absorb(next.reader);
    }
}

/// The error a single reader meets on the first line of part `next` (a `rank R` line):
/// its own, or a second block of its rank.
fn first_line_error(base: &mut Reader, next: Outcome) -> Option<Error> {
    match (next.starts().first().copied(), next.failure) {
        (None, Some(f)) => Some(f.error),
        (Some(s), _) if base.mark_seen(s.rank) => Some(second_block(base, &s)),
        _ => None,
    }
}

fn second_block(base: &Reader, s: &read::BlockStart) -> Error {
    let at = At {
        file: base.file,
        line: s.line,
    };
    base.second_block(at, s.col, s.rank)
}

/// `rank R` alone on its line: a line every reader takes as the start of a block.
fn is_rank_line(line: &str) -> bool {
    line.strip_prefix("rank ")
        .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontends::stretches::cuts;
    use proptest::prelude::*;

    /// Pieces of rank blocks that read well: requests, lists, regions, loops,
    /// collectives, communicators, source locations, comments.
    const GOOD: &[&str] = &[
        "compute 1us",
        "put 1 8 tag=2",
        "put 0 4 handle=h\ncomplete h",
        "get 1 16 handle=g @a.c:4\ncomplete g @b.c:7",
        "isend 1 8 req=s\nirecv any 8 req=r tag=any\nwaitall s r",
        "isend 1 8 req=s\nwaitany s",
        "sendrecv 1 8 0 8",
        "region_begin x\nregion_begin y @b.c:1\nregion_end y\nregion_end x",
        "region_begin y\nregion_end y",
        "repeat 3 {\nsendrecv 2 8 1 8\n}",
        "allreduce 8",
        "bcast 64 root=1 algo=binomial",
        "barrier",
        "alltoall 8 comm=world",
        "# a comment",
        "",
    ];

    /// Lines that are wrong where they stand, or `rank R` lines in a block.
    const BAD: &[&str] = &[
        "put 9 8",
        "jump 1",
        "complete h",
        "region_end x",
        "region_begin z",
        "repeat 2 {",
        "}",
        "comm_split 0 1 as=c",
        "rank 1",
        "rank 7",
        "rank x",
        "ranks 3",
    ];

    /// Schedules for 3 ranks, mostly good: blocks of distinct ranks or not, lines of `GOOD`
    /// with a line of `BAD` now and then.
    fn schedule() -> impl Strategy<Value = String> {
        let line = prop_oneof![
            12 => proptest::sample::select(GOOD),
            1 => proptest::sample::select(BAD),
        ];
        let block = (0u32..3, proptest::collection::vec(line, 0..6));
        let blocks = proptest::collection::vec(block, 0..6);
        (blocks, any::<bool>(), any::<bool>()).prop_map(|(blocks, distinct, crlf)| {
            let end = if crlf { "\r\n" } else { "\n" };
            let mut text = format!("# made\nranks 3{end}");
            for (i, (rank, lines)) in blocks.into_iter().enumerate() {
                let rank = if distinct { i as u32 % 3 } else { rank };
                text += &format!("rank {rank}{end}");
                for l in lines {
                    text += &l.replace('\n', end);
                    text += end;
                }
            }
            text
        })
    }

    fn outcome(r: Result<Program>) -> String {
        match r {
            Ok(p) => format!("{p:?}\n{:?}", crate::frontends::schedule::write(&p)),
            Err(e) => e.to_string(),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Read in parts of any size, a schedule gives the program, or the first error, of
        /// one reader.
        #[test]
        fn parts_read_as_one_reader(text in schedule(), threads in 2usize..6) {
            let one = outcome(read::parse("s.sched", &text));
            prop_assert_eq!(&outcome(parse("s.sched", &text, threads, 1)), &one);
            prop_assert_eq!(&outcome(parse("s.sched", &text, threads, 16)), &one);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        /// A partial reading, by one reader or in parts, keeps its own ranks' operations as
        /// a whole reading has them, and numbers what ties ranks together (collective
        /// calls, regions, files, request lists) as it does; a schedule that fails, or has
        /// loops, is read whole. A line wrong in another rank's block may pass unread: that
        /// rank's reader finds it (the run then reads the program whole).
        #[test]
        fn a_partial_reading_keeps_its_ranks_and_the_whole_numbering(
            text in schedule(),
            mask in 0u8..8,
            threads in 2usize..4,
        ) {
            let own: Vec<bool> = (0..3).map(|r| mask >> r & 1 == 1).collect();
            let whole = read::parse("s.sched", &text);
            let only = |_: u32| Some(own.clone());
            let part = parse_only("s.sched", &text, 1, &only);
            let Ok(w) = whole.as_ref().map_err(|e| e.to_string()) else {
                match part {
                    Ok(p) => prop_assert!(p.partial && own.contains(&false)),
                    part => prop_assert_eq!(outcome(part), outcome(whole)),
                }
                return Ok(());
            };
            if w.stream.is_some() {
                prop_assert_eq!(outcome(part), outcome(whole));
                return Ok(());
            }
            let mask: Arc<[bool]> = own.clone().into();
            let in_parts = read_own("s.sched", &text, threads, 1, &mask);
            for p in [part, in_parts] {
                let p = p.map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert!(p.partial);
                for r in (0..3).filter(|&r| own[r]) {
                    prop_assert_eq!(format!("{:?}", p.ops[r]), format!("{:?}", w.ops[r]));
                    prop_assert_eq!(
                        (p.handles[r], p.comm_handles[r]),
                        (w.handles[r], w.comm_handles[r])
                    );
                }
                prop_assert_eq!(format!("{:?}", p.coll_calls), format!("{:?}", w.coll_calls));
                prop_assert_eq!(&p.regions, &w.regions);
                prop_assert_eq!(&p.files, &w.files);
                prop_assert_eq!(p.req_lists.len(), w.req_lists.len());
            }
        }
    }

    /// A schedule past the size threads are worth: the same program on 1 and 3 threads.
    #[test]
    fn a_large_schedule_reads_alike_on_threads() {
        let ranks = 16_000;
        let mut text = format!("ranks {ranks}\n");
        for r in 0..ranks {
            let next = (r + 1) % ranks;
            text += &format!("rank {r}\nregion_begin step\nput {next} 4KB tag=1 @n.c:{r}\nsendrecv {next} 8 any 8\nallreduce 8\nrepeat 2 {{\nisend {next} 8 req=a\nwait a\n}}\npoll 1\nregion_end step\n");
        }
        assert!(text.len() > 2 * MIN_STRETCH_BYTES);
        assert_eq!(cuts(&text, 0, 3, is_rank_line).len(), 2);
        let one = outcome(read::parse("s.sched", &text));
        assert_eq!(outcome(parse_on("s.sched", &text, 3)), one);
    }

    #[test]
    fn cuts_fall_on_rank_lines_in_order() {
        let text = "ranks 4\nrank 0\nput 1 8\nrank 1\nput 2 8\nrank 2\nput 3 8\nrank 3\nput 0 8\n";
        let from = "ranks 4\n".len();
        let cuts = cuts(text, from, 4, is_rank_line);
        assert!(!cuts.is_empty());
        assert!(cuts.windows(2).all(|w| w[0] < w[1]));
        for c in cuts {
            assert!(text[c..].starts_with("rank "), "{c}");
        }
        assert!(is_rank_line("rank 12"));
        assert!(!is_rank_line("rank 1 @a.c:3"));
        assert!(!is_rank_line("ranks 4"));
        assert!(!is_rank_line("rank "));
    }
}
