//! Collective-communication algorithms.
//!
//! A collective call (a barrier, a broadcast, an all-to-all, ...) on a communicator of `p`
//! ranks is expanded, for one rank (its index `me` in the communicator), into a list of
//! point-to-point [`Step`]s that the simulator executes. Everything here is a pure function
//! of the [`CollSpec`], `p` and `me`; there is no simulator state.
//!
//! [`resolve`] turns the algorithm named in a spec (or `"auto"`) into a concrete algorithm
//! name after checking it against the collective kind, the number of ranks and the
//! transport; [`expand`] then produces the steps of one rank.
//!
//! Conventions shared by all algorithms:
//! * ranks are communicator indices `0..p`; rooted collectives work on ranks relative to the
//!   root (`rel = (me - root) mod p`) and map back when they emit a step;
//! * every message-passing phase ends with a [`Step::WaitAll`], and a rank's list never ends
//!   with an outstanding send or receive;
//! * tags are below 2^16 and distinguish the phases of one call; messages with the same
//!   (source, destination, tag) are matched in FIFO order;
//! * with `p == 1` every collective has no steps.

use std::fmt;

/// The kinds of collective operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CollKind {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    Alltoall,
    Allgather,
    Gather,
    Scatter,
    /// Inclusive and exclusive prefix reductions.
    Scan,
    Exscan,
    /// The v-variants: sizes per rank (see [`expand_with`]).
    Gatherv,
    Scatterv,
    Allgatherv,
    Alltoallv,
    /// Reduce, then each rank keeps its block (`MPI_Reduce_scatter(_block)`).
    ReduceScatter,
}

impl CollKind {
    /// Every kind, in declaration order.
    pub const ALL: [CollKind; 15] = [
        CollKind::Barrier,
        CollKind::Bcast,
        CollKind::Reduce,
        CollKind::Allreduce,
        CollKind::Alltoall,
        CollKind::Allgather,
        CollKind::Gather,
        CollKind::Scatter,
        CollKind::Scan,
        CollKind::Exscan,
        CollKind::Gatherv,
        CollKind::Scatterv,
        CollKind::Allgatherv,
        CollKind::Alltoallv,
        CollKind::ReduceScatter,
    ];

    /// The lower-case name used in programs and configuration files.
    pub fn name(self) -> &'static str {
        match self {
            CollKind::Barrier => "barrier",
            CollKind::Bcast => "bcast",
            CollKind::Reduce => "reduce",
            CollKind::Allreduce => "allreduce",
            CollKind::Alltoall => "alltoall",
            CollKind::Allgather => "allgather",
            CollKind::Gather => "gather",
            CollKind::Scatter => "scatter",
            CollKind::Scan => "scan",
            CollKind::Exscan => "exscan",
            CollKind::Gatherv => "gatherv",
            CollKind::Scatterv => "scatterv",
            CollKind::Allgatherv => "allgatherv",
            CollKind::Alltoallv => "alltoallv",
            CollKind::ReduceScatter => "reduce_scatter",
        }
    }

    /// Parses a kind name (ASCII case-insensitive, surrounding white space ignored).
    pub fn parse(s: &str) -> Option<CollKind> {
        let s = s.trim();
        CollKind::ALL
            .iter()
            .copied()
            .find(|k| k.name().eq_ignore_ascii_case(s))
    }

    /// The concrete algorithms available for this kind.
    pub fn algorithms(self) -> &'static [&'static str] {
        match self {
            CollKind::Barrier => &["ring", "recursive_doubling", "dissemination", "binomial"],
            CollKind::Bcast => &["binomial", "pipelined", "scatter_allgather"],
            CollKind::Reduce => &["binomial", "pipelined"],
            CollKind::Allreduce => &["recursive_doubling", "ring", "rabenseifner"],
            CollKind::Alltoall => &["simple_spread", "spread_2d", "pairwise", "bruck"],
            CollKind::Allgather => &["ring", "recursive_doubling"],
            CollKind::Gather => &["binomial"],
            CollKind::Scatter => &["binomial"],
            CollKind::Scan | CollKind::Exscan => &["recursive_doubling"],
            CollKind::Gatherv | CollKind::Scatterv => &["linear"],
            CollKind::Allgatherv => &["ring"],
            CollKind::Alltoallv | CollKind::ReduceScatter => &["pairwise"],
        }
    }

    /// Whether the collective has a root rank.
    pub fn is_rooted(self) -> bool {
        matches!(
            self,
            CollKind::Bcast
                | CollKind::Reduce
                | CollKind::Gather
                | CollKind::Scatter
                | CollKind::Gatherv
                | CollKind::Scatterv
        )
    }

    /// Whether the calls of the ranks carry sizes per rank that differ between ranks (the
    /// v-variants and reduce_scatter): each rank's expansion uses its own sizes.
    pub fn has_rank_sizes(self) -> bool {
        matches!(
            self,
            CollKind::Gatherv
                | CollKind::Scatterv
                | CollKind::Allgatherv
                | CollKind::Alltoallv
                | CollKind::ReduceScatter
        )
    }
}

impl fmt::Display for CollKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the steps of a collective move data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Two-sided messages (`Send`/`Recv`/`WaitAll`).
    Msg,
    /// One-sided RDMA puts (`Put`/`Poll`/`CompleteAll`); only valid for barriers.
    Rdma,
}

/// One collective call as written in a program.
#[derive(Debug, Clone, PartialEq)]
pub struct CollSpec {
    pub kind: CollKind,
    /// `"auto"` or a concrete name from [`CollKind::algorithms`].
    pub algorithm: String,
    pub transport: Transport,
    /// Bytes: barrier: ignored; bcast/reduce/allreduce: the whole buffer; alltoall: per
    /// destination (each rank sends `size` to every other rank); allgather/gather:
    /// contributed by each rank; scatter: received by each rank; scan/exscan: the buffer;
    /// gatherv: sent by this rank; scatterv: received by this rank; allgatherv: contributed
    /// by this rank; alltoallv, reduce_scatter: every block (when no sizes per rank are given,
    /// see [`expand_with`]).
    pub size: u64,
    /// Index in the communicator (bcast, reduce, gather, scatter).
    pub root: u32,
    /// Segment size for pipelined algorithms (> 0).
    pub segment: u64,
}

/// One point-to-point action of a rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Non-blocking send of `bytes` to communicator index `to`. `tag` is small (< 2^16) and
    /// distinguishes the steps of one collective call.
    Send { to: u32, bytes: u64, tag: u32 },
    /// Non-blocking receive of `bytes` from index `from` with `tag`.
    Recv { from: u32, bytes: u64, tag: u32 },
    /// Wait for every Send/Recv issued since the previous WaitAll.
    WaitAll,
    /// RDMA put of `bytes` to `to`, tagged; non-blocking.
    Put { to: u32, bytes: u64, tag: u32 },
    /// Block until a put with `tag` has landed here (each landed put satisfies one poll).
    Poll { tag: u32 },
    /// Wait until every put issued by this rank in this collective has completed.
    CompleteAll,
    /// Reduction work on `bytes` bytes (the simulator charges a per-byte compute cost).
    Reduce { bytes: u64 },
}

/// Bytes of a barrier message with the message transport.
pub const BARRIER_MSG_BYTES: u64 = 0;
/// Bytes of a barrier put with the RDMA transport.
pub const BARRIER_RDMA_BYTES: u64 = 4;

/// `bcast` "auto": binomial below this size (or with fewer than 8 ranks).
pub const BCAST_SHORT: u64 = 12 * 1024;
/// `reduce` "auto": binomial below this size.
pub const REDUCE_SHORT: u64 = 64 * 1024;
/// `allreduce` "auto": recursive doubling up to this size.
pub const ALLREDUCE_SHORT: u64 = 2 * 1024;
/// `alltoall` "auto": Bruck up to this size per destination.
pub const ALLTOALL_SHORT: u64 = 256;
/// `allgather` "auto": recursive doubling (power-of-two p) below this total size.
pub const ALLGATHER_SHORT: u64 = 512 * 1024;

/// Checks a machine's default algorithm for `kind`: `auto` or one of the kind's algorithms
/// (constraints on the rank count are checked per call by [`resolve`]).
pub fn check_configured(kind: CollKind, name: &str) -> Result<(), String> {
    let name = name.trim();
    if name.eq_ignore_ascii_case("auto")
        || kind
            .algorithms()
            .iter()
            .any(|a| a.eq_ignore_ascii_case(name))
    {
        return Ok(());
    }
    Err(format!(
        "unknown {kind} algorithm '{name}' (expected auto, {})",
        kind.algorithms().join(", ")
    ))
}

/// Chooses the concrete algorithm: validates a given name against kind/p/transport
/// constraints, or picks the default for "auto" by kind, p and size. Errors are
/// user-facing strings.
pub fn resolve(spec: &CollSpec, p: u32) -> Result<&'static str, String> {
    let kind = spec.kind;
    if p == 0 {
        return Err(format!("a {kind} needs at least one rank (p = 0)"));
    }
    if spec.transport == Transport::Rdma && kind != CollKind::Barrier {
        return Err(format!(
            "rdma transport is only supported for barrier, not {kind}"
        ));
    }
    if kind.is_rooted() && spec.root >= p {
        return Err(format!(
            "{kind} root {} is out of range (p = {p})",
            spec.root
        ));
    }
    let requested = spec.algorithm.trim();
    let name: &'static str = if requested.eq_ignore_ascii_case("auto") {
        default_algorithm(kind, spec.size, p)
    } else {
        match kind
            .algorithms()
            .iter()
            .find(|a| a.eq_ignore_ascii_case(requested))
        {
            Some(a) => a,
            None => {
                return Err(format!(
                    "unknown {kind} algorithm '{requested}' ({kind} algorithms: {})",
                    kind.algorithms().join(", ")
                ))
            }
        }
    };
    match (kind, name) {
        (CollKind::Alltoall, "pairwise") | (CollKind::Allgather, "recursive_doubling")
            if !p.is_power_of_two() =>
        {
            Err(format!(
                "{name} {kind} needs a power-of-two number of ranks (p = {p})"
            ))
        }
        (CollKind::Alltoall, "spread_2d") if exact_sqrt(u64::from(p)).is_none() => Err(format!(
            "spread_2d alltoall needs a square number of ranks (p = n * n; p = {p})"
        )),
        (_, "pipelined") if spec.segment == 0 => Err(format!(
            "pipelined {kind} needs a segment size greater than 0"
        )),
        _ => Ok(name),
    }
}

fn default_algorithm(kind: CollKind, size: u64, p: u32) -> &'static str {
    match kind {
        CollKind::Barrier => "recursive_doubling",
        CollKind::Bcast => {
            if size < BCAST_SHORT || p < 8 {
                "binomial"
            } else {
                "scatter_allgather"
            }
        }
        CollKind::Reduce => {
            if size < REDUCE_SHORT {
                "binomial"
            } else {
                "pipelined"
            }
        }
        CollKind::Allreduce => {
            if size <= ALLREDUCE_SHORT {
                "recursive_doubling"
            } else {
                "rabenseifner"
            }
        }
        CollKind::Alltoall => {
            if size <= ALLTOALL_SHORT {
                "bruck"
            } else if p.is_power_of_two() {
                "pairwise"
            } else {
                "simple_spread"
            }
        }
        CollKind::Allgather => {
            if p.is_power_of_two() && size.saturating_mul(u64::from(p)) < ALLGATHER_SHORT {
                "recursive_doubling"
            } else {
                "ring"
            }
        }
        CollKind::Gather | CollKind::Scatter => "binomial",
        CollKind::Scan | CollKind::Exscan => "recursive_doubling",
        CollKind::Gatherv | CollKind::Scatterv => "linear",
        CollKind::Allgatherv => "ring",
        CollKind::Alltoallv | CollKind::ReduceScatter => "pairwise",
    }
}

/// The steps of rank `me` (0 <= me < p) for an already resolved algorithm.
///
/// # Panics
/// If `me >= p`, if `algorithm` is not an algorithm of `spec.kind`, or if the algorithm's
/// constraints on `p` (checked by [`resolve`]) do not hold.
pub fn expand(spec: &CollSpec, algorithm: &str, p: u32, me: u32) -> Vec<Step> {
    expand_with(spec, &[], algorithm, p, me)
}

/// [`expand`] for a rank whose call carries byte counts per rank (`sizes`; empty: every
/// count is `spec.size`), as the v-variants do. What `sizes` holds, as rank `me` knows it:
/// * gatherv: at the root, the bytes received from each rank (`p` entries);
/// * scatterv: at the root, the bytes sent to each rank (`p` entries);
/// * allgatherv, reduce_scatter: the block of each rank (`p` entries);
/// * alltoallv: the bytes sent to each rank, then the bytes received from each (`2p`).
///
/// A missing entry counts `spec.size`.
pub fn expand_with(spec: &CollSpec, sizes: &[u64], algorithm: &str, p: u32, me: u32) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut gen = StepGen::new(spec, algorithm, p, me);
    while gen.next_round(sizes, &mut steps) {}
    steps
}

/// The steps of one rank's collective, generated a round at a time as the rank reaches
/// them: a rank of a 2,704-rank all-to-all holds the two messages of its current round,
/// not the 5,406 of the whole call. The rounds of an algorithm are those of its loop (one
/// exchange each); an algorithm of a few steps is one round.
#[derive(Debug, Clone)]
pub struct StepGen {
    algo: Algo,
    p: u64,
    me: u64,
    root: u64,
    size: u64,
    segment: u64,
    /// The next round, and how many there are.
    round: u64,
    rounds: u64,
    builder: Builder,
}

impl StepGen {
    /// Rank `me`'s steps (0 <= me < p) of `spec` with the already resolved `algorithm`.
    ///
    /// # Panics
    /// If `me >= p`, if `algorithm` is not an algorithm of `spec.kind`, or if the
    /// algorithm's constraints on `p` (checked by [`resolve`]) do not hold.
    pub fn new(spec: &CollSpec, algorithm: &str, p: u32, me: u32) -> StepGen {
        assert!(me < p, "rank {me} out of range (p = {p})");
        let algo = algo(spec.kind, algorithm);
        let rdma = spec.kind == CollKind::Barrier && spec.transport == Transport::Rdma;
        let mut gen = StepGen {
            algo,
            p: u64::from(p),
            me: u64::from(me),
            root: u64::from(spec.root) % u64::from(p),
            size: spec.size,
            segment: spec.segment.max(1),
            round: 0,
            rounds: 0,
            builder: Builder::new(rdma),
        };
        gen.rounds = match (p, gen.algo) {
            (1, _) => 0,
            (_, Algo::Whole(_)) => 1,
            (_, Algo::Rounds(count, _)) => count(&gen.ctx(&[])),
        };
        gen
    }

    /// The rank's place in its communicator.
    pub fn me(&self) -> u32 {
        self.me as u32
    }

    /// The rounds generated so far.
    pub fn rounds_done(&self) -> u64 {
        self.round
    }

    fn ctx<'s>(&self, sizes: &'s [u64]) -> Ctx<'s> {
        Ctx {
            p: self.p,
            me: self.me,
            root: self.root,
            size: self.size,
            segment: self.segment,
            sizes,
        }
    }

    /// Appends the steps of the next round to `out` (the last round ends with what the
    /// call leaves outstanding waited for); false once every round has been generated.
    /// `sizes` are the rank's sizes per rank of a v-variant (see [`expand_with`]).
    pub fn next_round(&mut self, sizes: &[u64], out: &mut Vec<Step>) -> bool {
        if self.round >= self.rounds {
            return false;
        }
        let c = self.ctx(sizes);
        let b = &mut self.builder;
        std::mem::swap(&mut b.steps, out);
        match self.algo {
            Algo::Whole(f) => f(&c, b),
            Algo::Rounds(_, f) => f(&c, self.round, b),
        }
        self.round += 1;
        if self.round == self.rounds {
            b.finish();
        }
        std::mem::swap(&mut b.steps, out);
        true
    }
}

/// An algorithm: all its steps at once, or (an algorithm of order p steps) its number of
/// rounds and the steps of round `k`, in the order its loop gives them.
#[derive(Debug, Clone, Copy)]
enum Algo {
    Whole(fn(&Ctx, &mut Builder)),
    Rounds(fn(&Ctx) -> u64, fn(&Ctx, u64, &mut Builder)),
}

/// The algorithm `algorithm` of `kind`.
fn algo(kind: CollKind, algorithm: &str) -> Algo {
    use Algo::{Rounds, Whole};
    let p_minus_1 = |c: &Ctx| c.p - 1;
    match (kind, algorithm) {
        (CollKind::Barrier, "ring") => Rounds(p_minus_1, barrier_ring),
        (CollKind::Barrier, "recursive_doubling") => Whole(barrier_recursive_doubling),
        (CollKind::Barrier, "dissemination") => Whole(barrier_dissemination),
        (CollKind::Barrier, "binomial") => Whole(barrier_binomial),
        (CollKind::Bcast, "binomial") => Whole(bcast_binomial),
        (CollKind::Bcast, "pipelined") => Rounds(|c| c.nseg(), bcast_pipelined),
        (CollKind::Bcast, "scatter_allgather") => Rounds(|c| c.p, bcast_scatter_allgather),
        (CollKind::Reduce, "binomial") => Whole(reduce_binomial),
        (CollKind::Reduce, "pipelined") => Rounds(|c| c.nseg(), reduce_pipelined),
        (CollKind::Allreduce, "recursive_doubling") => Whole(allreduce_recursive_doubling),
        (CollKind::Allreduce, "ring") => Rounds(|c| 2 * (c.p - 1), allreduce_ring),
        (CollKind::Allreduce, "rabenseifner") => Whole(allreduce_rabenseifner),
        (CollKind::Alltoall, "simple_spread") => Rounds(p_minus_1, alltoall_simple_spread),
        (CollKind::Alltoall, "spread_2d") => Rounds(spread_2d_rounds, alltoall_spread_2d),
        (CollKind::Alltoall, "pairwise") => Rounds(pairwise_rounds, alltoall_pairwise),
        (CollKind::Alltoall, "bruck") => Whole(alltoall_bruck),
        (CollKind::Allgather, "ring") => Rounds(p_minus_1, allgather_ring),
        (CollKind::Allgather, "recursive_doubling") => Whole(allgather_recursive_doubling),
        (CollKind::Gather, "binomial") => Whole(gather_binomial),
        (CollKind::Scatter, "binomial") => Whole(scatter_binomial),
        (CollKind::Scan | CollKind::Exscan, "recursive_doubling") => Whole(scan_recursive_doubling),
        (CollKind::Gatherv, "linear") => Rounds(linear_rounds, gatherv_linear),
        (CollKind::Scatterv, "linear") => Rounds(linear_rounds, scatterv_linear),
        (CollKind::Allgatherv, "ring") => Rounds(p_minus_1, allgatherv_ring),
        (CollKind::Alltoallv, "pairwise") => Rounds(p_minus_1, alltoallv_pairwise),
        (CollKind::ReduceScatter, "pairwise") => Rounds(p_minus_1, reduce_scatter_pairwise),
        (kind, other) => panic!(
            "unknown {kind} algorithm '{other}' ({kind} algorithms: {})",
            kind.algorithms().join(", ")
        ),
    }
}

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// The parameters of one expansion, in `u64` so that index arithmetic cannot overflow.
struct Ctx<'s> {
    p: u64,
    me: u64,
    root: u64,
    size: u64,
    segment: u64,
    /// Bytes per rank of the v-variants (see [`expand_with`]).
    sizes: &'s [u64],
}

impl Ctx<'_> {
    /// Entry `i` of the sizes per rank, `size` when the call gave none.
    fn count(&self, i: u64) -> u64 {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.sizes.get(i))
            .copied()
            .unwrap_or(self.size)
    }

    /// `me` relative to the root.
    fn rel(&self) -> u64 {
        (self.me + self.p - self.root) % self.p
    }

    /// The communicator index of relative rank `rel`.
    fn abs(&self, rel: u64) -> u64 {
        (rel + self.root) % self.p
    }

    /// `(me + d) mod p`, `d` may exceed `p`.
    fn plus(&self, d: u64) -> u64 {
        (self.me + d % self.p) % self.p
    }

    /// `(me - d) mod p`, `d` may exceed `p`.
    fn minus(&self, d: u64) -> u64 {
        (self.me + self.p - d % self.p) % self.p
    }

    /// Number of segments of the pipelined algorithms (at least one, even for size 0).
    fn nseg(&self) -> u64 {
        self.size.div_ceil(self.segment).max(1)
    }

    /// Bytes of segment `k`.
    fn seg_bytes(&self, k: u64) -> u64 {
        self.size.saturating_sub(k * self.segment).min(self.segment)
    }
}

/// Tags are kept below 2^16; FIFO matching keeps wrapped tags correct.
fn tag(t: u64) -> u32 {
    (t & 0xFFFF) as u32
}

fn idx(r: u64) -> u32 {
    u32::try_from(r).expect("rank index fits in u32")
}

/// `ceil(log2 p)` for `p >= 1`.
fn ceil_log2(p: u64) -> u32 {
    if p <= 1 {
        0
    } else {
        64 - (p - 1).leading_zeros()
    }
}

/// `floor(log2 p)` for `p >= 1`.
fn floor_log2(p: u64) -> u32 {
    63 - p.leading_zeros()
}

/// The integer square root of `p` if `p` is a perfect square.
fn exact_sqrt(p: u64) -> Option<u64> {
    let mut n = (p as f64).sqrt() as u64;
    while n * n > p {
        n -= 1;
    }
    while (n + 1) * (n + 1) <= p {
        n += 1;
    }
    (n * n == p).then_some(n)
}

/// Bytes of blocks `lo..hi` when `size` bytes are cut into blocks of `block` bytes (the
/// last non-empty block may be shorter, later blocks are empty).
fn range_bytes(size: u64, block: u64, lo: u64, hi: u64) -> u64 {
    size.min(hi.saturating_mul(block)) - size.min(lo.saturating_mul(block))
}

/// Lowest set bit of a relative rank; the root (0) owns the whole tree.
fn lowbit(rel: u64, p: u64) -> u64 {
    if rel == 0 {
        p.next_power_of_two()
    } else {
        rel & rel.wrapping_neg()
    }
}

/// Parent of a non-root relative rank in the binomial tree rooted at 0.
fn binomial_parent(rel: u64) -> u64 {
    rel - (rel & rel.wrapping_neg())
}

/// Children of a relative rank in the binomial tree, in increasing distance
/// (the order of a fan-in; a fan-out uses the reverse).
fn binomial_children(rel: u64, p: u64) -> Vec<u64> {
    let limit = lowbit(rel, p);
    let mut out = Vec::new();
    let mut mask = 1;
    while mask < limit && mask < p {
        if rel + mask < p {
            out.push(rel + mask);
        }
        mask <<= 1;
    }
    out
}

/// Number of ranks in the binomial subtree of relative rank `rel`.
fn binomial_subtree(rel: u64, p: u64) -> u64 {
    if rel == 0 {
        p
    } else {
        lowbit(rel, p).min(p - rel)
    }
}

/// Accumulates the steps of one rank; hides the transport of barriers.
#[derive(Debug, Clone)]
struct Builder {
    steps: Vec<Step>,
    rdma: bool,
    outstanding: bool,
    /// Whether any step was emitted (rdma: the call then ends with `CompleteAll`).
    emitted: bool,
}

impl Builder {
    fn new(rdma: bool) -> Builder {
        Builder {
            steps: Vec::new(),
            rdma,
            outstanding: false,
            emitted: false,
        }
    }

    fn send(&mut self, to: u64, bytes: u64, t: u64) {
        let (to, tag) = (idx(to), tag(t));
        self.emitted = true;
        if self.rdma {
            self.steps.push(Step::Put { to, bytes, tag });
        } else {
            self.steps.push(Step::Send { to, bytes, tag });
            self.outstanding = true;
        }
    }

    fn recv(&mut self, from: u64, bytes: u64, t: u64) {
        let (from, tag) = (idx(from), tag(t));
        self.emitted = true;
        if self.rdma {
            self.steps.push(Step::Poll { tag });
        } else {
            self.steps.push(Step::Recv { from, bytes, tag });
            self.outstanding = true;
        }
    }

    /// Ends a phase: a `WaitAll` if sends or receives are outstanding (message transport).
    fn wait(&mut self) {
        if self.outstanding {
            self.steps.push(Step::WaitAll);
            self.outstanding = false;
        }
    }

    /// Send and receive in one phase.
    fn exchange(&mut self, to: u64, send_bytes: u64, from: u64, recv_bytes: u64, t: u64) {
        self.send(to, send_bytes, t);
        self.recv(from, recv_bytes, t);
        self.wait();
    }

    fn reduce(&mut self, bytes: u64) {
        self.emitted = true;
        self.steps.push(Step::Reduce { bytes });
    }

    fn barrier_bytes(&self) -> u64 {
        if self.rdma {
            BARRIER_RDMA_BYTES
        } else {
            BARRIER_MSG_BYTES
        }
    }

    /// Ends the call: what is outstanding is waited for (puts completed).
    fn finish(&mut self) {
        self.wait();
        if self.rdma && self.emitted {
            self.steps.push(Step::CompleteAll);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Barrier
// ---------------------------------------------------------------------------------------

/// p-1 steps: notify the successor, wait for the predecessor.
fn barrier_ring(c: &Ctx, k: u64, b: &mut Builder) {
    let bytes = b.barrier_bytes();
    b.exchange(c.plus(1), bytes, c.minus(1), bytes, k);
}

/// p = 2^n + r: the r extra ranks fold into ranks 0..r, the 2^n ranks run n exchange
/// rounds (partner me XOR 2^k), then the extra ranks are released.
fn barrier_recursive_doubling(c: &Ctx, b: &mut Builder) {
    let bytes = b.barrier_bytes();
    let n = u64::from(floor_log2(c.p));
    let pof2 = 1u64 << n;
    let r = c.p - pof2;
    let (t_before, t_after) = (0, n + 1);
    if c.me >= pof2 {
        b.send(c.me - pof2, bytes, t_before);
        b.wait();
        b.recv(c.me - pof2, bytes, t_after);
        b.wait();
        return;
    }
    if c.me < r {
        b.recv(c.me + pof2, bytes, t_before);
        b.wait();
    }
    for k in 0..n {
        let partner = c.me ^ (1 << k);
        b.exchange(partner, bytes, partner, bytes, 1 + k);
    }
    if c.me < r {
        b.send(c.me + pof2, bytes, t_after);
        b.wait();
    }
}

/// ceil(log2 p) rounds: round k notifies me+2^k and waits for me-2^k.
fn barrier_dissemination(c: &Ctx, b: &mut Builder) {
    let bytes = b.barrier_bytes();
    for k in 0..u64::from(ceil_log2(c.p)) {
        b.exchange(c.plus(1 << k), bytes, c.minus(1 << k), bytes, k);
    }
}

/// Fan-in to rank 0 along a binomial tree, then fan-out along the same tree.
fn barrier_binomial(c: &Ctx, b: &mut Builder) {
    let bytes = b.barrier_bytes();
    let (t_in, t_out) = (0, 1);
    let children = binomial_children(c.me, c.p);
    for &child in &children {
        b.recv(child, bytes, t_in);
        b.wait();
    }
    if c.me != 0 {
        let parent = binomial_parent(c.me);
        b.send(parent, bytes, t_in);
        b.wait();
        b.recv(parent, bytes, t_out);
        b.wait();
    }
    for &child in children.iter().rev() {
        b.send(child, bytes, t_out);
    }
    b.wait();
}

// ---------------------------------------------------------------------------------------
// Broadcast
// ---------------------------------------------------------------------------------------

/// MPICH binomial broadcast on ranks relative to the root.
fn bcast_binomial(c: &Ctx, b: &mut Builder) {
    let rel = c.rel();
    if rel != 0 {
        b.recv(c.abs(binomial_parent(rel)), c.size, 0);
        b.wait();
    }
    for &child in binomial_children(rel, c.p).iter().rev() {
        b.send(c.abs(child), c.size, 0);
    }
    b.wait();
}

/// Chain root -> root+1 -> ... in segments; each rank forwards a segment once it has it.
fn bcast_pipelined(c: &Ctx, k: u64, b: &mut Builder) {
    let rel = c.rel();
    let bytes = c.seg_bytes(k);
    if rel > 0 {
        b.recv(c.abs(rel - 1), bytes, k);
        b.wait();
    }
    if rel + 1 < c.p {
        b.send(c.abs(rel + 1), bytes, k);
    }
}

/// Binomial scatter of ceil(size/p)-byte blocks from the root (round 0), then a ring
/// allgather (rounds 1..p).
fn bcast_scatter_allgather(c: &Ctx, round: u64, b: &mut Builder) {
    let rel = c.rel();
    let p = c.p;
    let block = c.size.div_ceil(p);
    let blk = |j: u64| range_bytes(c.size, block, j, j + 1);
    if round > 0 {
        // Ring allgather: in step s pass on block rel-s, receive block rel-s-1.
        let s = round - 1;
        let send_block = (rel + p - s) % p;
        let recv_block = (rel + 2 * p - s - 1) % p;
        b.exchange(
            c.abs((rel + 1) % p),
            blk(send_block),
            c.abs((rel + p - 1) % p),
            blk(recv_block),
            1 + s,
        );
        return;
    }
    // Scatter: a subtree receives the blocks of its ranks.
    if rel != 0 {
        let n = binomial_subtree(rel, p);
        b.recv(
            c.abs(binomial_parent(rel)),
            range_bytes(c.size, block, rel, rel + n),
            0,
        );
        b.wait();
    }
    for &child in binomial_children(rel, p).iter().rev() {
        let n = binomial_subtree(child, p);
        b.send(
            c.abs(child),
            range_bytes(c.size, block, child, child + n),
            0,
        );
    }
    b.wait();
}

// ---------------------------------------------------------------------------------------
// Reduce
// ---------------------------------------------------------------------------------------

/// Binomial fan-in to the root; a parent reduces each child's buffer as it arrives.
fn reduce_binomial(c: &Ctx, b: &mut Builder) {
    let rel = c.rel();
    for &child in &binomial_children(rel, c.p) {
        b.recv(c.abs(child), c.size, 0);
        b.wait();
        b.reduce(c.size);
    }
    if rel != 0 {
        b.send(c.abs(binomial_parent(rel)), c.size, 0);
        b.wait();
    }
}

/// Chain root+p-1 -> ... -> root+1 -> root in segments, each hop reducing the segment.
fn reduce_pipelined(c: &Ctx, k: u64, b: &mut Builder) {
    let rel = c.rel();
    let bytes = c.seg_bytes(k);
    if rel + 1 < c.p {
        b.recv(c.abs(rel + 1), bytes, k);
        b.wait();
        b.reduce(bytes);
    }
    if rel > 0 {
        b.send(c.abs(rel - 1), bytes, k);
    }
}

// ---------------------------------------------------------------------------------------
// Allreduce
// ---------------------------------------------------------------------------------------

/// MPICH fold for non-powers of two: p = pof2 + rem; among the first 2*rem ranks the even
/// ones hand their data to the odd ones and sit out. Returns the new rank of `me` among
/// the pof2 participants, if it participates.
fn fold_in(c: &Ctx, b: &mut Builder, pof2: u64, t: u64) -> Option<u64> {
    let rem = c.p - pof2;
    if c.me < 2 * rem {
        if c.me & 1 == 0 {
            b.send(c.me + 1, c.size, t);
            b.wait();
            None
        } else {
            b.recv(c.me - 1, c.size, t);
            b.wait();
            b.reduce(c.size);
            Some(c.me / 2)
        }
    } else {
        Some(c.me - rem)
    }
}

/// The real rank of a new rank after the fold.
fn unfolded(newrank: u64, rem: u64) -> u64 {
    if newrank < rem {
        newrank * 2 + 1
    } else {
        newrank + rem
    }
}

/// Sends the result back to the ranks that sat out.
fn fold_out(c: &Ctx, b: &mut Builder, pof2: u64, t: u64) {
    let rem = c.p - pof2;
    if c.me < 2 * rem {
        if c.me & 1 == 1 {
            b.send(c.me - 1, c.size, t);
        } else {
            b.recv(c.me + 1, c.size, t);
        }
        b.wait();
    }
}

fn allreduce_recursive_doubling(c: &Ctx, b: &mut Builder) {
    let n = u64::from(floor_log2(c.p));
    let pof2 = 1u64 << n;
    let rem = c.p - pof2;
    if let Some(newrank) = fold_in(c, b, pof2, 0) {
        for k in 0..n {
            let partner = unfolded(newrank ^ (1 << k), rem);
            b.exchange(partner, c.size, partner, c.size, 1 + k);
            b.reduce(c.size);
        }
    }
    fold_out(c, b, pof2, n + 1);
}

/// Reduce-scatter ring (rounds 0..p-1 on ceil(size/p)-byte blocks) then allgather ring
/// (rounds p-1..2(p-1)).
fn allreduce_ring(c: &Ctx, round: u64, b: &mut Builder) {
    let p = c.p;
    let block = c.size.div_ceil(p);
    let blk = |j: u64| range_bytes(c.size, block, j, j + 1);
    let (next, prev) = (c.plus(1), c.minus(1));
    if round < p - 1 {
        let s = round;
        let send_block = (c.me + p - s) % p;
        let recv_block = (c.me + 2 * p - s - 1) % p;
        b.exchange(next, blk(send_block), prev, blk(recv_block), s);
        b.reduce(blk(recv_block));
    } else {
        // Rank me now owns the reduced block me+1.
        let s = round - (p - 1);
        let send_block = (c.me + 1 + p - s) % p;
        let recv_block = (c.me + p - s) % p;
        b.exchange(next, blk(send_block), prev, blk(recv_block), p - 1 + s);
    }
}

/// Recursive-halving reduce-scatter and recursive-doubling allgather over pof2 blocks,
/// with the MPICH fold for non-powers of two.
fn allreduce_rabenseifner(c: &Ctx, b: &mut Builder) {
    let n = u64::from(floor_log2(c.p));
    let pof2 = 1u64 << n;
    let rem = c.p - pof2;
    let block = c.size.div_ceil(pof2);
    let bytes = |lo: u64, hi: u64| range_bytes(c.size, block, lo, hi);
    if let Some(newrank) = fold_in(c, b, pof2, 0) {
        let (mut lo, mut hi) = (0, pof2);
        // Reduce-scatter: keep the half selected by my bit, send the other half.
        for (k, dist) in (0..n).rev().map(|j| 1u64 << j).enumerate() {
            let partner = unfolded(newrank ^ dist, rem);
            let mid = lo + (hi - lo) / 2;
            let (keep, give) = if newrank & dist == 0 {
                ((lo, mid), (mid, hi))
            } else {
                ((mid, hi), (lo, mid))
            };
            b.exchange(
                partner,
                bytes(give.0, give.1),
                partner,
                bytes(keep.0, keep.1),
                1 + k as u64,
            );
            b.reduce(bytes(keep.0, keep.1));
            (lo, hi) = keep;
        }
        // Allgather: exchange my range for the partner's, doubling it.
        for k in 0..n {
            let dist = 1u64 << k;
            let partner = unfolded(newrank ^ dist, rem);
            let len = hi - lo;
            let other = if newrank & dist == 0 {
                (hi, hi + len)
            } else {
                (lo - len, lo)
            };
            b.exchange(
                partner,
                bytes(lo, hi),
                partner,
                bytes(other.0, other.1),
                1 + n + k,
            );
            (lo, hi) = (lo.min(other.0), hi.max(other.1));
        }
    }
    fold_out(c, b, pof2, 1 + 2 * n);
}

// ---------------------------------------------------------------------------------------
// Alltoall
// ---------------------------------------------------------------------------------------

/// Round k (step s = k + 1): send to me + s, receive from me - s.
fn alltoall_simple_spread(c: &Ctx, k: u64, b: &mut Builder) {
    let s = k + 1;
    b.exchange(c.plus(s), c.size, c.minus(s), c.size, s);
}

fn spread_2d_rounds(c: &Ctx) -> u64 {
    assert!(
        exact_sqrt(c.p).is_some(),
        "spread_2d alltoall needs a square number of ranks"
    );
    c.p - 1
}

/// Ranks on an n x n grid; step s = k + 1 moves by (s mod n, s div n) with wrap-around per
/// axis.
fn alltoall_spread_2d(c: &Ctx, k: u64, b: &mut Builder) {
    let n = exact_sqrt(c.p).expect("spread_2d alltoall needs a square number of ranks");
    let (x, y) = (c.me % n, c.me / n);
    let s = k + 1;
    let (dx, dy) = (s % n, s / n);
    let dest = (x + dx) % n + ((y + dy) % n) * n;
    let src = (x + n - dx) % n + ((y + n - dy) % n) * n;
    b.exchange(dest, c.size, src, c.size, s);
}

fn pairwise_rounds(c: &Ctx) -> u64 {
    assert!(
        c.p.is_power_of_two(),
        "pairwise alltoall needs a power-of-two number of ranks"
    );
    c.p - 1
}

/// Round k (step s = k + 1): exchange with me XOR s.
fn alltoall_pairwise(c: &Ctx, k: u64, b: &mut Builder) {
    let partner = c.me ^ (k + 1);
    b.exchange(partner, c.size, partner, c.size, k + 1);
}

/// ceil(log2 p) steps; step k carries the blocks whose index has bit k set.
fn alltoall_bruck(c: &Ctx, b: &mut Builder) {
    for k in 0..ceil_log2(c.p) {
        let bytes = c.size * bruck_blocks(c.p, k);
        let d = 1u64 << k;
        b.exchange(c.plus(d), bytes, c.minus(d), bytes, u64::from(k));
    }
}

/// Number of block indices j in 0..p with bit k set.
pub fn bruck_blocks(p: u64, k: u32) -> u64 {
    let period = 1u64 << (k + 1);
    let half = 1u64 << k;
    (p / period) * half + (p % period).saturating_sub(half)
}

// ---------------------------------------------------------------------------------------
// Allgather, gather, scatter
// ---------------------------------------------------------------------------------------

fn allgather_ring(c: &Ctx, s: u64, b: &mut Builder) {
    b.exchange(c.plus(1), c.size, c.minus(1), c.size, s);
}

fn allgather_recursive_doubling(c: &Ctx, b: &mut Builder) {
    assert!(
        c.p.is_power_of_two(),
        "recursive_doubling allgather needs a power-of-two number of ranks"
    );
    for k in 0..floor_log2(c.p) {
        let partner = c.me ^ (1 << k);
        let bytes = c.size << k;
        b.exchange(partner, bytes, partner, bytes, u64::from(k));
    }
}

/// Binomial fan-in: each subtree's data travels to the parent in one message.
fn gather_binomial(c: &Ctx, b: &mut Builder) {
    let rel = c.rel();
    for &child in &binomial_children(rel, c.p) {
        b.recv(c.abs(child), c.size * binomial_subtree(child, c.p), 0);
        b.wait();
    }
    if rel != 0 {
        b.send(
            c.abs(binomial_parent(rel)),
            c.size * binomial_subtree(rel, c.p),
            0,
        );
        b.wait();
    }
}

/// Binomial fan-out: each child receives the data of its whole subtree.
fn scatter_binomial(c: &Ctx, b: &mut Builder) {
    let rel = c.rel();
    if rel != 0 {
        b.recv(
            c.abs(binomial_parent(rel)),
            c.size * binomial_subtree(rel, c.p),
            0,
        );
        b.wait();
    }
    for &child in binomial_children(rel, c.p).iter().rev() {
        b.send(c.abs(child), c.size * binomial_subtree(child, c.p), 0);
    }
    b.wait();
}

// ---------------------------------------------------------------------------------------
// Scan, v-variants, reduce_scatter
// ---------------------------------------------------------------------------------------

/// ceil(log2 p) steps (MPICH): exchange the partial result with `me ^ 2^k` when that rank
/// exists, and reduce what arrived. Scan and exscan move the same data.
fn scan_recursive_doubling(c: &Ctx, b: &mut Builder) {
    let mut mask = 1u64;
    let mut k = 0;
    while mask < c.p {
        let partner = c.me ^ mask;
        if partner < c.p {
            b.exchange(partner, c.size, partner, c.size, k);
            b.reduce(c.size);
        }
        mask <<= 1;
        k += 1;
    }
}

/// Rounds of the linear algorithms: the root posts one message per other rank (all are
/// waited for together, at the end of the call); the others one.
fn linear_rounds(c: &Ctx) -> u64 {
    if c.me == c.root {
        c.p - 1
    } else {
        1
    }
}

/// The rank that round `k` of the root of a linear algorithm addresses.
fn linear_peer(c: &Ctx, k: u64) -> u64 {
    if k < c.root {
        k
    } else {
        k + 1
    }
}

/// The root receives each rank's block directly; the others send theirs.
fn gatherv_linear(c: &Ctx, k: u64, b: &mut Builder) {
    if c.me == c.root {
        let j = linear_peer(c, k);
        b.recv(j, c.count(j), 0);
    } else {
        b.send(c.root, c.size, 0);
    }
}

/// The root sends each rank its block directly; the others receive theirs.
fn scatterv_linear(c: &Ctx, k: u64, b: &mut Builder) {
    if c.me == c.root {
        let j = linear_peer(c, k);
        b.send(j, c.count(j), 0);
    } else {
        b.recv(c.root, c.size, 0);
    }
}

/// p-1 steps: at step s, pass block (me - s) to the successor, take block (me - s - 1)
/// from the predecessor.
fn allgatherv_ring(c: &Ctx, s: u64, b: &mut Builder) {
    let out = c.minus(s);
    let inn = c.minus(s + 1);
    b.exchange(c.plus(1), c.count(out), c.minus(1), c.count(inn), s);
}

/// p-1 steps: at step s = k + 1, send to me + s its block, receive from me - s what it
/// sends me.
fn alltoallv_pairwise(c: &Ctx, k: u64, b: &mut Builder) {
    let s = k + 1;
    let (to, from) = (c.plus(s), c.minus(s));
    b.exchange(to, c.count(to), from, c.count(c.p + from), s);
}

/// p-1 steps: at step s = k + 1, send to me + s its block of my data, receive my block of
/// me - s's data and reduce it.
fn reduce_scatter_pairwise(c: &Ctx, k: u64, b: &mut Builder) {
    let s = k + 1;
    let mine = c.count(c.me);
    let to = c.plus(s);
    b.exchange(to, c.count(to), c.minus(s), mine, s);
    b.reduce(mine);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, VecDeque};

    /// Ranks whose start causally precedes a point of execution (p <= 128).
    type Deps = u128;

    /// What a symbolic run of all ranks observed.
    #[derive(Debug, Default)]
    struct Outcome {
        msgs: u64,
        bytes: u64,
        puts: u64,
        put_bytes: u64,
        reduce_steps: u64,
        reduce_bytes: u64,
        /// Bytes received (Recv) by each rank.
        recv_bytes: Vec<u64>,
        /// For each rank, the ranks whose start causally precedes its end.
        deps: Vec<Deps>,
    }

    /// Runs the step lists of all ranks together. Sends and puts are delivered at once
    /// (FIFO per (from, to, tag), puts per (to, tag)); receives are matched at WaitAll;
    /// a rank blocks at WaitAll until its receives are matched and at Poll until a put
    /// with the tag has landed.
    fn run(lists: &[Vec<Step>]) -> Result<Outcome, String> {
        let p = lists.len();
        assert!(p <= 128);
        let mut out = Outcome {
            recv_bytes: vec![0; p],
            deps: (0..p).map(|r| 1u128 << r).collect(),
            ..Outcome::default()
        };
        let mut pc = vec![0usize; p];
        let mut pending: Vec<Vec<(u32, u64, u32)>> = vec![Vec::new(); p];
        let mut queues: HashMap<(u32, u32, u32), VecDeque<(u64, Deps)>> = HashMap::new();
        let mut landed: HashMap<(u32, u32), VecDeque<Deps>> = HashMap::new();
        loop {
            let mut progress = false;
            for me in 0..p {
                let me32 = me as u32;
                while pc[me] < lists[me].len() {
                    match lists[me][pc[me]] {
                        Step::Send { to, bytes, tag } | Step::Put { to, bytes, tag } => {
                            if to as usize >= p || to == me32 {
                                return Err(format!("rank {me}: bad destination {to}"));
                            }
                            if tag >= 1 << 16 {
                                return Err(format!("rank {me}: tag {tag} too large"));
                            }
                            if matches!(lists[me][pc[me]], Step::Send { .. }) {
                                out.msgs += 1;
                                out.bytes += bytes;
                                queues
                                    .entry((me32, to, tag))
                                    .or_default()
                                    .push_back((bytes, out.deps[me]));
                            } else {
                                out.puts += 1;
                                out.put_bytes += bytes;
                                landed.entry((to, tag)).or_default().push_back(out.deps[me]);
                            }
                        }
                        Step::Recv { from, bytes, tag } => {
                            if from as usize >= p || from == me32 {
                                return Err(format!("rank {me}: bad source {from}"));
                            }
                            pending[me].push((from, bytes, tag));
                        }
                        Step::WaitAll => {
                            let mut still = Vec::new();
                            for &(from, bytes, tag) in &pending[me] {
                                match queues
                                    .get_mut(&(from, me32, tag))
                                    .and_then(|q| q.pop_front())
                                {
                                    Some((sent, deps)) => {
                                        if sent != bytes {
                                            return Err(format!(
                                                "rank {me}: recv of {bytes} B from {from} \
                                                 tag {tag} matched a send of {sent} B"
                                            ));
                                        }
                                        out.deps[me] |= deps;
                                        out.recv_bytes[me] += bytes;
                                        progress = true;
                                    }
                                    None => still.push((from, bytes, tag)),
                                }
                            }
                            pending[me] = still;
                            if !pending[me].is_empty() {
                                break;
                            }
                        }
                        Step::Poll { tag } => {
                            match landed.get_mut(&(me32, tag)).and_then(|q| q.pop_front()) {
                                Some(deps) => out.deps[me] |= deps,
                                None => break,
                            }
                        }
                        Step::CompleteAll => {}
                        Step::Reduce { bytes } => {
                            out.reduce_steps += 1;
                            out.reduce_bytes += bytes;
                        }
                    }
                    pc[me] += 1;
                    progress = true;
                }
                if pc[me] == lists[me].len() && !pending[me].is_empty() {
                    return Err(format!("rank {me}: receives outstanding at the end"));
                }
            }
            if (0..p).all(|r| pc[r] == lists[r].len()) {
                break;
            }
            if !progress {
                let stuck: Vec<String> = (0..p)
                    .filter(|&r| pc[r] < lists[r].len())
                    .map(|r| format!("{r}@{}:{:?}", pc[r], lists[r][pc[r]]))
                    .collect();
                return Err(format!("deadlock: {}", stuck.join(", ")));
            }
        }
        if let Some((k, q)) = queues.iter().find(|(_, q)| !q.is_empty()) {
            return Err(format!("{} unmatched send(s) {k:?}", q.len()));
        }
        if let Some((k, q)) = landed.iter().find(|(_, q)| !q.is_empty()) {
            return Err(format!("{} unpolled put(s) {k:?}", q.len()));
        }
        Ok(out)
    }

    fn spec(kind: CollKind, alg: &str, size: u64, root: u32, segment: u64) -> CollSpec {
        CollSpec {
            kind,
            algorithm: alg.to_string(),
            transport: Transport::Msg,
            size,
            root,
            segment,
        }
    }

    fn expand_all(s: &CollSpec, p: u32) -> Vec<Vec<Step>> {
        let alg = resolve(s, p).unwrap_or_else(|e| panic!("resolve {s:?} p={p}: {e}"));
        (0..p).map(|me| expand(s, alg, p, me)).collect()
    }

    fn simulate(s: &CollSpec, p: u32) -> (Vec<Vec<Step>>, Outcome) {
        let lists = expand_all(s, p);
        let out = run(&lists)
            .unwrap_or_else(|e| panic!("{} {} p={p} size={}: {e}", s.kind, s.algorithm, s.size));
        (lists, out)
    }

    fn ps() -> Vec<u32> {
        (1..=17).chain([32, 64, 100]).collect()
    }

    const SIZES: [u64; 5] = [0, 1, 1000, 4099, 100_000];

    fn all(p: u32) -> Deps {
        if p == 128 {
            u128::MAX
        } else {
            (1u128 << p) - 1
        }
    }

    fn clog2(p: u64) -> u64 {
        u64::from(ceil_log2(p))
    }

    /// Σ_{j<p} popcount(j): the number of hops all ranks' data makes in a binomial tree.
    fn popcount_sum(p: u64) -> u64 {
        (0..p).map(|j| u64::from(j.count_ones())).sum()
    }

    fn waitalls(steps: &[Step]) -> usize {
        steps.iter().filter(|s| **s == Step::WaitAll).count()
    }

    #[test]
    fn steps_come_a_round_at_a_time_and_rounds_stay_small() {
        // 1,024 ranks (a power of two and a square: every algorithm applies). An algorithm
        // of order p steps (rings, spreads, pairwise exchanges, linear roots, pipelines)
        // comes in rounds of a few steps, so a rank in a call holds a few operations; the
        // rounds together are the call's steps.
        let p = 1024;
        for kind in CollKind::ALL {
            for alg in kind.algorithms() {
                let s = spec(kind, alg, 1 << 20, 3, 4096);
                for me in [0, 3, 517, p - 1] {
                    let sizes: Vec<u64> = (0..2 * u64::from(p)).map(|i| i % 7 * 100).collect();
                    let mut gen = StepGen::new(&s, alg, p, me);
                    let (mut round, mut all, mut largest) = (Vec::new(), Vec::new(), 0);
                    while gen.next_round(&sizes, &mut round) {
                        largest = largest.max(round.len());
                        all.append(&mut round);
                    }
                    assert_eq!(all, expand_with(&s, &sizes, alg, p, me), "{kind} {alg}");
                    // A whole algorithm of log p phases, a few steps each, is one round.
                    let bound = 8 * 10 + 8;
                    assert!(
                        largest <= bound,
                        "{kind} {alg} rank {me}: a round of {largest}"
                    );
                    if all.len() > 2 * bound {
                        assert!(
                            largest * 100 < all.len(),
                            "{kind} {alg}: {largest} of {}",
                            all.len()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn barrier_algorithms() {
        for transport in [Transport::Msg, Transport::Rdma] {
            for alg in CollKind::Barrier.algorithms() {
                for p in ps() {
                    let mut s = spec(CollKind::Barrier, alg, 12345, 0, 1);
                    s.transport = transport;
                    let (lists, o) = simulate(&s, p);
                    let pp = u64::from(p);
                    let n = u64::from(floor_log2(pp));
                    let r = pp - (1 << n);
                    let expect = match *alg {
                        "ring" => pp * (pp - 1),
                        "recursive_doubling" => 2 * r + (1 << n) * n,
                        "dissemination" => pp * clog2(pp),
                        "binomial" => 2 * (pp - 1),
                        _ => unreachable!(),
                    };
                    let count = if transport == Transport::Msg {
                        assert_eq!((o.puts, o.bytes), (0, 0), "{alg} p={p}");
                        o.msgs
                    } else {
                        assert_eq!(o.msgs, 0);
                        assert_eq!(o.put_bytes, 4 * o.puts, "{alg} p={p}");
                        for l in lists.iter().filter(|l| !l.is_empty()) {
                            assert_eq!(l.last(), Some(&Step::CompleteAll));
                            assert!(!l.iter().any(|s| matches!(
                                s,
                                Step::Send { .. } | Step::Recv { .. } | Step::WaitAll
                            )));
                        }
                        o.puts
                    };
                    assert_eq!(count, expect, "{alg} {transport:?} p={p}");
                    // The barrier property: every rank's exit depends on every rank's entry.
                    for (me, d) in o.deps.iter().enumerate() {
                        assert_eq!(*d, all(p), "{alg} {transport:?} p={p} rank {me}");
                    }
                    assert_eq!(o.reduce_steps, 0);
                }
            }
        }
    }

    #[test]
    fn barrier_recursive_doubling_extra_steps() {
        for p in ps() {
            let s = spec(CollKind::Barrier, "recursive_doubling", 0, 0, 1);
            let lists = expand_all(&s, p);
            let n = floor_log2(u64::from(p)) as usize;
            let pof2 = 1usize << n;
            if p as usize > pof2 {
                assert_eq!(waitalls(&lists[0]), n + 2, "p={p}");
                assert_eq!(waitalls(&lists[pof2]), 2, "p={p}");
                assert_eq!(lists[pof2].len(), 4, "p={p}");
                assert!(matches!(lists[pof2][0], Step::Send { to: 0, .. }));
                assert!(matches!(lists[pof2][2], Step::Recv { from: 0, .. }));
                assert!(matches!(lists[0][0], Step::Recv { from, .. } if from as usize == pof2));
            } else {
                for l in &lists {
                    assert_eq!(waitalls(l), n, "p={p}");
                }
            }
        }
    }

    #[test]
    fn barrier_ring_shape() {
        let s = spec(CollKind::Barrier, "ring", 0, 0, 1);
        let l = expand(&s, "ring", 5, 0);
        assert_eq!(l.len(), 3 * 4);
        assert_eq!(
            l[0],
            Step::Send {
                to: 1,
                bytes: 0,
                tag: 0
            }
        );
        assert_eq!(
            l[1],
            Step::Recv {
                from: 4,
                bytes: 0,
                tag: 0
            }
        );
        assert_eq!(l[2], Step::WaitAll);
        let mut s = s;
        s.transport = Transport::Rdma;
        let l = expand(&s, "ring", 5, 4);
        assert_eq!(l.len(), 2 * 4 + 1);
        assert_eq!(
            l[0],
            Step::Put {
                to: 0,
                bytes: 4,
                tag: 0
            }
        );
        assert_eq!(l[1], Step::Poll { tag: 0 });
        assert_eq!(l[8], Step::CompleteAll);
    }

    fn roots(p: u32) -> Vec<u32> {
        let mut r = vec![0, p / 2, p - 1];
        r.dedup();
        r
    }

    #[test]
    fn bcast_algorithms() {
        for alg in CollKind::Bcast.algorithms() {
            for p in ps() {
                for root in roots(p) {
                    for size in SIZES {
                        let segment = 1024;
                        let s = spec(CollKind::Bcast, alg, size, root, segment);
                        let (_, o) = simulate(&s, p);
                        let pp = u64::from(p);
                        let ctx = format!("{alg} p={p} root={root} size={size}");
                        if p == 1 {
                            assert_eq!(o.msgs, 0, "{ctx}");
                            continue;
                        }
                        match *alg {
                            "binomial" => {
                                assert_eq!(o.msgs, pp - 1, "{ctx}");
                                assert_eq!(o.bytes, (pp - 1) * size, "{ctx}");
                            }
                            "pipelined" => {
                                let nseg = size.div_ceil(segment).max(1);
                                assert_eq!(o.msgs, (pp - 1) * nseg, "{ctx}");
                                assert_eq!(o.bytes, (pp - 1) * size, "{ctx}");
                            }
                            "scatter_allgather" => {
                                // p-1 scatter messages, p(p-1) ring messages.
                                assert_eq!(o.msgs, (pp - 1) + pp * (pp - 1), "{ctx}");
                                // Block j (relative) travels popcount(j) hops in the scatter
                                // and reaches the p-1 other ranks in the ring.
                                let b = size.div_ceil(pp);
                                let scatter: u64 = (0..pp)
                                    .map(|j| {
                                        let blk = size.min((j + 1) * b) - size.min(j * b);
                                        blk * u64::from(j.count_ones())
                                    })
                                    .sum();
                                assert_eq!(o.bytes, scatter + (pp - 1) * size, "{ctx}");
                            }
                            _ => unreachable!(),
                        }
                        for (me, d) in o.deps.iter().enumerate() {
                            assert!(d >> root & 1 == 1, "{ctx}: rank {me} not reached");
                        }
                        if *alg != "scatter_allgather" {
                            for (me, &got) in o.recv_bytes.iter().enumerate() {
                                let want = if me as u32 == root { 0 } else { size };
                                assert_eq!(got, want, "{ctx}: rank {me}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn pipelined_segments() {
        let s = spec(CollKind::Bcast, "pipelined", 2500, 1, 1000);
        // Root 1 on 3 ranks: the chain is 1 -> 2 -> 0, rank 0 is the last one.
        let l = expand(&s, "pipelined", 3, 0);
        let recvs: Vec<u64> = l
            .iter()
            .filter_map(|s| match s {
                Step::Recv { from: 2, bytes, .. } => Some(*bytes),
                _ => None,
            })
            .collect();
        assert_eq!(recvs, vec![1000, 1000, 500]);
        assert!(!l.iter().any(|s| matches!(s, Step::Send { .. })));
        let s = spec(CollKind::Bcast, "pipelined", 0, 0, 1000);
        let l = expand(&s, "pipelined", 2, 0);
        assert_eq!(
            l,
            vec![
                Step::Send {
                    to: 1,
                    bytes: 0,
                    tag: 0
                },
                Step::WaitAll
            ]
        );
    }

    #[test]
    fn reduce_algorithms() {
        for alg in CollKind::Reduce.algorithms() {
            for p in ps() {
                for root in roots(p) {
                    for size in SIZES {
                        let segment = 4096;
                        let s = spec(CollKind::Reduce, alg, size, root, segment);
                        let (_, o) = simulate(&s, p);
                        let pp = u64::from(p);
                        let ctx = format!("{alg} p={p} root={root} size={size}");
                        let nseg = if *alg == "pipelined" {
                            size.div_ceil(segment).max(1)
                        } else {
                            1
                        };
                        assert_eq!(o.msgs, (pp - 1) * nseg, "{ctx}");
                        assert_eq!(o.bytes, (pp - 1) * size, "{ctx}");
                        assert_eq!(o.reduce_steps, (pp - 1) * nseg, "{ctx}");
                        assert_eq!(o.reduce_bytes, (pp - 1) * size, "{ctx}");
                        assert_eq!(o.deps[root as usize], all(p), "{ctx}");
                    }
                }
            }
        }
    }

    #[test]
    fn allreduce_algorithms() {
        for alg in CollKind::Allreduce.algorithms() {
            for p in ps() {
                for size in SIZES {
                    let s = spec(CollKind::Allreduce, alg, size, 0, 1);
                    let (_, o) = simulate(&s, p);
                    let pp = u64::from(p);
                    let n = u64::from(floor_log2(pp));
                    let pof2 = 1u64 << n;
                    let rem = pp - pof2;
                    let ctx = format!("{alg} p={p} size={size}");
                    match *alg {
                        "recursive_doubling" => {
                            assert_eq!(o.msgs, 2 * rem + pof2 * n, "{ctx}");
                            assert_eq!(o.bytes, (2 * rem + pof2 * n) * size, "{ctx}");
                            assert_eq!(o.reduce_steps, rem + pof2 * n, "{ctx}");
                        }
                        "ring" => {
                            assert_eq!(o.msgs, 2 * pp * (pp - 1), "{ctx}");
                            assert_eq!(o.bytes, 2 * (pp - 1) * size, "{ctx}");
                            assert_eq!(o.reduce_steps, pp * (pp - 1), "{ctx}");
                            assert_eq!(o.reduce_bytes, (pp - 1) * size, "{ctx}");
                        }
                        "rabenseifner" => {
                            assert_eq!(o.msgs, 2 * rem + 2 * pof2 * n, "{ctx}");
                            assert_eq!(o.bytes, 2 * rem * size + 2 * (pof2 - 1) * size, "{ctx}");
                            assert_eq!(o.reduce_steps, rem + pof2 * n, "{ctx}");
                            assert_eq!(o.reduce_bytes, rem * size + (pof2 - 1) * size, "{ctx}");
                        }
                        _ => unreachable!(),
                    }
                    for (me, d) in o.deps.iter().enumerate() {
                        assert_eq!(*d, all(p), "{ctx}: rank {me}");
                    }
                }
            }
        }
    }

    #[test]
    fn alltoall_algorithms() {
        for alg in CollKind::Alltoall.algorithms() {
            for p in ps() {
                let pp = u64::from(p);
                if (*alg == "pairwise" && !p.is_power_of_two())
                    || (*alg == "spread_2d" && exact_sqrt(pp).is_none())
                {
                    assert!(resolve(&spec(CollKind::Alltoall, alg, 1, 0, 1), p).is_err());
                    continue;
                }
                for size in [0, 1, 300, 5000] {
                    let s = spec(CollKind::Alltoall, alg, size, 0, 1);
                    let (lists, o) = simulate(&s, p);
                    let ctx = format!("{alg} p={p} size={size}");
                    if *alg == "bruck" {
                        assert_eq!(o.msgs, pp * clog2(pp), "{ctx}");
                        let blocks: u64 = (0..ceil_log2(pp))
                            .map(|k| (0..pp).filter(|j| j >> k & 1 == 1).count() as u64)
                            .sum();
                        assert_eq!(o.bytes, pp * size * blocks, "{ctx}");
                    } else {
                        assert_eq!(o.msgs, pp * (pp - 1), "{ctx}");
                        assert_eq!(o.bytes, pp * (pp - 1) * size, "{ctx}");
                        // Every rank sends to every other rank exactly once.
                        for (me, l) in lists.iter().enumerate() {
                            let mut dests: Vec<u32> = l
                                .iter()
                                .filter_map(|s| match s {
                                    Step::Send { to, .. } => Some(*to),
                                    _ => None,
                                })
                                .collect();
                            dests.sort_unstable();
                            let want: Vec<u32> = (0..p).filter(|&r| r as usize != me).collect();
                            assert_eq!(dests, want, "{ctx}: rank {me}");
                        }
                        for &got in &o.recv_bytes {
                            assert_eq!(got, (pp - 1) * size, "{ctx}");
                        }
                    }
                    for (me, d) in o.deps.iter().enumerate() {
                        assert_eq!(*d, all(p), "{ctx}: rank {me}");
                    }
                }
            }
        }
    }

    #[test]
    fn bruck_block_counts() {
        for p in 1..200u64 {
            for k in 0..9 {
                let brute = (0..p).filter(|j| j >> k & 1 == 1).count() as u64;
                assert_eq!(bruck_blocks(p, k), brute, "p={p} k={k}");
            }
        }
    }

    #[test]
    fn allgather_algorithms() {
        for alg in CollKind::Allgather.algorithms() {
            for p in ps() {
                let pp = u64::from(p);
                if *alg == "recursive_doubling" && !p.is_power_of_two() {
                    assert!(resolve(&spec(CollKind::Allgather, alg, 1, 0, 1), p).is_err());
                    continue;
                }
                for size in SIZES {
                    let s = spec(CollKind::Allgather, alg, size, 0, 1);
                    let (_, o) = simulate(&s, p);
                    let ctx = format!("{alg} p={p} size={size}");
                    let msgs = match *alg {
                        "ring" => pp * (pp - 1),
                        _ => pp * clog2(pp),
                    };
                    assert_eq!(o.msgs, msgs, "{ctx}");
                    assert_eq!(o.bytes, pp * (pp - 1) * size, "{ctx}");
                    for (me, d) in o.deps.iter().enumerate() {
                        assert_eq!(*d, all(p), "{ctx}: rank {me}");
                        assert_eq!(o.recv_bytes[me], (pp - 1) * size, "{ctx}");
                    }
                }
            }
        }
    }

    #[test]
    fn gather_scatter_binomial() {
        for kind in [CollKind::Gather, CollKind::Scatter] {
            for p in ps() {
                for root in roots(p) {
                    for size in [0, 7, 1000] {
                        let s = spec(kind, "binomial", size, root, 1);
                        let (_, o) = simulate(&s, p);
                        let pp = u64::from(p);
                        let ctx = format!("{kind} p={p} root={root} size={size}");
                        assert_eq!(o.msgs, pp - 1, "{ctx}");
                        assert_eq!(o.bytes, size * popcount_sum(pp), "{ctx}");
                        if kind == CollKind::Gather {
                            assert_eq!(o.deps[root as usize], all(p), "{ctx}");
                            assert_eq!(o.recv_bytes[root as usize], (pp - 1) * size, "{ctx}");
                        } else {
                            for (me, d) in o.deps.iter().enumerate() {
                                assert!(d >> root & 1 == 1, "{ctx}: rank {me}");
                            }
                        }
                    }
                }
            }
        }
        // Subtree sizes: p = 8, root 0: rank 4 carries 4 ranks' data.
        let s = spec(CollKind::Gather, "binomial", 10, 0, 1);
        assert_eq!(expand(&s, "binomial", 8, 4).last(), Some(&Step::WaitAll));
        assert!(expand(&s, "binomial", 8, 4).contains(&Step::Send {
            to: 0,
            bytes: 40,
            tag: 0
        }));
    }

    #[test]
    fn single_rank_has_no_steps() {
        for kind in CollKind::ALL {
            for alg in kind.algorithms() {
                let s = spec(kind, alg, 1000, 0, 10);
                assert_eq!(resolve(&s, 1), Ok(*alg));
                assert!(expand(&s, alg, 1, 0).is_empty(), "{kind} {alg}");
            }
        }
        let mut s = spec(CollKind::Barrier, "ring", 0, 0, 1);
        s.transport = Transport::Rdma;
        assert!(expand(&s, "ring", 1, 0).is_empty());
    }

    #[test]
    fn names_round_trip() {
        for kind in CollKind::ALL {
            assert_eq!(CollKind::parse(kind.name()), Some(kind));
            assert!(!kind.algorithms().is_empty());
        }
        assert_eq!(CollKind::parse(" AllReduce "), Some(CollKind::Allreduce));
        assert_eq!(CollKind::parse("allgatherw"), None);
        assert_eq!(
            CollKind::ALL.map(|k| k.name()),
            [
                "barrier",
                "bcast",
                "reduce",
                "allreduce",
                "alltoall",
                "allgather",
                "gather",
                "scatter",
                "scan",
                "exscan",
                "gatherv",
                "scatterv",
                "allgatherv",
                "alltoallv",
                "reduce_scatter"
            ]
        );
    }

    #[test]
    fn resolve_errors() {
        let e = resolve(&spec(CollKind::Barrier, "rign", 0, 0, 1), 4).unwrap_err();
        assert_eq!(
            e,
            "unknown barrier algorithm 'rign' (barrier algorithms: ring, recursive_doubling, \
             dissemination, binomial)"
        );
        let e = resolve(&spec(CollKind::Alltoall, "pairwise", 8, 0, 1), 6).unwrap_err();
        assert_eq!(
            e,
            "pairwise alltoall needs a power-of-two number of ranks (p = 6)"
        );
        let e = resolve(&spec(CollKind::Alltoall, "spread_2d", 8, 0, 1), 8).unwrap_err();
        assert!(e.contains("spread_2d") && e.contains("p = 8"), "{e}");
        assert_eq!(
            resolve(&spec(CollKind::Alltoall, "spread_2d", 8, 0, 1), 9),
            Ok("spread_2d")
        );
        let e = resolve(
            &spec(CollKind::Allgather, "recursive_doubling", 8, 0, 1),
            12,
        )
        .unwrap_err();
        assert!(e.contains("power-of-two") && e.contains("p = 12"), "{e}");
        let mut s = spec(CollKind::Bcast, "binomial", 8, 0, 1);
        s.transport = Transport::Rdma;
        let e = resolve(&s, 4).unwrap_err();
        assert!(e.contains("rdma") && e.contains("bcast"), "{e}");
        s.algorithm = "auto".into();
        assert!(resolve(&s, 4).is_err());
        let mut s = spec(CollKind::Barrier, "dissemination", 0, 0, 1);
        s.transport = Transport::Rdma;
        assert_eq!(resolve(&s, 6), Ok("dissemination"));
        let e = resolve(&spec(CollKind::Bcast, "binomial", 8, 4, 1), 4).unwrap_err();
        assert!(e.contains("root 4"), "{e}");
        let e = resolve(&spec(CollKind::Reduce, "pipelined", 8, 0, 0), 4).unwrap_err();
        assert!(e.contains("segment"), "{e}");
        assert!(resolve(&spec(CollKind::Gather, "ring", 8, 0, 1), 4)
            .unwrap_err()
            .contains("gather algorithms: binomial"));
        assert!(resolve(&spec(CollKind::Barrier, "ring", 0, 0, 1), 0).is_err());
    }

    #[test]
    fn auto_defaults() {
        let auto = |kind, size, p| resolve(&spec(kind, "auto", size, 0, 1024), p).unwrap();
        use CollKind::*;
        assert_eq!(auto(Barrier, 0, 7), "recursive_doubling");
        assert_eq!(auto(Bcast, 12 * 1024 - 1, 64), "binomial");
        assert_eq!(auto(Bcast, 12 * 1024, 64), "scatter_allgather");
        assert_eq!(auto(Bcast, 1 << 20, 7), "binomial");
        assert_eq!(auto(Bcast, 1 << 20, 8), "scatter_allgather");
        assert_eq!(auto(Reduce, 64 * 1024 - 1, 16), "binomial");
        assert_eq!(auto(Reduce, 64 * 1024, 16), "pipelined");
        assert_eq!(auto(Allreduce, 2048, 16), "recursive_doubling");
        assert_eq!(auto(Allreduce, 2049, 16), "rabenseifner");
        assert_eq!(auto(Alltoall, 256, 6), "bruck");
        assert_eq!(auto(Alltoall, 257, 8), "pairwise");
        assert_eq!(auto(Alltoall, 257, 6), "simple_spread");
        assert_eq!(auto(Allgather, 1024, 8), "recursive_doubling");
        assert_eq!(auto(Allgather, 64 * 1024, 8), "ring");
        assert_eq!(auto(Allgather, 64 * 1024 - 1, 8), "recursive_doubling");
        assert_eq!(auto(Allgather, 10, 6), "ring");
        assert_eq!(auto(Gather, 1 << 30, 5), "binomial");
        assert_eq!(auto(Scatter, 1 << 30, 5), "binomial");
        let mut s = spec(Barrier, "auto", 0, 0, 1);
        s.transport = Transport::Rdma;
        assert_eq!(resolve(&s, 12), Ok("recursive_doubling"));
    }

    #[test]
    fn executor_detects_deadlock_and_mismatch() {
        let dead = vec![
            vec![
                Step::Recv {
                    from: 1,
                    bytes: 0,
                    tag: 0,
                },
                Step::WaitAll,
            ],
            vec![
                Step::Recv {
                    from: 0,
                    bytes: 0,
                    tag: 0,
                },
                Step::WaitAll,
            ],
        ];
        assert!(run(&dead).unwrap_err().contains("deadlock"));
        let mismatch = vec![
            vec![
                Step::Send {
                    to: 1,
                    bytes: 4,
                    tag: 0,
                },
                Step::WaitAll,
            ],
            vec![
                Step::Recv {
                    from: 0,
                    bytes: 8,
                    tag: 0,
                },
                Step::WaitAll,
            ],
        ];
        assert!(run(&mismatch).unwrap_err().contains("matched a send"));
        let unmatched = vec![
            vec![Step::Send {
                to: 1,
                bytes: 4,
                tag: 0,
            }],
            vec![],
        ];
        assert!(run(&unmatched).unwrap_err().contains("unmatched"));
        let poll = vec![
            vec![Step::Poll { tag: 1 }],
            vec![Step::Put {
                to: 0,
                bytes: 4,
                tag: 0,
            }],
        ];
        assert!(run(&poll).unwrap_err().contains("deadlock"));
    }

    /// Runs rank lists expanded with each rank's own sizes.
    fn run_with(kind: CollKind, size: u64, root: u32, sizes: &[Vec<u64>]) -> Outcome {
        let p = sizes.len() as u32;
        let s = spec(kind, "auto", size, root, 1);
        let alg = resolve(&s, p).unwrap();
        let lists: Vec<Vec<Step>> = (0..p)
            .map(|me| expand_with(&s, &sizes[me as usize], alg, p, me))
            .collect();
        run(&lists).unwrap_or_else(|e| panic!("{kind}: {e}"))
    }

    #[test]
    fn alltoallv_pairwise_steps_by_hand() {
        let s = spec(CollKind::Alltoallv, "pairwise", 0, 0, 1);
        let steps = expand_with(&s, &[0, 10, 20, 0, 30, 40], "pairwise", 3, 0);
        assert_eq!(
            steps,
            [
                Step::Send {
                    to: 1,
                    bytes: 10,
                    tag: 1
                },
                Step::Recv {
                    from: 2,
                    bytes: 40,
                    tag: 1
                },
                Step::WaitAll,
                Step::Send {
                    to: 2,
                    bytes: 20,
                    tag: 2
                },
                Step::Recv {
                    from: 1,
                    bytes: 30,
                    tag: 2
                },
                Step::WaitAll,
            ]
        );
        // No sizes: every block is `size`, as alltoall.
        let u = spec(CollKind::Alltoallv, "pairwise", 7, 0, 1);
        let sent: u64 = expand(&u, "pairwise", 4, 2)
            .iter()
            .map(|st| match st {
                Step::Send { bytes, .. } => *bytes,
                _ => 0,
            })
            .sum();
        assert_eq!(sent, 21);
    }

    #[test]
    fn alltoallv_moves_the_matrix() {
        // m[i][j] = 10 i + j + 1 bytes from i to j.
        let p = 4u64;
        let m = |i: u64, j: u64| if i == j { 0 } else { 10 * i + j + 1 };
        let sizes: Vec<Vec<u64>> = (0..p)
            .map(|i| {
                (0..p)
                    .map(|j| m(i, j))
                    .chain((0..p).map(|j| m(j, i)))
                    .collect()
            })
            .collect();
        let out = run_with(CollKind::Alltoallv, 0, 0, &sizes);
        let total: u64 = (0..p).flat_map(|i| (0..p).map(move |j| m(i, j))).sum();
        assert_eq!(out.bytes, total);
        assert_eq!(out.msgs, 12);
        for j in 0..p {
            let into: u64 = (0..p).map(|i| m(i, j)).sum();
            assert_eq!(out.recv_bytes[j as usize], into, "rank {j}");
        }
    }

    #[test]
    fn gatherv_scatterv_linear_by_hand() {
        // Root 1 gets 5, 7 and 9 bytes from ranks 0, 2 and 3.
        let sizes = [vec![], vec![5, 0, 7, 9], vec![], vec![]];
        let per_rank = [5u64, 0, 7, 9];
        let s = spec(CollKind::Gatherv, "linear", 0, 1, 1);
        let lists: Vec<Vec<Step>> = (0..4u32)
            .map(|me| {
                let own = CollSpec {
                    size: per_rank[me as usize],
                    ..s.clone()
                };
                expand_with(&own, &sizes[me as usize], "linear", 4, me)
            })
            .collect();
        let out = run(&lists).unwrap();
        assert_eq!((out.msgs, out.bytes), (3, 21));
        assert_eq!(out.recv_bytes, [0, 21, 0, 0]);
        let s = spec(CollKind::Scatterv, "linear", 0, 1, 1);
        let lists: Vec<Vec<Step>> = (0..4u32)
            .map(|me| {
                let own = CollSpec {
                    size: per_rank[me as usize],
                    ..s.clone()
                };
                expand_with(&own, &sizes[me as usize], "linear", 4, me)
            })
            .collect();
        let out = run(&lists).unwrap();
        assert_eq!((out.msgs, out.bytes), (3, 21));
        assert_eq!(out.recv_bytes, [5, 0, 7, 9]);
    }

    #[test]
    fn allgatherv_and_reduce_scatter_by_hand() {
        let blocks = vec![1u64, 2, 3];
        let out = run_with(CollKind::Allgatherv, 0, 0, &vec![blocks.clone(); 3]);
        // Each rank receives every block but its own: 6 messages of 1, 2 or 3 bytes.
        assert_eq!(out.msgs, 6);
        assert_eq!(out.recv_bytes, [5, 4, 3]);
        let blocks = vec![4u64, 5, 6];
        let out = run_with(CollKind::ReduceScatter, 0, 0, &vec![blocks; 3]);
        // Rank j receives its block from the two others and reduces each.
        assert_eq!(out.recv_bytes, [8, 10, 12]);
        assert_eq!(out.reduce_bytes, 30);
    }

    #[test]
    fn scan_recursive_doubling_by_hand() {
        // p = 5: pairs (0,1) (2,3) at mask 1, (0,2) (1,3) at mask 2, (0,4) at mask 4.
        for kind in [CollKind::Scan, CollKind::Exscan] {
            let out = run_with(kind, 8, 0, &vec![vec![]; 5]);
            assert_eq!((out.msgs, out.bytes), (10, 80), "{kind}");
            assert_eq!(out.recv_bytes, [24, 16, 16, 16, 8], "{kind}");
            assert_eq!(out.reduce_steps, 10, "{kind}");
        }
    }
}
