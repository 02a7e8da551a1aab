//! The per-link table (`--links-csv`).

use crate::results::chunks::write_in_chunks;
use crate::results::report::Results;
use std::io::Write;

/// The table's first line.
const HEADER: &str =
    "link,name,class,bandwidth_bytes_per_s,bytes,packets,busy_ps,utilization,wait_ps,stall_ps\n";
/// Links a chunk when the table is formatted on threads.
const CHUNK: usize = 65_536;

impl Results {
    /// One row per directed link (waits and stalls empty where the model has none).
    pub fn links_csv(&self) -> String {
        let mut out = Vec::new();
        // Writing into memory fails only on allocation, which aborts.
        let _ = self.write_links_csv(&mut out, 1);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// `links_csv` written into `w`, its rows formatted on `threads` threads (a million
    /// routers have eight million links): the same bytes on any number.
    pub fn write_links_csv(&self, w: impl Write, threads: usize) -> std::io::Result<()> {
        self.write_links_csv_chunked(w, threads, CHUNK)
    }

    /// `write_links_csv` with `chunk` links a chunk (tests make them small).
    pub(crate) fn write_links_csv_chunked(
        &self,
        mut w: impl Write,
        threads: usize,
        chunk: usize,
    ) -> std::io::Result<()> {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, &mut w);
        w.write_all(HEADER.as_bytes())?;
        let links = &self.all_links;
        let format = |range: std::ops::Range<usize>| {
            let mut text = Vec::with_capacity(range.len() * 80);
            for l in range.map(|i| links.row_at(i)) {
                writeln!(
                    text,
                    "{},{},{},{},{},{},{},{:.6},{},{}",
                    l.link,
                    l.name,
                    l.class,
                    l.bandwidth_bytes_per_s,
                    l.bytes,
                    l.packets,
                    l.busy_ps,
                    l.utilization,
                    Cell(l.wait_ps),
                    Cell(l.stall_ps)
                )?;
            }
            Ok(text)
        };
        write_in_chunks(&mut w, links.len(), (threads, chunk), &format)?;
        w.flush()
    }
}

/// A number, or nothing for none.
struct Cell(Option<u64>);

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(v) => write!(f, "{v}"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::frontends::schedule;
    use crate::{simulate, MachineSource};

    #[test]
    fn the_links_table_on_threads_is_the_same_bytes() {
        let m = MachineSource::from_text("m.toml", "[topology]\nkind=\"torus\"\ndims=[4,4]\n")
            .load()
            .unwrap();
        let text =
            "ranks 3\nrank 0\nput 1 5000 tag=1\nrank 1\npoll 1\nput 2 64 tag=1\nrank 2\npoll 1\n";
        let r = simulate(&m, schedule::parse("t.sched", text).unwrap()).unwrap();
        let one = r.links_csv();
        // 16 routers' 4 ports, 16 injection and 16 ejection links, and the header.
        assert_eq!(one.lines().count(), 1 + 16 * 6);
        // Rank 0's put leaves on its injection link: its 5,000 bytes and their headers.
        let inject = one
            .lines()
            .find(|l| l.contains(",nic0->r0,injection,"))
            .unwrap();
        let bytes: u64 = inject.split(',').nth(4).unwrap().parse().unwrap();
        assert!(bytes > 5000, "{inject}");
        for (threads, chunk) in [(2, 1), (2, 7), (3, 10), (8, 1000), (1, 5)] {
            let mut out = Vec::new();
            r.write_links_csv_chunked(&mut out, threads, chunk).unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                one,
                "{threads} threads, chunks of {chunk}"
            );
        }
    }
}
