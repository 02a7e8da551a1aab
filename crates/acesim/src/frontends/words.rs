//! Splitting a short ASCII line into words from bit masks of its bytes, eight bytes at a
//! time, with no branch on what each byte is: in the readers of schedules and GOAL files
//! (tens of millions of lines), a branch on each byte was guessed wrong at about every
//! word's edge (cachegrind: 37 % of a schedule run's mispredicted branches).

/// Lines shorter than this are split from masks (one bit a byte).
const SHORT_LINE: usize = 64;
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// `marks` that mark no byte (the first above the second).
pub const NO_MARKS: (u8, u8) = (1, 0);

/// The masks of a line shorter than `SHORT_LINE` bytes.
struct Masks {
    /// Bit i: byte i is a space (the ASCII characters `char::is_whitespace` accepts: tab
    /// to carriage return, and space), or past the line's end.
    space: u64,
    /// Bit i: byte i is not ASCII or is one of the bytes the caller marks.
    marked: u64,
}

/// The high bit of each byte of `x` (every byte ASCII) that is at least `n` (1 to 128):
/// `b + 128 - n` reaches 128 exactly then, and never carries into the next byte.
#[inline(always)]
fn at_least(x: u64, n: u8) -> u64 {
    x.wrapping_add((128 - n as u64) * ONES) & HIGHS
}

/// The high bit of each byte of `x` (every byte ASCII) from `lo` to `hi` (1 to 127).
#[inline(always)]
fn between(x: u64, lo: u8, hi: u8) -> u64 {
    at_least(x, lo) & !at_least(x, hi + 1)
}

/// Bit `i` of the result is the high bit of byte `i` of `m` (a mask of high bits).
#[inline(always)]
fn gather(m: u64) -> u64 {
    ((m >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

/// The 8 bytes of `bytes` from `at`, little-endian.
#[inline(always)]
fn load8(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// The last `bytes.len() % 8` bytes of `bytes` (not none), little-endian, zeros above,
/// read without a copy of variable length: a copy's jump on the length was guessed wrong
/// on most lines.
#[inline(always)]
fn tail(bytes: &[u8]) -> u64 {
    let (len, left) = (bytes.len(), bytes.len() % 8);
    let load4 = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes")) as u64;
    if len >= 8 {
        // The last 8 bytes of the line, the ones before the tail shifted out.
        load8(bytes, len - 8) >> (8 * (8 - left))
    } else if len >= 4 {
        // A line of 4 to 7 bytes: two loads that overlap on equal bytes.
        load4(0) | load4(len - 4) << (8 * (len - 4))
    } else {
        bytes.iter().rev().fold(0, |w, &b| w << 8 | b as u64)
    }
}

/// The masks of `bytes` (shorter than `SHORT_LINE`), marking the bytes from `marks.0` to
/// `marks.1` (ASCII, 1 to 127; none when the first is above the second).
#[inline(always)]
fn masks(bytes: &[u8], marks: (u8, u8)) -> Masks {
    debug_assert!(bytes.len() < SHORT_LINE);
    let mut m = Masks {
        space: !0u64 << bytes.len(),
        marked: 0,
    };
    let full = bytes.len() / 8;
    for k in 0..full {
        add_word(&mut m, load8(bytes, 8 * k), k, marks);
    }
    if !bytes.len().is_multiple_of(8) {
        add_word(&mut m, tail(bytes), full, marks);
    }
    m
}

/// Adds to `m` the masks of `x`, the line's `k`th word of 8 bytes.
#[inline(always)]
fn add_word(m: &mut Masks, x: u64, k: usize, marks: (u8, u8)) {
    let high = x & HIGHS;
    let x = x & !HIGHS;
    let blank = between(x, b'\t', b'\r') | between(x, b' ', b' ');
    let mark = if marks.0 <= marks.1 {
        between(x, marks.0, marks.1)
    } else {
        0
    };
    m.space |= gather(blank) << (8 * k);
    m.marked |= gather(high | mark) << (8 * k);
}

/// The words of `line` with the byte offset each starts at, in order, if the line is
/// shorter than `SHORT_LINE`, ASCII, and holds none of the bytes from `marks.0` to
/// `marks.1` (as `masks` takes them); else `None`, for the caller's general way.
#[inline(always)]
pub fn ascii_words(line: &str, marks: (u8, u8)) -> Option<impl Iterator<Item = (usize, &str)>> {
    if line.len() >= SHORT_LINE {
        return None;
    }
    let m = masks(line.as_bytes(), marks);
    if m.marked != 0 {
        return None;
    }
    Some(spans(m.space).map(move |(start, end)| {
        debug_assert!(start < end && end <= line.len());
        // SAFETY: the line is ASCII (`marked` has every non-ASCII byte), so every offset
        // is a character boundary, and `spans` gives start < end <= the line's length (a
        // word ends at a space or past the end, whose bits are set). A checked slice's
        // test of whether `end` is the line's end was guessed wrong on most words.
        (start, unsafe { line.get_unchecked(start..end) })
    }))
}

/// The words between the spaces of a `space` mask: (start, end) byte offsets, in order.
#[inline(always)]
fn spans(space: u64) -> impl Iterator<Item = (usize, usize)> {
    // A word starts where a byte that is no space follows a space (or the line's start),
    // and ends at the first space after.
    let before = (space << 1) | 1;
    let (mut starts, mut ends) = (!space & before, space & !before);
    std::iter::from_fn(move || {
        if starts == 0 {
            return None;
        }
        let span = (
            starts.trailing_zeros() as usize,
            ends.trailing_zeros() as usize,
        );
        starts &= starts - 1;
        ends &= ends - 1;
        Some(span)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every short line's masks say what each byte is, and its words are the ones
        /// `char::is_whitespace` separates.
        #[test]
        fn masks_and_words_are_the_bytes(
            line in prop::collection::vec(
                prop_oneof![Just(b' '), Just(b'\t'), Just(b'\r'), Just(b'\x0b'), Just(b'\x0c'), Just(b'a'),
                            Just(b'"'), Just(b'#'), Just(b'$'), Just(b'!'), Just(0xc3u8), Just(0x7fu8), Just(b'\x1f')],
                0..SHORT_LINE,
            )
        ) {
            let m = masks(&line, (b'"', b'#'));
            for (i, &b) in line.iter().enumerate() {
                prop_assert_eq!(m.space >> i & 1 == 1, (b as char).is_whitespace() && b.is_ascii());
                prop_assert_eq!(m.marked >> i & 1 == 1, !b.is_ascii() || b == b'"' || b == b'#');
            }
            prop_assert_eq!(m.space >> line.len(), !0u64 >> line.len());
            prop_assert_eq!(m.marked >> line.len(), 0);
            prop_assert_eq!(masks(&line, NO_MARKS).marked, m.marked & gather_high(&line));
            if line.is_ascii() {
                let text = String::from_utf8(line.clone()).expect("ASCII");
                let words: Vec<&str> = spans(m.space).map(|(s, e)| &text[s..e]).collect();
                prop_assert_eq!(&words, &text.split_whitespace().collect::<Vec<_>>());
                let unmarked: Option<Vec<&str>> =
                    ascii_words(&text, NO_MARKS).map(|w| w.map(|(_, w)| w).collect());
                prop_assert_eq!(unmarked, Some(words));
            }
            let text = String::from_utf8_lossy(&line);
            let marked = ascii_words(&text, (b'"', b'#')).is_some();
            prop_assert_eq!(marked, text.len() < SHORT_LINE && !text.bytes().any(|b| !b.is_ascii() || b == b'"' || b == b'#'));
        }
    }

    /// The bits of the non-ASCII bytes of `line`.
    fn gather_high(line: &[u8]) -> u64 {
        line.iter()
            .enumerate()
            .fold(0, |m, (i, &b)| m | u64::from(!b.is_ascii()) << i)
    }
}
