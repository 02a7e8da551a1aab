//! What a user may ask of a program before it runs, whatever front end read it (the ACES
//! study's job layout): messages capped at a size, collectives skipped, and the whole job
//! repeated to fill a machine, each copy with its own world communicator.

use crate::error::{Error, Location, Result};
use crate::program::ops::{OpKind, Program};

/// Caps every message, put, get and collective size at `max` bytes (ACES truncated its
/// traces' messages at 64 KiB).
pub fn cap_messages(prog: &mut Program, max: u64) {
    for ops in &mut prog.ops {
        for op in ops.iter_mut() {
            match &mut op.kind {
                OpKind::Put { size, .. }
                | OpKind::Get { size, .. }
                | OpKind::Send { size, .. }
                | OpKind::Recv { size, .. }
                | OpKind::Isend { size, .. }
                | OpKind::Irecv { size, .. } => *size = (*size).min(max),
                _ => {}
            }
        }
    }
    if let Some(s) = &mut prog.stream {
        s.cap = Some(s.cap.map_or(max, |c| c.min(max)));
    }
    for call in &mut prog.coll_calls {
        call.size = call.size.min(max);
        for s in &mut call.sizes {
            *s = (*s).min(max);
        }
    }
}

/// Turns every collective call into nothing (as tools that skip collectives do, for
/// comparison): it takes no time and moves no data. Communicator creations stay.
pub fn skip_collectives(prog: &mut Program) {
    if let Some(seqs) = &mut prog.call_seqs {
        seqs.skip = true;
    }
    for ops in &mut prog.ops {
        for op in ops.iter_mut() {
            if matches!(op.kind, OpKind::Coll { .. }) {
                // An operation of no time keeps the indices a dependency graph refers to.
                op.kind = OpKind::Compute { ps: 0 };
            }
        }
    }
}

/// The program run `jobs` times side by side: job `j`'s rank `r` is world rank
/// `j * ranks + r`, and each job's world communicator holds its own ranks only, so that the
/// jobs exchange nothing. Puts and gets, which name world ranks, move with their job.
pub fn repeat_jobs(prog: &Program, jobs: u32) -> Result<Program> {
    let at = || Location::file("command line").with_field("jobs");
    if jobs == 0 {
        return Err(Error::input(at(), "expected 1 or more jobs, found 0"));
    }
    if prog.linked {
        return Err(Error::input(at(), "the program is already linked"));
    }
    if prog.job_ranks.is_some() {
        return Err(Error::input(at(), "the program is already repeated"));
    }
    let k = prog.ranks;
    let total = u64::from(k) * u64::from(jobs);
    if total > 1 << 26 {
        return Err(Error::input(
            at(),
            format!("{jobs} jobs of {k} ranks are {total} ranks, more than 2^26"),
        ));
    }
    // A trace's calls, kept once (`program::call_seqs`), serve every job.
    let calls = match prog.call_seqs {
        Some(_) => 0,
        None => prog.coll_calls.len() as u32,
    };
    let mut out = prog.clone();
    if let Some(seqs) = &mut out.call_seqs {
        seqs.repeat(jobs);
    }
    out.ranks = total as u32;
    out.ops = Vec::with_capacity(total as usize);
    out.coll_calls = Vec::with_capacity(prog.coll_calls.len() * jobs as usize);
    for j in 0..jobs {
        let base = j * k;
        if j == 0 || calls > 0 {
            out.coll_calls.extend(prog.coll_calls.iter().cloned());
        }
        for ops in &prog.ops {
            let mut ops = ops.clone();
            for op in &mut ops {
                match &mut op.kind {
                    OpKind::Put { dst, .. } => *dst += base,
                    OpKind::Get { src, .. } => *src += base,
                    OpKind::Coll { call } => *call += j * calls,
                    _ => {}
                }
            }
            out.ops.push(ops);
        }
    }
    let repeat = |v: &Vec<u32>| -> Vec<u32> { (0..jobs).flat_map(|_| v.iter().copied()).collect() };
    out.handles = repeat(&prog.handles);
    out.comm_handles = repeat(&prog.comm_handles);
    out.deps = prog
        .deps
        .as_ref()
        .map(|d| (0..jobs).flat_map(|_| d.iter().cloned()).collect());
    out.traced_windows = prog
        .traced_windows
        .as_ref()
        .map(|w| (0..jobs).flat_map(|_| w.iter().copied()).collect());
    out.job_ranks = Some(k);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontends::schedule;

    #[test]
    fn repeated_jobs_keep_their_messages_and_collectives_to_themselves() {
        let p = schedule::parse(
            "t.sched",
            "ranks 2\nrank 0\nsend 1 8\nallreduce 8\nput 1 4 tag=1\nrank 1\nrecv 0 8\nallreduce 8\npoll 1\n",
        )
        .unwrap();
        let mut r = repeat_jobs(&p, 3).unwrap();
        assert_eq!((r.ranks, r.job_ranks), (6, Some(2)));
        // Job 2's put goes to its own rank 1, world rank 5.
        assert!(matches!(r.ops[4][2].kind, OpKind::Put { dst: 5, .. }));
        crate::program::link::link(&mut r, &Default::default()).unwrap();
        // Job 1's send (world rank 2) goes to world rank 3, not to job 0's rank 1.
        let to = r.ops[2]
            .iter()
            .find_map(|o| o.kind.message().filter(|m| m.send));
        assert_eq!(to.map(|m| m.peer), Some(3));
        // Three allreduces of two ranks each, not one of six.
        assert_eq!(r.collectives.len(), 3);
    }

    #[test]
    fn capped_and_skipped() {
        let mut p = schedule::parse(
            "t.sched",
            "ranks 2\nrank 0\nsend 1 1MiB\nbcast 1MiB\nrank 1\nrecv 0 1MiB\nbcast 1MiB\n",
        )
        .unwrap();
        cap_messages(&mut p, 65536);
        assert!(matches!(p.ops[0][0].kind, OpKind::Send { size: 65536, .. }));
        assert!(p.coll_calls.iter().all(|c| c.size == 65536));
        skip_collectives(&mut p);
        assert!(matches!(p.ops[1][1].kind, OpKind::Compute { ps: 0 }));
    }
}
