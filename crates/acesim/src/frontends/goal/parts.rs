//! A large GOAL file read on threads. After `num_ranks N` the text is cut at `rank R {`
//! lines into stretches of about equal size, each read by its own reader; the first reader
//! then takes in the others' blocks in order. Rank blocks are independent (labels are per
//! rank), so the only checks across stretches are a rank's second block and a block left
//! open. The error reported is the one a single reader would have met first.

use crate::error::{Error, Result};
use crate::frontends::goal::read::Reader;
use crate::frontends::goal::text::blank_block_comments;
use crate::frontends::stretches::{
    read_in_stretches, stretch_count, StretchReader, Stretches, MIN_STRETCH_BYTES,
};
use crate::program::ops::Program;

/// Reads a GOAL file on up to `threads` threads: the same program, or the same first
/// error, on any number of threads.
pub fn parse_on(file: &str, text: &str, threads: usize) -> Result<Program> {
    parse(file, text, threads, MIN_STRETCH_BYTES)
}

/// Reads `text` on up to `threads` threads, in stretches of at least `min_part` bytes.
fn parse(file: &str, text: &str, threads: usize, min_part: usize) -> Result<Program> {
    let text = blank_block_comments(file, text)?;
    let text: &str = &text;
    let parts = stretch_count(text.len(), threads, min_part);
    match read_in_stretches(file, text, parts, is_rank_line, Outcome::of)? {
        Stretches::NoRanks(head) => head.finish(),
        Stretches::Read { first, others } => merge(first, others),
    }
}

/// A stretch read: its reader, and the error that stopped it.
struct Outcome<'a> {
    reader: Reader<'a>,
    failure: Option<Error>,
    first_line: usize,
}

impl<'a> Outcome<'a> {
    fn of(mut reader: Reader<'a>, stretch: &'a str, first_line: usize) -> Self {
        let failure = reader.read(stretch, first_line).err();
        Outcome {
            reader,
            failure,
            first_line,
        }
    }
}

/// The stretches' blocks taken in by the first, each stretch's blocks checked against those
/// before it; or the first error in the file.
fn merge(first: Outcome, others: Vec<Outcome>) -> Result<Program> {
    let mut base = first.reader;
    let mut failure = first.failure;
    for next in others {
        if let Some(e) = failure {
            return Err(e);
        }
        // A stretch starts at a `rank` line, an error inside an open block.
        if base.in_block() {
            return Err(base.rank_inside_block(next.first_line));
        }
        for s in &next.reader.starts {
            if base.mark_seen(s.rank) {
                return Err(base.second_block(s.line, s.col, s.rank));
            }
        }
        failure = next.failure;
        base.absorb(next.reader);
    }
    match failure {
        Some(e) => Err(e),
        None => base.finish(),
    }
}

/// A line whose first word is `rank`: every reader takes it as the start of a block (or,
/// inside one, as the error of a block left open).
fn is_rank_line(line: &str) -> bool {
    let line = line.trim_start_matches([' ', '\t']);
    line.starts_with("rank ") || line.starts_with("rank\t")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontends::goal::read;
    use proptest::prelude::*;

    /// Lines of a rank block that read well: operations, dependencies, comments.
    const GOOD: &[&str] = &[
        "l1: calc 100",
        "l2: send 8b to 1 tag 2",
        "l3: recv 8b from 0 tag 2",
        "l4: recv 8b from -1 tag -1 cpu 1",
        "l2 requires l1",
        "l3 irequires l1",
        "# a comment",
        "/* a block\ncomment */ l5: calc 1",
        "",
    ];

    /// Lines that are wrong where they stand: undefined labels, a second definition, a
    /// cycle, unknown operations, ranks out of range, `rank` and `}` out of place.
    const BAD: &[&str] = &[
        "l1: calc 1",
        "l9 requires l1",
        "l1 requires l8",
        "l1 requires l2",
        "l6: jump 1",
        "l7: send 8b to 9 tag 0",
        "rank 1 {",
        "rank 7 {",
        "}",
        "num_ranks 3",
        "/* never closed",
    ];

    /// GOAL files for 3 ranks, mostly good: blocks of distinct ranks or not, each opened
    /// with `rank R {` and mostly closed, lines of `GOOD` with a line of `BAD` now and then.
    fn goal() -> impl Strategy<Value = String> {
        let line = prop_oneof![
            12 => proptest::sample::select(GOOD),
            1 => proptest::sample::select(BAD),
        ];
        let block = (0u32..3, proptest::collection::vec(line, 0..6), 0u8..8);
        let blocks = proptest::collection::vec(block, 0..6);
        (blocks, any::<bool>(), any::<bool>()).prop_map(|(blocks, distinct, crlf)| {
            let end = if crlf { "\r\n" } else { "\n" };
            let mut text = format!("// made{end}num_ranks 3{end}");
            for (i, (rank, lines, close)) in blocks.into_iter().enumerate() {
                let rank = if distinct { i as u32 % 3 } else { rank };
                text += &format!("rank {rank} {{{end}");
                for l in lines {
                    text += &l.replace('\n', end);
                    text += end;
                }
                if close > 0 {
                    text += &format!("}}{end}");
                }
            }
            text
        })
    }

    fn outcome(r: Result<Program>) -> String {
        match r {
            Ok(p) => format!("{:?}\n{:?}", p.ops, p.deps),
            Err(e) => e.to_string(),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Read in parts of any size, a GOAL file gives the program, or the first error,
        /// of one reader.
        #[test]
        fn parts_read_as_one_reader(text in goal(), threads in 2usize..6) {
            let one = outcome(read::parse("g.goal", &text));
            prop_assert_eq!(&outcome(parse("g.goal", &text, threads, 1)), &one);
            prop_assert_eq!(&outcome(parse("g.goal", &text, threads, 16)), &one);
        }
    }

    /// A file past the size threads are worth: the same program on 1 and 3 threads, read
    /// in 3 stretches.
    #[test]
    fn a_large_goal_file_reads_alike_on_threads() {
        let ranks = 16_000;
        let mut text = format!("num_ranks {ranks}\n");
        for r in 0..ranks {
            let next = (r + 1) % ranks;
            let prev = (r + ranks - 1) % ranks;
            text += &format!("rank {r} {{\nc: calc 10\ns: send 4096b to {next} tag 1\nr: recv 4096b from {prev} tag 1\ns requires c\nr irequires c\nl: calc 5 cpu 1\nl requires r\nl requires s\n}}\n");
        }
        assert!(text.len() > 2 * MIN_STRETCH_BYTES);
        let from = text.find("rank 0").unwrap_or(0);
        let cuts = crate::frontends::stretches::cuts(&text, from, 3, is_rank_line);
        assert_eq!(cuts.len(), 2);
        let one = outcome(read::parse("g.goal", &text));
        assert!(!one.contains("error"), "{one}");
        assert_eq!(outcome(parse_on("g.goal", &text, 3)), one);
    }

    #[test]
    fn rank_lines_are_those_a_reader_opens_a_block_at() {
        assert!(is_rank_line("rank 12 {"));
        assert!(is_rank_line("  rank\t3 {"));
        assert!(!is_rank_line("ranks 4"));
        assert!(!is_rank_line("l1: rank 3"));
        assert!(!is_rank_line("rank"));
    }
}
