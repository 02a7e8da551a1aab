//! The user's own transfers: every put and get, and every receive with the message it
//! matched (the steps of collectives are summarised per call in `collectives`).

use crate::program::NONE;
use crate::runtime::{RecvRecord, Stamp, Xfer};
use crate::units::{Ps, PS_PER_S};
use serde::Serialize;

/// One put or get. Times are picoseconds from the start of the run.
#[derive(Debug, Clone, Serialize)]
pub struct OperationResult {
    pub kind: &'static str,
    /// The rank that issued it.
    pub rank: u32,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub tag: i64,
    pub issue_ps: Ps,
    /// First DMA of the data starts.
    pub dma_start_ps: Option<Ps>,
    /// Last byte in the destination's memory (`T_end`).
    pub landed_ps: Option<Ps>,
    pub complete_ps: Option<Ps>,
    /// `complete - issue`: what the rank waited, including the issue overhead and any wait
    /// for the NIC's DMA engine.
    pub latency_ps: Option<Ps>,
    /// `complete - dma_start`: from the first DMA of the data (the 2015 paper's `T_start`)
    /// to completion, without the wait for a busy DMA engine. The paper's put latency
    /// `T_pp + (T_end - T_start) + T_control + T_pp` is this plus the issue overhead.
    pub network_latency_ps: Option<Ps>,
    /// `size / (complete - issue)`, bytes per second.
    pub bandwidth_bytes_per_s: Option<f64>,
}

/// One receive and the message it matched.
#[derive(Debug, Clone, Serialize)]
pub struct ReceiveResult {
    pub rank: u32,
    /// The sender of the matched message and its tag (absent if it never matched).
    pub src: Option<u32>,
    pub tag: Option<i64>,
    pub size: Option<u64>,
    pub protocol: Option<&'static str>,
    pub posted_ps: Ps,
    /// Its data in memory.
    pub landed_ps: Option<Ps>,
    pub complete_ps: Option<Ps>,
}

/// The user's puts, gets and messages, in the order they were issued: the runtime's own
/// records, moved here when the run ends (not copied: a run of millions of operations holds
/// them once), each made into an [`OperationResult`] when read.
pub type Operations = Table<Xfer>;

impl Table<Xfer> {
    /// The transfers outside collectives among `xfers` (the steps of collectives are
    /// summarised per call).
    pub fn new(mut xfers: Vec<Xfer>) -> Operations {
        xfers.retain(|x| x.coll == NONE);
        xfers.shrink_to_fit();
        Table {
            records: xfers,
            order: None,
        }
    }

    /// The transfers `xfers[order[0]]`, `xfers[order[1]]`, ... (a parallel run's records,
    /// kept partition by partition, read in the run's order without being copied into it).
    pub fn in_order(xfers: Vec<Xfer>, order: Vec<u32>) -> Operations {
        Table {
            records: xfers,
            order: Some(order),
        }
    }
}

impl Record for Xfer {
    type Row = OperationResult;
    fn row(&self) -> OperationResult {
        operation(self)
    }
}

/// What a result says of one transfer.
fn operation(x: &Xfer) -> OperationResult {
    let (dma_start, landed, complete) = (x.dma_start.get(), x.landed.get(), x.complete.get());
    let latency = complete.map(|c| c - x.issue);
    OperationResult {
        kind: x.kind.name(),
        rank: x.rank,
        src: x.src_rank,
        dst: x.dst_rank,
        size: x.size,
        tag: x.tag,
        issue_ps: x.issue,
        dma_start_ps: dma_start,
        landed_ps: landed,
        complete_ps: complete,
        latency_ps: latency,
        network_latency_ps: complete.zip(dma_start).map(|(c, d)| c.saturating_sub(d)),
        bandwidth_bytes_per_s: latency
            .filter(|&l| l > 0)
            .map(|l| x.size as f64 * PS_PER_S as f64 / l as f64),
    }
}

/// A receive of a user message as a result keeps it: 56 bytes where a [`ReceiveResult`]
/// takes 104.
#[derive(Debug, Clone, Copy)]
pub struct ReceiveRow {
    rank: u32,
    /// The matched message's sender (`NONE`: it never matched).
    src: u32,
    tag: i64,
    size: u64,
    posted: Ps,
    landed: Stamp,
    complete: Stamp,
    rendezvous: bool,
}

/// The receives of user messages (even contexts), in the order they were posted, each
/// made into a [`ReceiveResult`] when read.
pub type Receives = Table<ReceiveRow>;

impl Table<ReceiveRow> {
    /// The user receives of `recvs`, with what they learn of the message they matched in
    /// `xfers`.
    pub fn new<'a>(recvs: impl IntoIterator<Item = &'a RecvRecord>, xfers: &[Xfer]) -> Receives {
        let records = recvs
            .into_iter()
            .filter(|rv| rv.ctx % 2 == 0)
            .map(|rv| {
                let x = xfers.get(rv.xfer as usize);
                ReceiveRow {
                    rank: rv.rank,
                    src: x.map_or(NONE, |x| x.src_rank),
                    tag: x.map_or(0, |x| x.tag),
                    size: x.map_or(0, |x| x.size),
                    posted: rv.posted,
                    landed: x.map_or(Stamp::NOT_YET, |x| x.landed),
                    complete: rv.complete,
                    rendezvous: x.is_some_and(|x| x.rendezvous),
                }
            })
            .collect();
        Table {
            records,
            order: None,
        }
    }
}

impl Record for ReceiveRow {
    type Row = ReceiveResult;
    fn row(&self) -> ReceiveResult {
        receive(self)
    }
}

fn receive(r: &ReceiveRow) -> ReceiveResult {
    let matched = r.src != NONE;
    ReceiveResult {
        rank: r.rank,
        src: matched.then_some(r.src),
        tag: matched.then_some(r.tag),
        size: matched.then_some(r.size),
        protocol: matched.then_some(if r.rendezvous { "rendezvous" } else { "eager" }),
        posted_ps: r.posted,
        landed_ps: r.landed.get(),
        complete_ps: r.complete.get(),
    }
}

/// A compact record that a result row is made of when read.
pub trait Record {
    type Row;
    fn row(&self) -> Self::Row;
}

/// Records kept compact, made into result rows when read: a run of millions of operations
/// holds them once.
#[derive(Debug, Clone)]
pub struct Table<T> {
    records: Vec<T>,
    /// The records the rows are, in row order, when not all of `records` in theirs.
    order: Option<Vec<u32>>,
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Table {
            records: Vec::new(),
            order: None,
        }
    }
}

impl<T: Record> Table<T> {
    pub fn len(&self) -> usize {
        self.order.as_ref().map_or(self.records.len(), Vec::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th row.
    pub fn get(&self, i: usize) -> Option<T::Row> {
        (i < self.len()).then(|| self.row(i))
    }

    /// The `i`-th row; panics past the end, like indexing (for tests and callers that
    /// checked `len`).
    pub fn row(&self, i: usize) -> T::Row {
        let at = self.order.as_ref().map_or(i, |order| order[i] as usize);
        self.records[at].row()
    }

    pub fn iter(&self) -> Rows<'_, T> {
        Rows {
            table: self,
            next: 0..self.len(),
        }
    }

    pub fn to_vec(&self) -> Vec<T::Row> {
        self.iter().collect()
    }
}

/// The rows of a [`Table`], made as they are read.
pub struct Rows<'a, T> {
    table: &'a Table<T>,
    next: std::ops::Range<usize>,
}

impl<T: Record> Iterator for Rows<'_, T> {
    type Item = T::Row;

    fn next(&mut self) -> Option<T::Row> {
        self.next.next().map(|i| self.table.row(i))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.next.size_hint()
    }
}

impl<T: Record> ExactSizeIterator for Rows<'_, T> {}

impl<T: Record> Serialize for Table<T>
where
    T::Row: Serialize,
{
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Empty in the skeleton of a JSON written on threads (`json_threads`).
        if super::skeleton::in_skeleton() {
            return s.collect_seq(std::iter::empty::<T::Row>());
        }
        s.collect_seq(self.iter())
    }
}

impl<'a, T: Record> IntoIterator for &'a Table<T> {
    type Item = T::Row;
    type IntoIter = Rows<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Record for u32 {
        type Row = u32;
        fn row(&self) -> u32 {
            *self
        }
    }

    #[test]
    fn a_table_in_an_order_reads_its_records_in_that_order() {
        let records = vec![10, 11, 12, 13];
        let table = Table {
            records,
            order: Some(vec![2, 0, 3]),
        };
        assert_eq!(table.len(), 3);
        assert_eq!(table.to_vec(), [12, 10, 13]);
        assert_eq!((table.get(1), table.get(3)), (Some(10), None));
        assert_eq!(table.row(2), 13);
        assert_eq!(table.iter().len(), 3);
        assert_eq!((&table).into_iter().sum::<u32>(), 35);
        let plain = Table {
            records: vec![1, 2],
            order: None,
        };
        assert_eq!(
            (plain.len(), plain.to_vec(), plain.get(2)),
            (2, vec![1, 2], None)
        );
    }
}
