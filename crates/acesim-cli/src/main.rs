//! The `acesim` command.

fn main() -> std::process::ExitCode {
    grow_heaps_in_large_steps();
    let code = acesim_cli::main_with_args(std::env::args().skip(1).collect());
    std::process::ExitCode::from(code.clamp(0, 255) as u8)
}

/// glibc grows a thread's heap by the pages each allocation needs, one `mprotect` each:
/// a schedule read on two threads made 97,841 such calls for its second reader's
/// per-rank lists (docs/performance.md). With 64 MiB of padding a heap is made writable
/// whole when it is made, and the main heap grows 64 MiB at a time; pages are still
/// backed only when written. Setting the padding stops glibc from raising its mmap and
/// trim thresholds as large blocks are freed, so they are set here to the values it
/// would reach (32 and 64 MiB): left at their start (128 KiB), blocks of a few hundred
/// KiB came from the system and went back to it at every use, and the flow model's
/// event loop took 5 % longer.
fn grow_heaps_in_large_steps() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: sets allocator parameters before any thread exists; no memory is touched.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
    }
}
