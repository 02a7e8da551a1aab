//! Child processes acesim waits for (the C recorder and its ranks, the Python recorder):
//! each runs in a process group of its own, so that a terminal's Ctrl-C reaches acesim only
//! and acesim decides: it kills the whole group when interrupted, and after the child exits
//! (a rank that forked a background process leaves nothing behind). acesim waits for the
//! child process itself, never for the end of its output, which a background process could
//! keep open forever.

use crate::error::{Error, Result};
use std::io::{Read, Seek};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

/// Process group of the child being waited for (0: none), for a signal handler that must
/// end it before exiting at once.
pub static CHILD_GROUP: AtomicI32 = AtomicI32::new(0);

/// A finished child: its exit status and everything it wrote.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Kills every process of the group `pgid` (those that are left; none is fine).
pub fn kill_group(pgid: i32) {
    #[cfg(unix)]
    if pgid > 0 {
        // SAFETY: kill has no memory effects; a group that is gone gives ESRCH.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pgid;
}

/// Runs `cmd` in a process group of its own with standard input empty and its output in
/// anonymous files, and waits for it. When `interrupt` becomes true it kills the group and
/// returns `Error::Interrupted` (the message says `what` was interrupted).
pub fn run(cmd: &mut Command, interrupt: Option<&AtomicBool>, what: &str) -> Result<Finished> {
    let io = |e| Error::io("temporary file", e);
    let out = tempfile::tempfile().map_err(io)?;
    let err = tempfile::tempfile().map_err(io)?;
    cmd.stdin(Stdio::null())
        .stdout(out.try_clone().map_err(io)?)
        .stderr(err.try_clone().map_err(io)?);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    let mut child = cmd.spawn().map_err(|e| Error::Program {
        message: format!("{what}: cannot start it: {e}"),
    })?;
    let pgid = i32::try_from(child.id()).unwrap_or(0);
    CHILD_GROUP.store(pgid, Ordering::SeqCst);
    let stopped = |child: &mut std::process::Child| {
        kill_group(pgid);
        let _ = child.kill();
        let _ = child.wait();
        CHILD_GROUP.store(0, Ordering::SeqCst);
    };
    let mut pause = Duration::from_millis(1);
    let status = loop {
        if interrupt.is_some_and(|f| f.load(Ordering::SeqCst)) {
            stopped(&mut child);
            return Err(Error::Interrupted(format!(
                "interrupted while {what}; its processes were stopped"
            )));
        }
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            Err(e) => {
                stopped(&mut child);
                return Err(Error::Program {
                    message: format!("{what}: waiting for it failed: {e}"),
                });
            }
        }
    };
    // Whatever the child left running (a background process it forked) ends with it.
    kill_group(pgid);
    CHILD_GROUP.store(0, Ordering::SeqCst);
    let read = |mut f: std::fs::File| -> Result<Vec<u8>> {
        let mut v = Vec::new();
        f.rewind().map_err(io)?;
        f.read_to_end(&mut v).map_err(io)?;
        Ok(v)
    };
    Ok(Finished {
        status,
        stdout: read(out)?,
        stderr: read(err)?,
    })
}

/// The exit code of a finished child, or the signal that killed it, in words.
pub fn describe(status: &ExitStatus) -> String {
    if let Some(c) = status.code() {
        return format!("exited with code {c}");
    }
    #[cfg(unix)]
    if let Some(s) = std::os::unix::process::ExitStatusExt::signal(status) {
        return format!("was killed by signal {s}");
    }
    "stopped unexpectedly".to_string()
}
