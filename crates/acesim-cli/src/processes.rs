//! A run across processes: `mpirun -np P acesim traffic ...` (or `acesim run`) splits the machine into P
//! blocks of routers, one per process, which exchange what crosses between them through
//! MPI after every window (`acesim::engine::processes`). Process 0 prints and writes the
//! outputs, the same bytes as a run in one process.
//!
//! MPI comes from the `mpi` crate on the system's MPI, behind the `mpi` cargo feature
//! (`scripts/setup` builds with it when Open MPI and libclang are there). A build without
//! it that finds itself started by `mpirun` says so instead of running P copies.

use acesim::engine::Exchange;
use acesim::error::{Error, Location, Result};

/// How many processes the launcher says the run has (Open MPI, MPICH and other PMI
/// launchers), 1 when not started by one.
pub(crate) fn launched() -> usize {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse::<usize>().ok())
        .unwrap_or(1)
}

fn refuse(message: String) -> Error {
    Error::input(Location::file("mpirun").with_field("np"), message)
}

/// Refuses a command that does not run across processes when it was started on several.
pub(crate) fn refuse_if_launched(command: &str) -> Result<()> {
    match launched() {
        n if n > 1 => Err(refuse(format!(
            "`acesim {command}` runs in one process, and mpirun started {n}: only `acesim run` and `acesim traffic` run across processes"
        ))),
        _ => Ok(()),
    }
}

/// The processes of this run, when `mpirun` started more than one.
pub(crate) fn start() -> Result<Option<Box<dyn Exchange>>> {
    let n = launched();
    if n <= 1 {
        return Ok(None);
    }
    start_mpi(n)
}

#[cfg(not(feature = "mpi"))]
fn start_mpi(n: usize) -> Result<Option<Box<dyn Exchange>>> {
    Err(refuse(format!(
        "mpirun started {n} processes, but this acesim was built without MPI (the `mpi` cargo feature): every process would run the whole machine alone. Install Open MPI and libclang (Debian: openmpi-bin libopenmpi-dev libclang-dev) and run scripts/setup, or run one process"
    )))
}

#[cfg(feature = "mpi")]
fn start_mpi(n: usize) -> Result<Option<Box<dyn Exchange>>> {
    let universe = mpi::initialize().ok_or_else(|| refuse("MPI was initialised already".into()))?;
    let world = mpi::topology::Communicator::duplicate(&universe.world());
    let size = mpi::traits::Communicator::size(&world) as usize;
    if size != n {
        return Err(refuse(format!(
            "the launcher says {n} processes but MPI has {size}"
        )));
    }
    // The processes that share this one's memory: its machine.
    let on_this_machine =
        mpi::traits::Communicator::size(&mpi::topology::Communicator::split_shared(&world, 0))
            as usize;
    Ok(Some(Box::new(Mpi {
        world,
        on_this_machine,
        _universe: universe,
    })))
}

/// The processes of an MPI run (dropped last: MPI is finalised with `_universe`).
#[cfg(feature = "mpi")]
struct Mpi {
    world: mpi::topology::SimpleCommunicator,
    on_this_machine: usize,
    _universe: mpi::environment::Universe,
}

#[cfg(feature = "mpi")]
impl Exchange for Mpi {
    fn me(&self) -> usize {
        mpi::traits::Communicator::rank(&self.world) as usize
    }

    fn count(&self) -> usize {
        mpi::traits::Communicator::size(&self.world) as usize
    }

    fn all_to_all(&self, out: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        use mpi::datatype::{Partition, PartitionMut};
        use mpi::traits::CommunicatorCollectives;
        let n = self.count();
        let send_counts: Vec<i32> = out.iter().map(|b| b.len() as i32).collect();
        let mut recv_counts = vec![0i32; n];
        self.world
            .all_to_all_into(&send_counts[..], &mut recv_counts[..]);
        let (send_at, recv_at) = (offsets(&send_counts), offsets(&recv_counts));
        let send: Vec<u8> = out.concat();
        let mut recv = vec![0u8; recv_counts.iter().map(|&c| c as usize).sum()];
        {
            let sent = Partition::new(&send[..], &send_counts[..], &send_at[..]);
            let mut got = PartitionMut::new(&mut recv[..], &recv_counts[..], &recv_at[..]);
            self.world.all_to_all_varcount_into(&sent, &mut got);
        }
        split(&recv, &recv_counts)
    }

    fn all_gather(&self, mine: Vec<u8>) -> Vec<Vec<u8>> {
        use mpi::datatype::PartitionMut;
        use mpi::traits::CommunicatorCollectives;
        let n = self.count();
        let mut counts = vec![0i32; n];
        self.world
            .all_gather_into(&(mine.len() as i32), &mut counts[..]);
        let at = offsets(&counts);
        let mut all = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
        {
            let mut got = PartitionMut::new(&mut all[..], &counts[..], &at[..]);
            self.world.all_gather_varcount_into(&mine[..], &mut got);
        }
        split(&all, &counts)
    }

    fn send(&self, to: usize, bytes: &[u8]) {
        use mpi::traits::{Communicator, Destination};
        self.world.process_at_rank(to as i32).send(bytes);
    }

    fn receive(&self, from: usize) -> Vec<u8> {
        use mpi::traits::{Communicator, Source};
        self.world
            .process_at_rank(from as i32)
            .receive_vec::<u8>()
            .0
    }

    fn on_this_machine(&self) -> usize {
        self.on_this_machine
    }
}

/// Where each of pieces of `counts` bytes starts, laid end to end.
#[cfg(feature = "mpi")]
fn offsets(counts: &[i32]) -> Vec<i32> {
    counts
        .iter()
        .scan(0, |at, &c| {
            let here = *at;
            *at += c;
            Some(here)
        })
        .collect()
}

/// `bytes` cut into pieces of `counts` bytes.
#[cfg(feature = "mpi")]
fn split(bytes: &[u8], counts: &[i32]) -> Vec<Vec<u8>> {
    let mut at = 0;
    counts
        .iter()
        .map(|&c| {
            let piece = bytes[at..at + c as usize].to_vec();
            at += c as usize;
            piece
        })
        .collect()
}
