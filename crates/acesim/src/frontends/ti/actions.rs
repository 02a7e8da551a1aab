//! One line of a SimGrid time-independent trace (`RANK action args...`) split into words
//! and parsed into an [`Action`], as SimGrid's replay (`src/smpi/internals/smpi_replay.cpp`)
//! reads each action's arguments. Every error names the file, line, column and field.

use crate::error::{Error, Location, Result};

/// A word of a line and where it starts in the file's text.
#[derive(Debug, Clone, Copy)]
pub struct Word<'a> {
    pub text: &'a str,
    pub offset: usize,
}

/// A line that is not empty or a comment: its rank, its words (the rank first, then the
/// action's name and its arguments) and its line number.
#[derive(Debug, Clone)]
pub struct Line<'a> {
    pub rank: u32,
    pub words: Vec<Word<'a>>,
    pub number: u32,
}

/// Where errors of one file point: its text, or a part of it that starts after line
/// `first_line` (a window of a trace read as the run goes).
#[derive(Debug, Clone, Copy)]
pub struct FileText<'a> {
    pub name: &'a str,
    pub text: &'a str,
    pub first_line: u32,
}

impl<'a> FileText<'a> {
    /// The whole text of file `name`.
    pub fn whole(name: &'a str, text: &'a str) -> Self {
        FileText {
            name,
            text,
            first_line: 0,
        }
    }

    /// An error at `word`, about `field`.
    pub fn error(&self, word: Word, field: &str, message: impl Into<String>) -> Error {
        let mut at = Location::in_text(self.name, self.text, word.offset, word.text.len());
        at.line = at.line.map(|l| l + self.first_line as usize);
        Error::input(at.with_field(field), message)
    }

    /// The lines with an action, as SimGrid reads them: surrounding white space is trimmed,
    /// empty lines and lines starting with `#` are skipped, words are separated by spaces
    /// and tabs.
    pub fn lines(&self) -> Result<Vec<Line<'_>>> {
        let mut out = Vec::new();
        let mut offset = 0;
        for (i, raw) in self.text.split('\n').enumerate() {
            let start = offset;
            offset += raw.len() + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let words: Vec<Word> = raw
                .split([' ', '\t', '\r'])
                .scan(start, |at, w| {
                    let word = Word {
                        text: w,
                        offset: *at,
                    };
                    *at += w.len() + 1;
                    Some(word)
                })
                .filter(|w| !w.text.is_empty())
                .collect();
            let first = words[0];
            let rank = first.text.parse::<u32>().map_err(|_| {
                self.error(
                    first,
                    "rank",
                    format!(
                        "expected a rank (0 or more) at the start of the line, found `{}`",
                        first.text
                    ),
                )
            })?;
            if words.len() < 2 {
                return Err(self.error(
                    first,
                    "action",
                    "expected an action after the rank (e.g. `0 send 1 0 1e6`)",
                ));
            }
            out.push(Line {
                rank,
                words,
                number: self.first_line + (i + 1) as u32,
            });
        }
        Ok(out)
    }
}

/// A datatype's size in bytes, or `None` for the rank's default (see [`datatype_size`]).
pub type Dt = Option<u64>;

/// One action, with counts in elements and datatypes as sizes.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `init [x]`: any argument makes the rank's default datatype MPI_DOUBLE, none MPI_BYTE.
    Init {
        double: bool,
    },
    /// Actions that move nothing: `finalize`, `comm_size`, `comm_split`, `comm_dup`,
    /// `location`.
    Nothing,
    /// `send`/`isend dst tag count [dt]`.
    Send {
        blocking: bool,
        dst: u32,
        tag: i64,
        count: u64,
        dt: Dt,
    },
    /// `recv`/`irecv src tag count [dt]`.
    Recv {
        blocking: bool,
        src: u32,
        tag: i64,
        count: u64,
        dt: Dt,
    },
    /// `wait src dst tag` / `test src dst tag`: the request of that message.
    Wait {
        src: i64,
        dst: i64,
        tag: i64,
    },
    Test {
        src: i64,
        dst: i64,
        tag: i64,
    },
    /// `waitall [n]`: every pending request of the rank.
    WaitAll,
    /// `sendRecv sendcount dst recvcount src [dt1 [dt2]]`.
    SendRecv {
        send: u64,
        dst: u32,
        recv: u64,
        src: u32,
        dt1: Dt,
        dt2: Dt,
    },
    /// `compute flops`.
    Compute {
        flops: f64,
    },
    /// `sleep seconds`.
    Sleep {
        seconds: f64,
    },
    Barrier,
    /// `bcast count [root [dt]]`.
    Bcast {
        count: u64,
        root: u32,
        dt: Dt,
    },
    /// `reduce count flops [root [dt]]`.
    Reduce {
        count: u64,
        flops: f64,
        root: u32,
        dt: Dt,
    },
    /// `allreduce count flops [dt]`.
    Allreduce {
        count: u64,
        flops: f64,
        dt: Dt,
    },
    /// `scan`/`exscan count flops [dt]`.
    Scan {
        exclusive: bool,
        count: u64,
        flops: f64,
        dt: Dt,
    },
    /// `alltoall send recv [dt1 [dt2]]`.
    Alltoall {
        send: u64,
        recv: u64,
        dt1: Dt,
        dt2: Dt,
    },
    /// `gather send recv [root [dt1 [dt2]]]`; `allgather send recv [dt1 [dt2]]` (root 0).
    Gather {
        all: bool,
        send: u64,
        recv: u64,
        root: u32,
        dt1: Dt,
        dt2: Dt,
    },
    /// `scatter send recv [root [dt1 [dt2]]]`.
    Scatter {
        send: u64,
        recv: u64,
        root: u32,
        dt1: Dt,
        dt2: Dt,
    },
    /// `gatherv send recvcounts[p] [root [dt1 [dt2]]]`;
    /// `allgatherv send recvcounts[p] [dt1 dt2] [displs[p]]`.
    Gatherv {
        all: bool,
        send: u64,
        recvcounts: Vec<u64>,
        root: u32,
        dt1: Dt,
        dt2: Dt,
    },
    /// `scatterv sendcounts[p] recv [root [dt1 [dt2]]]`.
    Scatterv {
        sendcounts: Vec<u64>,
        recv: u64,
        root: u32,
        dt1: Dt,
        dt2: Dt,
    },
    /// `reducescatter recvcounts[p] flops [dt]`.
    ReduceScatter {
        recvcounts: Vec<u64>,
        flops: f64,
        dt: Dt,
    },
    /// `alltoallv sendbuf sendcounts[p] recvbuf recvcounts[p] [dt1 [dt2]]`.
    Alltoallv {
        sendcounts: Vec<u64>,
        recvcounts: Vec<u64>,
        dt1: Dt,
        dt2: Dt,
    },
}

/// The actions SimGrid's replay registers, as written in traces.
pub const NAMES: [&str; 31] = [
    "init",
    "finalize",
    "comm_size",
    "comm_split",
    "comm_dup",
    "location",
    "send",
    "isend",
    "recv",
    "irecv",
    "wait",
    "test",
    "waitall",
    "sendRecv",
    "compute",
    "sleep",
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "scan",
    "exscan",
    "alltoall",
    "alltoallv",
    "gather",
    "allgather",
    "scatter",
    "gatherv",
    "allgatherv",
    "scatterv",
    "reducescatter",
];

/// The bytes of SimGrid's predefined datatypes by id (`Datatype::decode`, the ids of
/// `CREATE_MPI_DATATYPE` in smpi_datatype.cpp), at their LP64 (x86-64 Linux) sizes.
const DATATYPE_SIZES: [u64; 60] = [
    8, 4, 1, 2, 8, 4, 1, 8, 1,
    1, // 0-9: double int char short long float byte long_long signed_char unsigned_char
    2, 4, 8, 8, 16, 4, 1, 1, 2,
    4, // 10-19: ushort unsigned ulong ull long_double wchar c_bool int8 int16 int32
    8, 1, 2, 4, 8, 8, 16, 32, 8,
    8, // 20-29: int64 uint8..uint64 c_float_complex c_double_complex c_long_double_complex aint offset
    8, 16, 16, 8, 8, 8, 16, 16, 4,
    4, // 30-39: float_int long_int double_int short_int 2int 2float 2double 2long real real4
    8, 16, 8, 16, 16, 4, 2, 4, 8,
    16, // 40-49: real8 real16 complex8 complex16 complex32 integer1 integer2 integer4 integer8 integer16
    32, 1, 8, 16, 32, 0, 0, 1, 8,
    8, // 50-59: long_double_int cxx_bool cxx_*_complex ub lb packed ptr count
];

/// The size in bytes of the datatype SimGrid numbers `id`.
pub fn datatype_size(id: &str) -> Option<u64> {
    id.parse::<usize>()
        .ok()
        .and_then(|i| DATATYPE_SIZES.get(i))
        .copied()
}

/// Reads one line's action for a trace of `p` ranks.
pub fn parse(file: &FileText, line: &Line, p: u32) -> Result<Action> {
    let a = Args { file, line, p };
    let name = line.words[1].text;
    if let Some(action) = point_to_point(&a, name)? {
        return Ok(action);
    }
    if let Some(action) = collective(&a, name)? {
        return Ok(action);
    }
    Err(file.error(
        line.words[1],
        "action",
        format!(
            "unknown action `{name}`{}",
            crate::error::did_you_mean(name, NAMES.iter().copied())
        ),
    ))
}

/// Set-up, point-to-point and time actions (`None`: not one of them).
fn point_to_point(a: &Args, name: &str) -> Result<Option<Action>> {
    Ok(Some(match name {
        "init" => {
            a.count_check(0, 1)?;
            Action::Init {
                double: a.line.words.len() > 2,
            }
        }
        "finalize" | "comm_size" | "comm_split" | "comm_dup" => {
            // SimGrid's replay ignores their arguments (every collective is on the world).
            Action::Nothing
        }
        "location" => {
            a.count_check(2, 0)?;
            a.int(3, "line")?;
            Action::Nothing
        }
        "send" | "isend" => {
            a.count_check(3, 1)?;
            Action::Send {
                blocking: name == "send",
                dst: a.rank(2, "dst")?,
                tag: a.int(3, "tag")?,
                count: a.count(4, "size")?,
                dt: a.dt(5, "datatype")?,
            }
        }
        "recv" | "irecv" => {
            a.count_check(3, 1)?;
            Action::Recv {
                blocking: name == "recv",
                src: a.rank(2, "src")?,
                tag: a.int(3, "tag")?,
                count: a.count(4, "size")?,
                dt: a.dt(5, "datatype")?,
            }
        }
        "wait" | "test" => {
            a.count_check(3, 0)?;
            let (src, dst, tag) = (a.int(2, "src")?, a.int(3, "dst")?, a.int(4, "tag")?);
            match name {
                "wait" => Action::Wait { src, dst, tag },
                _ => Action::Test { src, dst, tag },
            }
        }
        "waitall" => {
            // SimGrid's tracer writes the number of requests; the replay ignores it.
            a.count_check(0, 1)?;
            Action::WaitAll
        }
        "sendRecv" => {
            a.count_check(4, 2)?;
            Action::SendRecv {
                send: a.count(2, "sendcount")?,
                dst: a.rank(3, "dst")?,
                recv: a.count(4, "recvcount")?,
                src: a.rank(5, "src")?,
                dt1: a.dt(6, "senddatatype")?,
                dt2: a.dt(7, "recvdatatype")?,
            }
        }
        "compute" => {
            a.count_check(1, 0)?;
            Action::Compute {
                flops: a.real(2, "flops")?,
            }
        }
        "sleep" => {
            a.count_check(1, 0)?;
            Action::Sleep {
                seconds: a.real(2, "seconds")?,
            }
        }
        _ => return Ok(None),
    }))
}

/// Collective actions (`None`: not one of them).
fn collective(a: &Args, name: &str) -> Result<Option<Action>> {
    let pu = a.p as usize;
    Ok(Some(match name {
        "barrier" => {
            a.count_check(0, 0)?;
            Action::Barrier
        }
        "bcast" => {
            a.count_check(1, 2)?;
            Action::Bcast {
                count: a.count(2, "size")?,
                root: a.root(3)?,
                dt: a.dt(4, "datatype")?,
            }
        }
        "reduce" => {
            a.count_check(2, 2)?;
            Action::Reduce {
                count: a.count(2, "size")?,
                flops: a.real(3, "flops")?,
                root: a.root(4)?,
                dt: a.dt(5, "datatype")?,
            }
        }
        "allreduce" => {
            a.count_check(2, 1)?;
            Action::Allreduce {
                count: a.count(2, "size")?,
                flops: a.real(3, "flops")?,
                dt: a.dt(4, "datatype")?,
            }
        }
        "scan" | "exscan" => {
            a.count_check(2, 1)?;
            Action::Scan {
                exclusive: name == "exscan",
                count: a.count(2, "size")?,
                flops: a.real(3, "flops")?,
                dt: a.dt(4, "datatype")?,
            }
        }
        "alltoall" => {
            a.count_check(2, 2)?;
            Action::Alltoall {
                send: a.count(2, "sendcount")?,
                recv: a.count(3, "recvcount")?,
                dt1: a.dt(4, "senddatatype")?,
                dt2: a.dt(5, "recvdatatype")?,
            }
        }
        "gather" | "allgather" => {
            let all = name == "allgather";
            a.count_check(2, if all { 2 } else { 3 })?;
            let (root, d) = if all { (0, 4) } else { (a.root(4)?, 5) };
            Action::Gather {
                all,
                send: a.count(2, "sendcount")?,
                recv: a.count(3, "recvcount")?,
                root,
                dt1: a.dt(d, "senddatatype")?,
                dt2: a.dt(d + 1, "recvdatatype")?,
            }
        }
        "scatter" => {
            a.count_check(2, 3)?;
            Action::Scatter {
                send: a.count(2, "sendcount")?,
                recv: a.count(3, "recvcount")?,
                root: a.root(4)?,
                dt1: a.dt(5, "senddatatype")?,
                dt2: a.dt(6, "recvdatatype")?,
            }
        }
        "gatherv" => {
            a.count_check(pu + 1, 3)?;
            Action::Gatherv {
                all: false,
                send: a.count(2, "sendcount")?,
                recvcounts: a.counts(3, "recvcounts")?,
                root: a.root(3 + pu)?,
                dt1: a.dt(4 + pu, "senddatatype")?,
                dt2: a.dt(5 + pu, "recvdatatype")?,
            }
        }
        "allgatherv" => {
            // SimGrid: `send recvcounts[p]`, then the two datatypes, the displacements, or
            // both (datatypes first); the displacements do not change the traffic.
            a.count_check(pu + 1, pu + 2)?;
            let n = a.line.words.len();
            let (dt1, dt2) = if n > 3 + 2 * pu {
                a.counts(5 + pu, "displacements")?;
                (a.dt(3 + pu, "senddatatype")?, a.dt(4 + pu, "recvdatatype")?)
            } else if n > 3 + pu + 2 {
                a.counts(3 + pu, "displacements")?;
                (None, None)
            } else {
                (a.dt(3 + pu, "senddatatype")?, a.dt(4 + pu, "recvdatatype")?)
            };
            Action::Gatherv {
                all: true,
                send: a.count(2, "sendcount")?,
                recvcounts: a.counts(3, "recvcounts")?,
                root: 0,
                dt1,
                dt2,
            }
        }
        "scatterv" => {
            a.count_check(pu + 1, 3)?;
            Action::Scatterv {
                sendcounts: a.counts(2, "sendcounts")?,
                recv: a.count(2 + pu, "recvcount")?,
                root: a.root(3 + pu)?,
                dt1: a.dt(4 + pu, "senddatatype")?,
                dt2: a.dt(5 + pu, "recvdatatype")?,
            }
        }
        "reducescatter" => {
            a.count_check(pu + 1, 1)?;
            Action::ReduceScatter {
                recvcounts: a.counts(2, "recvcounts")?,
                flops: a.real(2 + pu, "flops")?,
                dt: a.dt(3 + pu, "datatype")?,
            }
        }
        "alltoallv" => {
            a.count_check(2 * pu + 2, 2)?;
            a.count(2, "sendbuffer")?;
            a.count(3 + pu, "recvbuffer")?;
            Action::Alltoallv {
                sendcounts: a.counts(3, "sendcounts")?,
                recvcounts: a.counts(4 + pu, "recvcounts")?,
                dt1: a.dt(4 + 2 * pu, "senddatatype")?,
                dt2: a.dt(5 + 2 * pu, "recvdatatype")?,
            }
        }
        _ => return Ok(None),
    }))
}

/// The arguments of one line.
struct Args<'a, 'b> {
    file: &'a FileText<'b>,
    line: &'a Line<'b>,
    p: u32,
}

impl Args<'_, '_> {
    fn word(&self, i: usize) -> Option<Word<'_>> {
        self.line.words.get(i).copied()
    }

    fn err(&self, i: usize, field: &str, message: String) -> Error {
        let w = self.word(i).unwrap_or(self.line.words[1]);
        self.file.error(w, field, message)
    }

    /// Checks the argument count: `mandatory` after the action, at most `optional` more.
    fn count_check(&self, mandatory: usize, optional: usize) -> Result<()> {
        let given = self.line.words.len() - 2;
        let name = self.line.words[1].text;
        if given < mandatory || given > mandatory + optional {
            let want = match optional {
                0 => format!("{mandatory}"),
                _ => format!("{mandatory} to {}", mandatory + optional),
            };
            let at = if given < mandatory {
                self.line.words.len() - 1
            } else {
                2 + mandatory + optional
            };
            return Err(self.err(
                at,
                "arguments",
                format!(
                    "`{name}` takes {want} arguments{}, found {given}",
                    self.usage(name)
                ),
            ));
        }
        Ok(())
    }

    /// How action `name` is written (for argument-count errors).
    fn usage(&self, name: &str) -> String {
        let u = match name {
            "init" => "[x]",
            "location" => "file line",
            "send" | "isend" => "dst tag size [datatype]",
            "recv" | "irecv" => "src tag size [datatype]",
            "wait" | "test" => "src dst tag",
            "waitall" => "[count]",
            "sendRecv" => "sendcount dst recvcount src [dt1 [dt2]]",
            "compute" => "flops",
            "sleep" => "seconds",
            "barrier" => "",
            "bcast" => "size [root [datatype]]",
            "reduce" => "size flops [root [datatype]]",
            "allreduce" | "scan" | "exscan" => "size flops [datatype]",
            "alltoall" | "allgather" => "sendcount recvcount [dt1 [dt2]]",
            "gather" | "scatter" => "sendcount recvcount [root [dt1 [dt2]]]",
            "gatherv" => "sendcount recvcounts... [root [dt1 [dt2]]]",
            "allgatherv" => "sendcount recvcounts... [dt1 dt2] [displacements...]",
            "scatterv" => "sendcounts... recvcount [root [dt1 [dt2]]]",
            "reducescatter" => "recvcounts... flops [datatype]",
            "alltoallv" => "sendbuffer sendcounts... recvbuffer recvcounts... [dt1 [dt2]]",
            _ => return String::new(),
        };
        let counts = if u.contains("...") {
            format!(", with {} values in each `...` (one per rank)", self.p)
        } else {
            String::new()
        };
        format!(" (`{name} {u}`{counts})")
    }

    fn real(&self, i: usize, field: &str) -> Result<f64> {
        let Some(w) = self.word(i) else {
            return Ok(0.0);
        };
        match w.text.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
            _ => Err(self.err(
                i,
                field,
                format!(
                    "expected a number of 0 or more (e.g. 1e6), found `{}`",
                    w.text
                ),
            )),
        }
    }

    /// A count: a number of 0 or more, maybe written `1e6`; a fraction is dropped (as
    /// SimGrid's `parse_integer`).
    fn count(&self, i: usize, field: &str) -> Result<u64> {
        let v = self.real(i, field)?.trunc();
        if v > (1u64 << 53) as f64 {
            return Err(self.err(i, field, format!("count {v} is too large")));
        }
        Ok(v as u64)
    }

    fn counts(&self, first: usize, field: &str) -> Result<Vec<u64>> {
        (first..first + self.p as usize)
            .map(|i| self.count(i, field))
            .collect()
    }

    fn int(&self, i: usize, field: &str) -> Result<i64> {
        let Some(w) = self.word(i) else {
            return Ok(0);
        };
        w.text.parse::<i64>().map_err(|_| {
            self.err(
                i,
                field,
                format!("expected a whole number, found `{}`", w.text),
            )
        })
    }

    fn rank(&self, i: usize, field: &str) -> Result<u32> {
        let v = self.int(i, field)?;
        match u32::try_from(v) {
            Ok(r) if r < self.p => Ok(r),
            _ => Err(self.err(
                i,
                field,
                format!(
                    "rank {v} is not a rank of the trace (it has {} ranks, 0 to {})",
                    self.p,
                    self.p - 1
                ),
            )),
        }
    }

    /// The root of a rooted collective (0 when not given).
    fn root(&self, i: usize) -> Result<u32> {
        match self.word(i) {
            Some(_) => self.rank(i, "root"),
            None => Ok(0),
        }
    }

    fn dt(&self, i: usize, field: &str) -> Result<Dt> {
        let Some(w) = self.word(i) else {
            return Ok(None);
        };
        match datatype_size(w.text) {
            Some(s) => Ok(Some(s)),
            None => Err(self.err(
                i,
                field,
                format!(
                    "unknown datatype `{}`: expected SimGrid's id of a predefined datatype, 0 to {} (0 is MPI_DOUBLE, 1 MPI_INT, 6 MPI_BYTE)",
                    w.text,
                    DATATYPE_SIZES.len() - 1
                ),
            )),
        }
    }
}
