//! Asking the memory early for the records the coming events read.
//!
//! The event loop knows the current picosecond's next events before it handles them
//! (`EventQueue::upcoming`). Each reads first a record among thousands (a packet, a link,
//! a router input), mostly not in the core's cache: asked for an event or two before, it is there
//! when the handler reads it instead of the handler waiting for it
//! (`Network::prefetch`, which the packet model implements). A hint only: nothing is read
//! or changed.

/// Asks for the cache line of `items[i]`, if there is one.
#[inline(always)]
pub fn prefetch<T>(items: &[T], i: u32) {
    #[cfg(target_arch = "x86_64")]
    if let Some(item) = items.get(i as usize) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of every x86_64 target, and a prefetch of a live item's
        // address reads nothing and cannot fault.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (items, i);
}
