//! The JSON summary written on several threads: the same bytes as `Results::write_json`.
//!
//! A million-rank run's JSON holds millions of rows (2.5 GB for `nn-1m`), and serde_json
//! formats them at about 350 MB/s on one core. Here the long lists (`per_rank`,
//! `operations`, `receives`) are formatted in chunks, each on a worker thread, while this
//! thread writes the finished chunks in order: the rest of the document (the "skeleton",
//! the long lists written empty) is formatted by serde_json as it is, and the rows are
//! spliced into it where the lists open.

use super::chunks::write_in_chunks;
use super::report::Results;
use super::skeleton;
use serde::Serialize;
use std::io::Write;

/// Rows of the long lists below which one thread writes it all.
const THREADS_FROM: usize = 1 << 16;
/// Rows a chunk: a few megabytes of text.
const CHUNK: usize = 8192;
/// Indentation of a row of a top-level list (pretty JSON, two spaces a level).
const ROW_INDENT: &[u8] = b"    ";

/// A serializer of one row into a chunk's text.
type Row<'a> = serde_json::Serializer<&'a mut Vec<u8>, Nested>;

/// One long list: its key at the top level, its length, and how to write its row `i`.
struct List<'a> {
    key: &'static str,
    len: usize,
    write_row: &'a (dyn Fn(usize, &mut Row<'_>) -> serde_json::Result<()> + Sync),
}

impl Results {
    /// `write_json` with the long lists formatted on `threads` threads (1: `write_json`).
    /// The bytes are the same on any number.
    pub fn write_json_on(&self, w: impl Write, threads: usize) -> std::io::Result<()> {
        self.write_json_chunked(w, threads, CHUNK, THREADS_FROM)
    }

    /// `write_json_on` with `chunk` rows a chunk, on threads from `from` rows (tests make
    /// them small).
    pub(crate) fn write_json_chunked(
        &self,
        w: impl Write,
        threads: usize,
        chunk: usize,
        from: usize,
    ) -> std::io::Result<()> {
        let rows = self.per_rank.len() + self.operations.len() + self.receives.len();
        if threads <= 1 || rows < from {
            return self.write_json(w);
        }
        let skeleton = skeleton::formatting(|| serde_json::to_vec_pretty(self))
            .map_err(std::io::Error::other)?;
        let per_rank = |i: usize, w: &mut Row<'_>| self.per_rank[i].serialize(w);
        let operations = |i: usize, w: &mut Row<'_>| self.operations.row(i).serialize(w);
        let receives = |i: usize, w: &mut Row<'_>| self.receives.row(i).serialize(w);
        let lists = [
            List {
                key: "per_rank",
                len: self.per_rank.len(),
                write_row: &per_rank,
            },
            List {
                key: "operations",
                len: self.operations.len(),
                write_row: &operations,
            },
            List {
                key: "receives",
                len: self.receives.len(),
                write_row: &receives,
            },
        ];
        let mut w = std::io::BufWriter::with_capacity(1 << 20, w);
        let mut rest = &skeleton[..];
        for list in lists.iter().filter(|l| l.len > 0) {
            // The list's key opens a line at the top level of the document.
            let marker = format!("\n  \"{}\": [", list.key);
            let at = find(rest, marker.as_bytes()).ok_or_else(|| {
                std::io::Error::other(format!("no {} in the JSON's skeleton", list.key))
            })? + marker.len();
            w.write_all(&rest[..at])?;
            w.write_all(b"\n")?;
            let format = |range| format_chunk(list, range);
            write_in_chunks(&mut w, list.len, (threads, chunk), &format)?;
            w.write_all(b"  ")?;
            rest = &rest[at..];
        }
        w.write_all(rest)?;
        w.flush()
    }
}

/// Rows `range` of `list`, as they stand in the document.
fn format_chunk(list: &List<'_>, range: std::ops::Range<usize>) -> std::io::Result<Vec<u8>> {
    let mut text = Vec::with_capacity(range.len() * 512);
    for i in range {
        text.extend_from_slice(ROW_INDENT);
        let mut row = serde_json::Serializer::with_formatter(&mut text, Nested::row());
        (list.write_row)(i, &mut row).map_err(std::io::Error::other)?;
        text.extend_from_slice(if i + 1 < list.len { b",\n" } else { b"\n" });
    }
    Ok(text)
}

/// serde_json's pretty layout (two spaces a level) from a depth on: a row formatted on
/// its own as it stands in a top-level list, two levels down.
pub(crate) struct Nested {
    level: usize,
    has_value: bool,
}

impl Nested {
    fn row() -> Nested {
        Nested {
            level: 2,
            has_value: false,
        }
    }

    fn indent<W: ?Sized + Write>(&self, w: &mut W) -> std::io::Result<()> {
        for _ in 0..self.level {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        self.level -= 1;
        if self.has_value {
            w.write_all(b"\n")?;
            self.indent(w)?;
        }
        w.write_all(bracket)
    }

    fn item<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        self.indent(w)
    }
}

impl serde_json::ser::Formatter for Nested {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.item(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.item(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Where `needle` first starts in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use crate::frontends::schedule;
    use crate::{simulate, MachineSource};

    /// A run with ranks, puts, messages and receives: `ranks` ranks in a ring, each
    /// putting to and sending to the next (a receive each).
    fn results(ranks: u32) -> crate::Results {
        let m = MachineSource::from_text("m.toml", "[topology]\nkind=\"torus\"\ndims=[4,4]\n")
            .load()
            .unwrap();
        let mut text = format!("ranks {ranks}\n");
        for r in 0..ranks {
            let (next, prev) = ((r + 1) % ranks, (r + ranks - 1) % ranks);
            text += &format!(
                "rank {r}\nput {next} 64 tag=1 handle=h\nsend {next} 100 tag=2\nrecv {prev} 100 tag=2\npoll 1\ncomplete h\n"
            );
        }
        simulate(&m, schedule::parse("t.sched", &text).unwrap()).unwrap()
    }

    fn on(r: &crate::Results, threads: usize, chunk: usize) -> Vec<u8> {
        let mut out = Vec::new();
        r.write_json_chunked(&mut out, threads, chunk, 0).unwrap();
        out
    }

    #[test]
    fn the_json_on_threads_is_the_same_bytes() {
        for ranks in [1, 2, 7, 16] {
            let r = results(ranks);
            let mut one = Vec::new();
            r.write_json(&mut one).unwrap();
            assert!(r.operations.len() == ranks as usize * 2 && r.receives.len() == ranks as usize);
            // Chunks of one row, of a few, ending on a list's end or not, more threads
            // than chunks.
            for (threads, chunk) in [(2, 1), (2, 3), (3, 2), (4, 7), (8, 100), (2, 16)] {
                assert_eq!(
                    String::from_utf8(on(&r, threads, chunk)).unwrap(),
                    String::from_utf8(one.clone()).unwrap(),
                    "{ranks} ranks, {threads} threads, chunks of {chunk}"
                );
            }
        }
    }

    #[test]
    fn a_list_left_empty_stays_empty() {
        let mut r = results(4);
        r.operations = crate::results::Operations::new(Vec::new());
        let mut one = Vec::new();
        r.write_json(&mut one).unwrap();
        assert!(String::from_utf8_lossy(&one).contains("\"operations\": [],"));
        assert_eq!(on(&r, 2, 1), one);
    }

    #[test]
    fn a_writer_that_fails_stops_the_workers() {
        struct Full(usize);
        impl std::io::Write for Full {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                if self.0 < buf.len() {
                    return Err(std::io::Error::other("disk full"));
                }
                self.0 -= buf.len();
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let r = results(16);
        // The error comes back (no hang, no panic) wherever the writer fails.
        for room in [0, 100, 2000, 5000] {
            let e = r.write_json_chunked(Full(room), 2, 1, 0).unwrap_err();
            assert_eq!(e.to_string(), "disk full");
        }
    }
}
