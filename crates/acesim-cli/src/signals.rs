//! Ctrl-C and SIGTERM: the first stops a recording (and its processes) or a run at its next
//! look at the interrupt flag, which then writes what it has; a second ends acesim at once.
//! The handlers are the command's only: the ones in force before are put back after it.

use crate::exit_codes::{EXIT_INTERRUPTED, EXIT_TERMINATED};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};

/// The first SIGINT or SIGTERM received (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// The flag the run and the recorders look at; set by the first signal.
static INTERRUPT: OnceLock<Arc<AtomicBool>> = OnceLock::new();

#[cfg(unix)]
extern "C" fn on_signal(sig: libc::c_int) {
    // Only async-signal-safe work here: atomics, kill, write, _exit.
    if SIGNAL.swap(sig, Ordering::SeqCst) != 0 {
        // A second signal: stop at once, with the recorder's processes.
        acesim::frontends::child::kill_group(
            acesim::frontends::child::CHILD_GROUP.load(Ordering::SeqCst),
        );
        let msg = b"acesim: stopped at once (second signal)\n";
        // SAFETY: write and _exit are async-signal-safe.
        unsafe {
            libc::write(2, msg.as_ptr().cast(), msg.len());
            libc::_exit(128 + sig);
        }
    }
    if let Some(f) = INTERRUPT.get() {
        f.store(true, Ordering::SeqCst);
    }
}

/// The interrupt flag, with SIGINT and SIGTERM handlers that set it (installed once): the
/// run stops at its next look at the flag and writes what it has, a recording stops its
/// rank processes; a second signal ends acesim at once.
pub(crate) fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = INTERRUPT.get_or_init(|| Arc::new(AtomicBool::new(false)));
    #[cfg(unix)]
    if let Ok(mut saved) = SAVED_HANDLERS.lock() {
        if saved.is_empty() {
            for sig in [libc::SIGINT, libc::SIGTERM] {
                // SAFETY: installs a handler that only does async-signal-safe work, keeping
                // the one it replaces (restored when the command ends).
                unsafe {
                    let mut act: libc::sigaction = std::mem::zeroed();
                    act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                    act.sa_flags = libc::SA_RESTART;
                    libc::sigemptyset(&mut act.sa_mask);
                    let mut old: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(sig, &act, &mut old) == 0 {
                        saved.push((sig, old));
                    }
                }
            }
        }
    }
    flag.clone()
}

/// The handlers `interrupt_flag` replaced (the Python interpreter's, when the command runs
/// inside Python), put back by `restore_signals`.
#[cfg(unix)]
static SAVED_HANDLERS: std::sync::Mutex<Vec<(libc::c_int, libc::sigaction)>> =
    std::sync::Mutex::new(Vec::new());

/// Puts back the signal handlers in force before the command and clears the flag, so that
/// a process running several commands (Python calling `acesim._core.cli`) is as before.
pub(crate) fn restore_signals() {
    #[cfg(unix)]
    if let Ok(mut saved) = SAVED_HANDLERS.lock() {
        for (sig, old) in saved.drain(..) {
            // SAFETY: reinstalls a handler exactly as it was.
            unsafe {
                libc::sigaction(sig, &old, std::ptr::null_mut());
            }
        }
    }
    SIGNAL.store(0, Ordering::SeqCst);
    if let Some(f) = INTERRUPT.get() {
        f.store(false, Ordering::SeqCst);
    }
}

/// Exit code for a signal received: 130 for SIGINT, 143 for SIGTERM.
pub(crate) fn signal_exit_code() -> i32 {
    match SIGNAL.load(Ordering::SeqCst) {
        #[cfg(unix)]
        libc::SIGTERM => EXIT_TERMINATED,
        _ => EXIT_INTERRUPTED,
    }
}

/// Name of the signal received, for messages.
pub(crate) fn signal_name() -> &'static str {
    match signal_exit_code() {
        EXIT_TERMINATED => "SIGTERM",
        _ => "Ctrl-C (SIGINT)",
    }
}
