//! One rank's `.bin` file: its index, header (version) and datatype-size table, then its
//! call records one at a time. Each record is `u16 label | u8 mask | [u16 thread] | [cpu
//! times] | [wall times] | [perf counters] | arguments`, all big-endian.

use crate::error::Result;
use crate::frontends::dumpi::bytes::Bytes;
use crate::frontends::dumpi::labels::{self, END_OF_STREAM, FUNCTION_ENTER, FUNCTION_EXIT};
use std::io::{Read, Seek};

/// The 8 bytes every DUMPI file starts with.
pub const MAGIC: [u8; 8] = [0xFF, 0xAA, 0xDD, b'D', b'U', b'M', b'P', b'I'];

const MASK_STATUS: u8 = 0x03;
const MASK_CPU: u8 = 0x04;
const MASK_WALL: u8 = 0x08;
const MASK_THREAD: u8 = 0x40;
const MASK_PERF: u8 = 0x80;

/// A call's arguments, as far as acesim uses them. Counts are in elements of the datatype
/// handle next to them; ranks are communicator ranks; `comm`s are the trace's handles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// Send, Bsend, Ssend, Rsend.
    Send {
        count: i32,
        dtype: u16,
        dest: i32,
        tag: i32,
        comm: u16,
    },
    Recv {
        count: i32,
        dtype: u16,
        source: i32,
        tag: i32,
        comm: u16,
    },
    /// Isend, Ibsend, Issend, Irsend.
    Isend {
        count: i32,
        dtype: u16,
        dest: i32,
        tag: i32,
        comm: u16,
        request: i32,
    },
    Irecv {
        count: i32,
        dtype: u16,
        source: i32,
        tag: i32,
        comm: u16,
        request: i32,
    },
    /// Send_init (and its modes) or Recv_init: a persistent request.
    Init {
        send: bool,
        count: i32,
        dtype: u16,
        peer: i32,
        tag: i32,
        comm: u16,
        request: i32,
    },
    Start {
        requests: Vec<i32>,
    },
    Sendrecv {
        send: (i32, u16, i32, i32),
        recv: (i32, u16, i32, i32),
        comm: u16,
    },
    /// A wait, or a test that succeeded: the requests it completed.
    Complete {
        requests: Vec<i32>,
    },
    RequestFree {
        request: i32,
    },
    Barrier {
        comm: u16,
    },
    /// Bcast, Reduce (with root), Allreduce, Scan, Exscan (root 0).
    Rooted {
        kind: &'static str,
        count: i32,
        dtype: u16,
        root: i32,
        comm: u16,
    },
    Gather {
        me: i32,
        send: (i32, u16),
        recv: Option<(i32, u16)>,
        root: i32,
        comm: u16,
    },
    Scatter {
        me: i32,
        recv: (i32, u16),
        send: Option<(i32, u16)>,
        root: i32,
        comm: u16,
    },
    Gatherv {
        me: i32,
        send: (i32, u16),
        recvcounts: Vec<i32>,
        recvtype: u16,
        root: i32,
        comm: u16,
    },
    Scatterv {
        me: i32,
        recv: (i32, u16),
        sendcounts: Vec<i32>,
        sendtype: u16,
        root: i32,
        comm: u16,
    },
    /// Allgather and Alltoall: per rank, `count` of `dtype` (the receive side's).
    Uniform {
        kind: &'static str,
        count: i32,
        dtype: u16,
        comm: u16,
    },
    Allgatherv {
        recvcounts: Vec<i32>,
        recvtype: u16,
        comm: u16,
    },
    /// Alltoallv and Alltoallw: the datatype of each count.
    Alltoallv {
        sendcounts: Vec<i32>,
        sendtypes: Vec<u16>,
        recvcounts: Vec<i32>,
        recvtypes: Vec<u16>,
        comm: u16,
    },
    ReduceScatter {
        recvcounts: Vec<i32>,
        dtype: u16,
        comm: u16,
    },
    CommSplit {
        old: u16,
        color: i32,
        key: i32,
        new: u16,
    },
    CommDup {
        old: u16,
        new: u16,
    },
    CommCreate {
        old: u16,
        group: u16,
        new: u16,
    },
    CommFree {
        comm: u16,
    },
    CommRank {
        comm: u16,
        rank: i32,
    },
    CommGroup {
        comm: u16,
        group: u16,
    },
    GroupIncl {
        group: u16,
        ranks: Vec<i32>,
        new: u16,
    },
    /// A call that costs nothing in acesim (local calls, probes).
    Local,
    /// A call acesim reads but cannot model (one-sided communication, cancel, ...).
    Unmodelled,
}

/// One call record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub label: u16,
    /// Wall-clock start and stop, in nanoseconds since the epoch (when traced).
    pub wall: Option<(i64, i64)>,
    pub call: Call,
}

/// An open rank file, positioned at its first record.
pub struct RankFile<R> {
    pub bytes: Bytes<R>,
    pub version: [u8; 3],
    /// Bytes of each datatype handle (the trace's own table).
    pub type_sizes: Vec<u32>,
    wall_bias: i64,
    cpu_bias: i64,
    /// Records read so far.
    pub records: u64,
}

impl<R: Read + Seek> RankFile<R> {
    /// Reads the index, header and datatype sizes of a rank file.
    pub fn open(inner: R, name: &str) -> Result<Self> {
        let mut b = Bytes::new(inner, name)?;
        let head = b.u64("the file's magic number")?;
        if head.to_be_bytes() != MAGIC {
            return Err(b.error("not a DUMPI file: it does not start with DUMPI's magic number"));
        }
        if b.file_len() < 8 + 64 {
            return Err(b.error("too short for a DUMPI file's index: truncated"));
        }
        // The index: eight u64 in the last 64 bytes, the magic number first.
        b.seek(b.file_len() - 64, "index")?;
        if b.u64("the index's magic number")?.to_be_bytes() != MAGIC {
            return Err(b.error(
                "the index at the end of the file does not start with DUMPI's magic number: the file is truncated or corrupt",
            ));
        }
        let sizes_at = b.u64("the index")?;
        let _addrs = b.u64("the index")?;
        let _perf = b.u64("the index")?;
        let header_at = b.u64("the index")?;
        let body_at = b.u64("the index")?;
        let _footer = b.u64("the index")?;
        let _keyval = b.u64("the index")?;
        if header_at == 0 || body_at == 0 || sizes_at == 0 {
            return Err(b.error(
                "the index has no header, body or datatype-size table: DUMPI files before 0.6.6 are not read",
            ));
        }
        b.seek(header_at, "header")?;
        let version = [
            b.u8("the header's version")?,
            b.u8("the header's version")?,
            b.u8("the header's version")?,
        ];
        if version[0] != 1 {
            return Err(b.error(format!(
                "DUMPI version {}.{}.{}: acesim reads versions 1.0 and 1.1",
                version[0], version[1], version[2]
            )));
        }
        b.seek(sizes_at, "datatype-size table")?;
        let n = b.i32("the datatype-size table")?;
        if n < 0 || n as u64 * 4 > b.file_len() - b.pos() {
            return Err(b.error(format!(
                "the datatype-size table claims {n} entries: corrupt"
            )));
        }
        let type_sizes = (0..n)
            .map(|_| b.i32("the datatype-size table").map(|s| s.max(0) as u32))
            .collect::<Result<Vec<u32>>>()?;
        b.seek(body_at, "call records")?;
        let cpu_bias = i64::from(b.i32("the time biases")?);
        let wall_bias = i64::from(b.i32("the time biases")?);
        Ok(RankFile {
            bytes: b,
            version,
            type_sizes,
            wall_bias,
            cpu_bias,
            records: 0,
        })
    }

    /// The next call record, or `None` at the end of the stream.
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        loop {
            self.bytes.record = self.records + 1;
            self.bytes.record_start = self.bytes.pos();
            let label = self.bytes.u16("a record's label")?;
            if label == END_OF_STREAM {
                self.bytes.record = 0;
                return Ok(None);
            }
            self.records += 1;
            let mask = self.bytes.u8("a record's mask")?;
            if mask & MASK_THREAD != 0 {
                self.bytes.u16("a record's thread")?;
            }
            if mask & MASK_CPU != 0 {
                let _ = self.time(self.cpu_bias)?;
                let _ = self.time(self.cpu_bias)?;
            }
            let wall = if mask & MASK_WALL != 0 {
                Some((self.time(self.wall_bias)?, self.time(self.wall_bias)?))
            } else {
                None
            };
            if mask & MASK_PERF != 0 {
                let n = self.bytes.u8("performance counters")?;
                self.bytes.skip(16 * u64::from(n), "performance counters")?;
            }
            if label == FUNCTION_ENTER || label == FUNCTION_EXIT {
                self.bytes.u64("a function address")?;
                continue;
            }
            let call = self.call(label, mask)?;
            return Ok(Some(Record { label, wall, call }));
        }
    }

    /// `u16 seconds` (biased) and `u32 nanoseconds`, in nanoseconds.
    fn time(&mut self, bias: i64) -> Result<i64> {
        let s = i64::from(self.bytes.u16("a timestamp")?) + bias;
        let ns = i64::from(self.bytes.u32("a timestamp")?);
        if ns >= 1_000_000_000 {
            return Err(self.bytes.error(format!(
                "a timestamp has {ns} nanoseconds (expected fewer than 10^9): corrupt record"
            )));
        }
        Ok(s * 1_000_000_000 + ns)
    }

    /// Statuses (present when the mask says so): skipped.
    fn statuses(&mut self, mask: u8) -> Result<()> {
        if mask & MASK_STATUS == 0 {
            return Ok(());
        }
        let n = self.bytes.i32("statuses")?;
        let each: u64 = if self.at_least(0, 6, 3) { 14 } else { 10 };
        if n < 0 || n as u64 * each > self.bytes.file_len() - self.bytes.pos() {
            return Err(self.bytes.error(format!("{n} statuses: corrupt record")));
        }
        self.bytes.skip(n as u64 * each, "statuses")
    }

    fn at_least(&self, a: u8, b: u8, c: u8) -> bool {
        self.version >= [a, b, c]
    }

    /// `count, datatype, peer, tag, comm`.
    fn p2p(&mut self) -> Result<(i32, u16, i32, i32, u16)> {
        let b = &mut self.bytes;
        Ok((
            b.i32("count")?,
            b.u16("datatype")?,
            b.i32("peer")?,
            b.i32("tag")?,
            b.u16("comm")?,
        ))
    }

    /// The requests a test completed (`flag` set), by its kind.
    fn decode_completion(&mut self, label: u16, mask: u8) -> Result<Call> {
        let b = &mut self.bytes;
        let requests = match label {
            13 => vec![b.i32("request")?],
            14 => {
                let r = b.i32("request")?;
                let flag = b.i32("flag")?;
                if flag != 0 {
                    vec![r]
                } else {
                    vec![]
                }
            }
            18 => {
                b.i32("count")?;
                b.arr32("requests")?
            }
            19 => {
                b.i32("count")?;
                let r = b.arr32("requests")?;
                let flag = b.i32("flag")?;
                if flag != 0 {
                    r
                } else {
                    vec![]
                }
            }
            16 | 17 => {
                b.i32("count")?;
                let r = b.arr32("requests")?;
                let index = b.i32("index")?;
                let flag = if label == 17 { b.i32("flag")? } else { 1 };
                match usize::try_from(index).ok().and_then(|i| r.get(i)) {
                    Some(&req) if flag != 0 => vec![req],
                    _ => vec![],
                }
            }
            _ => {
                // Waitsome, Testsome.
                b.i32("count")?;
                let r = b.arr32("requests")?;
                b.i32("outcount")?;
                let idx = b.arr32("indices")?;
                let mut out = Vec::with_capacity(idx.len());
                for i in idx {
                    match usize::try_from(i).ok().and_then(|i| r.get(i)) {
                        Some(&req) => out.push(req),
                        None => {
                            return Err(b.error(format!(
                                "completed index {i} is outside the {} requests: corrupt record",
                                r.len()
                            )))
                        }
                    }
                }
                out
            }
        };
        self.statuses(mask)?;
        Ok(Call::Complete { requests })
    }

    /// Decodes the arguments of a record with `label`, by family of calls.
    fn call(&mut self, label: u16, mask: u8) -> Result<Call> {
        if let Some(call) = self.point_to_point(label, mask)? {
            return Ok(call);
        }
        if let Some(call) = self.collective(label)? {
            return Ok(call);
        }
        if let Some(call) = self.v_collective(label)? {
            return Ok(call);
        }
        if let Some(call) = self.communicator(label)? {
            return Ok(call);
        }
        if let Some(call) = self.local_or_unmodelled(label)? {
            return Ok(call);
        }
        let what = labels::name(label)
            .map(|n| format!("{n} (label {label})"))
            .unwrap_or_else(|| format!("label {label}, which is no MPI call"));
        Err(self.bytes.error(format!(
            "acesim does not read the arguments of {what}, so it cannot read past this record (expected a call acesim reads: see docs/traces.md)"
        )))
    }

    /// Sends, receives, requests and their completions.
    fn point_to_point(&mut self, label: u16, mask: u8) -> Result<Option<Call>> {
        use Call::*;
        let call = match label {
            0 | 3 | 4 | 5 => {
                let (count, dtype, dest, tag, comm) = self.p2p()?;
                Send {
                    count,
                    dtype,
                    dest,
                    tag,
                    comm,
                }
            }
            1 => {
                let (count, dtype, source, tag, comm) = self.p2p()?;
                self.statuses(mask)?;
                Recv {
                    count,
                    dtype,
                    source,
                    tag,
                    comm,
                }
            }
            8..=11 => {
                let (count, dtype, dest, tag, comm) = self.p2p()?;
                let request = self.bytes.i32("request")?;
                Isend {
                    count,
                    dtype,
                    dest,
                    tag,
                    comm,
                    request,
                }
            }
            12 => {
                let (count, dtype, source, tag, comm) = self.p2p()?;
                let request = self.bytes.i32("request")?;
                Irecv {
                    count,
                    dtype,
                    source,
                    tag,
                    comm,
                    request,
                }
            }
            26..=30 => {
                let (count, dtype, peer, tag, comm) = self.p2p()?;
                let request = self.bytes.i32("request")?;
                Init {
                    send: label != 30,
                    count,
                    dtype,
                    peer,
                    tag,
                    comm,
                    request,
                }
            }
            31 => Start {
                requests: vec![self.bytes.i32("request")?],
            },
            32 => {
                self.bytes.i32("count")?;
                Start {
                    requests: self.bytes.arr32("requests")?,
                }
            }
            33 => {
                let b = &mut self.bytes;
                let send = (
                    b.i32("sendcount")?,
                    b.u16("sendtype")?,
                    b.i32("dest")?,
                    b.i32("sendtag")?,
                );
                let recv = (
                    b.i32("recvcount")?,
                    b.u16("recvtype")?,
                    b.i32("source")?,
                    b.i32("recvtag")?,
                );
                let comm = b.u16("comm")?;
                self.statuses(mask)?;
                Sendrecv { send, recv, comm }
            }
            34 => {
                let b = &mut self.bytes;
                let (count, dtype) = (b.i32("count")?, b.u16("datatype")?);
                let (dest, sendtag) = (b.i32("dest")?, b.i32("sendtag")?);
                let (source, recvtag) = (b.i32("source")?, b.i32("recvtag")?);
                let comm = b.u16("comm")?;
                self.statuses(mask)?;
                Sendrecv {
                    send: (count, dtype, dest, sendtag),
                    recv: (count, dtype, source, recvtag),
                    comm,
                }
            }
            13 | 14 | 16..=21 => return self.decode_completion(label, mask).map(Some),
            15 => RequestFree {
                request: self.bytes.i32("request")?,
            },
            22 => {
                let b = &mut self.bytes;
                let _ = (
                    b.i32("source")?,
                    b.i32("tag")?,
                    b.u16("comm")?,
                    b.i32("flag")?,
                );
                self.statuses(mask)?;
                Local
            }
            23 => {
                let b = &mut self.bytes;
                let _ = (b.i32("source")?, b.i32("tag")?, b.u16("comm")?);
                self.statuses(mask)?;
                Local
            }
            2 => {
                self.statuses(mask)?;
                self.bytes.u16("datatype")?;
                self.bytes.i32("count")?;
                Local
            }
            6 | 7 => {
                self.bytes.i32("size")?;
                Local
            }
            24 => {
                self.bytes.i32("request")?;
                Unmodelled
            }
            _ => return Ok(None),
        };
        Ok(Some(call))
    }

    /// Collective calls with one count per rank.
    fn collective(&mut self, label: u16) -> Result<Option<Call>> {
        use Call::*;
        let call = match label {
            52 => Barrier {
                comm: self.bytes.u16("comm")?,
            },
            53 => {
                let b = &mut self.bytes;
                let (count, dtype, root, comm) = (
                    b.i32("count")?,
                    b.u16("datatype")?,
                    b.i32("root")?,
                    b.u16("comm")?,
                );
                Rooted {
                    kind: "bcast",
                    count,
                    dtype,
                    root,
                    comm,
                }
            }
            62 => {
                let b = &mut self.bytes;
                let (count, dtype) = (b.i32("count")?, b.u16("datatype")?);
                b.u8("op")?;
                let (root, comm) = (b.i32("root")?, b.u16("comm")?);
                Rooted {
                    kind: "reduce",
                    count,
                    dtype,
                    root,
                    comm,
                }
            }
            65 | 67 | 156 => {
                let b = &mut self.bytes;
                let (count, dtype) = (b.i32("count")?, b.u16("datatype")?);
                b.u8("op")?;
                let comm = b.u16("comm")?;
                let kind = match label {
                    65 => "allreduce",
                    67 => "scan",
                    _ => "exscan",
                };
                Rooted {
                    kind,
                    count,
                    dtype,
                    root: 0,
                    comm,
                }
            }
            54 => {
                let b = &mut self.bytes;
                let me = b.i32("commrank")?;
                let send = (b.i32("sendcount")?, b.u16("sendtype")?);
                let (root, comm) = (b.i32("root")?, b.u16("comm")?);
                let recv = if me == root {
                    Some((b.i32("recvcount")?, b.u16("recvtype")?))
                } else {
                    None
                };
                Gather {
                    me,
                    send,
                    recv,
                    root,
                    comm,
                }
            }
            56 => {
                let b = &mut self.bytes;
                let me = b.i32("commrank")?;
                let recv = (b.i32("recvcount")?, b.u16("recvtype")?);
                let (root, comm) = (b.i32("root")?, b.u16("comm")?);
                let send = if me == root {
                    Some((b.i32("sendcount")?, b.u16("sendtype")?))
                } else {
                    None
                };
                Scatter {
                    me,
                    recv,
                    send,
                    root,
                    comm,
                }
            }
            58 | 60 => {
                let b = &mut self.bytes;
                let _ = (b.i32("sendcount")?, b.u16("sendtype")?);
                let (count, dtype, comm) =
                    (b.i32("recvcount")?, b.u16("recvtype")?, b.u16("comm")?);
                let kind = if label == 58 { "allgather" } else { "alltoall" };
                Uniform {
                    kind,
                    count,
                    dtype,
                    comm,
                }
            }
            _ => return Ok(None),
        };
        Ok(Some(call))
    }

    /// Collectives with per-rank counts (the `v` and `w` variants, reduce-scatter).
    fn v_collective(&mut self, label: u16) -> Result<Option<Call>> {
        use Call::*;
        let call = match label {
            55 => {
                let b = &mut self.bytes;
                let me = b.i32("commrank")?;
                b.i32("commsize")?;
                let send = (b.i32("sendcount")?, b.u16("sendtype")?);
                let (root, comm) = (b.i32("root")?, b.u16("comm")?);
                let recvcounts = if me == root {
                    let c = b.arr32("recvcounts")?;
                    b.arr32("displs")?;
                    c
                } else {
                    Vec::new()
                };
                let recvtype = b.u16("recvtype")?;
                Gatherv {
                    me,
                    send,
                    recvcounts,
                    recvtype,
                    root,
                    comm,
                }
            }
            57 => {
                let b = &mut self.bytes;
                let me = b.i32("commrank")?;
                b.i32("commsize")?;
                let sendtype = b.u16("sendtype")?;
                let recv = (b.i32("recvcount")?, b.u16("recvtype")?);
                let (root, comm) = (b.i32("root")?, b.u16("comm")?);
                let sendcounts = if me == root {
                    let c = b.arr32("sendcounts")?;
                    b.arr32("displs")?;
                    c
                } else {
                    Vec::new()
                };
                Scatterv {
                    me,
                    recv,
                    sendcounts,
                    sendtype,
                    root,
                    comm,
                }
            }
            59 => {
                let b = &mut self.bytes;
                b.i32("commsize")?;
                let _ = (b.i32("sendcount")?, b.u16("sendtype")?);
                let recvcounts = b.arr32("recvcounts")?;
                b.arr32("displs")?;
                let (recvtype, comm) = (b.u16("recvtype")?, b.u16("comm")?);
                Allgatherv {
                    recvcounts,
                    recvtype,
                    comm,
                }
            }
            61 => {
                let b = &mut self.bytes;
                b.i32("commsize")?;
                let sendcounts = b.arr32("sendcounts")?;
                b.arr32("senddispls")?;
                let sendtype = b.u16("sendtype")?;
                let recvcounts = b.arr32("recvcounts")?;
                b.arr32("recvdispls")?;
                let (recvtype, comm) = (b.u16("recvtype")?, b.u16("comm")?);
                let (ns, nr) = (sendcounts.len(), recvcounts.len());
                Alltoallv {
                    sendcounts,
                    sendtypes: vec![sendtype; ns],
                    recvcounts,
                    recvtypes: vec![recvtype; nr],
                    comm,
                }
            }
            155 => {
                let b = &mut self.bytes;
                b.i32("commsize")?;
                let sendcounts = b.arr32("sendcounts")?;
                b.arr32("senddispls")?;
                let sendtypes = b.arr16("sendtypes")?;
                let recvcounts = b.arr32("recvcounts")?;
                b.arr32("recvdispls")?;
                let recvtypes = b.arr16("recvtypes")?;
                let comm = b.u16("comm")?;
                Alltoallv {
                    sendcounts,
                    sendtypes,
                    recvcounts,
                    recvtypes,
                    comm,
                }
            }
            66 => {
                let b = &mut self.bytes;
                b.i32("commsize")?;
                let recvcounts = b.arr32("recvcounts")?;
                let dtype = b.u16("datatype")?;
                b.u8("op")?;
                ReduceScatter {
                    recvcounts,
                    dtype,
                    comm: b.u16("comm")?,
                }
            }
            _ => return Ok(None),
        };
        Ok(Some(call))
    }

    /// Communicators and groups.
    fn communicator(&mut self, label: u16) -> Result<Option<Call>> {
        use Call::*;
        let call = match label {
            86 => {
                let b = &mut self.bytes;
                CommSplit {
                    old: b.u16("comm")?,
                    color: b.i32("color")?,
                    key: b.i32("key")?,
                    new: b.u16("newcomm")?,
                }
            }
            84 => CommDup {
                old: self.bytes.u16("comm")?,
                new: self.bytes.u16("newcomm")?,
            },
            85 => {
                let b = &mut self.bytes;
                CommCreate {
                    old: b.u16("comm")?,
                    group: b.u16("group")?,
                    new: b.u16("newcomm")?,
                }
            }
            87 => CommFree {
                comm: self.bytes.u16("comm")?,
            },
            82 => CommRank {
                comm: self.bytes.u16("comm")?,
                rank: self.bytes.i32("rank")?,
            },
            81 => {
                self.bytes.u16("comm")?;
                self.bytes.i32("size")?;
                Local
            }
            72 => CommGroup {
                comm: self.bytes.u16("comm")?,
                group: self.bytes.u16("group")?,
            },
            76 => {
                let b = &mut self.bytes;
                let group = b.u16("group")?;
                b.i32("count")?;
                let ranks = b.arr32("ranks")?;
                GroupIncl {
                    group,
                    ranks,
                    new: b.u16("newgroup")?,
                }
            }
            // Local calls with fixed layouts.
            80 | 46 | 47 => {
                self.bytes.u16("handle")?;
                Local
            }
            68 | 69 | 43 => {
                self.bytes.u16("handle")?;
                self.bytes.i32("value")?;
                Local
            }
            83 => {
                let _ = (
                    self.bytes.u16("comm1")?,
                    self.bytes.u16("comm2")?,
                    self.bytes.u8("result")?,
                );
                Local
            }
            _ => return Ok(None),
        };
        Ok(Some(call))
    }

    /// Local calls (no cost) and the calls acesim does not model.
    fn local_or_unmodelled(&mut self, label: u16) -> Result<Option<Call>> {
        use Call::*;
        let call = match label {
            35 => {
                let _ = (
                    self.bytes.i32("count")?,
                    self.bytes.u16("oldtype")?,
                    self.bytes.u16("newtype")?,
                );
                Local
            }
            36 | 37 => {
                let b = &mut self.bytes;
                let _ = (
                    b.i32("count")?,
                    b.i32("blocklength")?,
                    b.i32("stride")?,
                    b.u16("oldtype")?,
                    b.u16("newtype")?,
                );
                Local
            }
            38 | 39 => {
                let b = &mut self.bytes;
                b.i32("count")?;
                b.arr32("lengths")?;
                b.arr32("indices")?;
                let _ = (b.u16("oldtype")?, b.u16("newtype")?);
                Local
            }
            77 => {
                let b = &mut self.bytes;
                b.u16("group")?;
                b.i32("count")?;
                b.arr32("ranks")?;
                b.u16("newgroup")?;
                Local
            }
            114 => {
                self.bytes.chars("name")?;
                self.bytes.i32("resultlen")?;
                Local
            }
            115 => {
                let _ = (self.bytes.i32("version")?, self.bytes.i32("subversion")?);
                Local
            }
            126 | 172 | 202 => {
                self.bytes.i32("flag")?;
                Local
            }
            122 | 123 | 125 => Local,
            124 => {
                let argc = self.bytes.u32("argc")?;
                if !self.at_least(0, 6, 2) {
                    self.bytes.u32("argc")?;
                }
                for _ in 0..argc {
                    self.bytes.chars("argv")?;
                }
                Local
            }
            171 => {
                let argc = self.bytes.u32("argc")?;
                for _ in 0..argc {
                    self.bytes.chars("argv")?;
                }
                let _ = (self.bytes.u8("required")?, self.bytes.u8("provided")?);
                Local
            }
            // One-sided communication and abort: read, not modelled.
            127 => {
                let _ = (self.bytes.u16("comm")?, self.bytes.i32("errorcode")?);
                Unmodelled
            }
            145 => {
                let b = &mut self.bytes;
                let _ = (
                    b.i32("size")?,
                    b.i32("dispunit")?,
                    b.u16("info")?,
                    b.u16("comm")?,
                    b.u16("win")?,
                );
                Unmodelled
            }
            144 | 147 | 154 => {
                self.bytes.u16("win")?;
                Unmodelled
            }
            146 => {
                let _ = (self.bytes.u8("assert")?, self.bytes.u16("win")?);
                Unmodelled
            }
            149 => {
                let b = &mut self.bytes;
                let _ = (
                    b.u8("locktype")?,
                    b.i32("rank")?,
                    b.u8("assert")?,
                    b.u16("win")?,
                );
                Unmodelled
            }
            153 => {
                let _ = (self.bytes.i32("rank")?, self.bytes.u16("win")?);
                Unmodelled
            }
            150 | 151 => {
                let b = &mut self.bytes;
                let _ = (b.u16("group")?, b.u8("assert")?, b.u16("win")?);
                Unmodelled
            }
            141..=143 => {
                let b = &mut self.bytes;
                let _ = (
                    b.i32("origincount")?,
                    b.u16("origintype")?,
                    b.i32("targetrank")?,
                    b.i32("targetdisp")?,
                    b.i32("targetcount")?,
                    b.u16("targettype")?,
                );
                if label == 141 {
                    b.u8("op")?;
                }
                b.u16("win")?;
                Unmodelled
            }
            _ => return Ok(None),
        };
        Ok(Some(call))
    }
}
