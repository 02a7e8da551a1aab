//! A fixed-size array that starts as zero pages: memory the system backs only where it is
//! written. A partition of a parallel run indexes its network arrays by the whole
//! machine's ids but writes only its own routers' entries, so the rest must cost nothing.
//! `bytemuck::zeroed_vec` gives that only for types of alignment 16 or less: the system
//! allocator clears an over-aligned block by hand (touching every page), and the network's
//! per-link and per-port rows are aligned to cache lines.

use bytemuck::Zeroable;
use std::ops::{Deref, DerefMut};

pub struct ZeroPages<T: Zeroable> {
    #[cfg(unix)]
    ptr: std::ptr::NonNull<T>,
    #[cfg(unix)]
    len: usize,
    #[cfg(not(unix))]
    vec: Vec<T>,
}

// The array owns its elements as a `Vec` would.
unsafe impl<T: Zeroable + Send> Send for ZeroPages<T> {}
unsafe impl<T: Zeroable + Sync> Sync for ZeroPages<T> {}

#[cfg(unix)]
impl<T: Zeroable> ZeroPages<T> {
    /// `len` zeroed elements.
    pub fn new(len: usize) -> Self {
        const { assert!(std::mem::align_of::<T>() <= 4096, "pages are 4 KiB aligned") };
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .expect("array size overflows the address space");
        if bytes == 0 {
            return ZeroPages {
                ptr: std::ptr::NonNull::dangling(),
                len,
            };
        }
        // SAFETY: a fresh private anonymous mapping: no other owner, filled with zeroes,
        // page-aligned (so aligned for `T`), and zero bytes are a valid `T` (`Zeroable`).
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        match std::ptr::NonNull::new(p.cast()) {
            Some(ptr) if p != libc::MAP_FAILED => ZeroPages { ptr, len },
            // Out of memory, as `Vec` reports it.
            _ => std::alloc::handle_alloc_error(
                std::alloc::Layout::from_size_align(bytes, 4096)
                    .unwrap_or(std::alloc::Layout::new::<T>()),
            ),
        }
    }
}

#[cfg(unix)]
impl<T: Zeroable> Drop for ZeroPages<T> {
    fn drop(&mut self) {
        let bytes = self.len * std::mem::size_of::<T>();
        if bytes != 0 {
            // SAFETY: drops the elements in place, then unmaps what `new` mapped.
            unsafe {
                std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(
                    self.ptr.as_ptr(),
                    self.len,
                ));
                libc::munmap(self.ptr.as_ptr().cast(), bytes);
            }
        }
    }
}

#[cfg(unix)]
impl<T: Zeroable> Deref for ZeroPages<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised elements live at `ptr` for as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

#[cfg(unix)]
impl<T: Zeroable> DerefMut for ZeroPages<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

#[cfg(not(unix))]
impl<T: Zeroable> ZeroPages<T> {
    pub fn new(len: usize) -> Self {
        ZeroPages {
            vec: (0..len).map(|_| T::zeroed()).collect(),
        }
    }
}

#[cfg(not(unix))]
impl<T: Zeroable> Deref for ZeroPages<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.vec
    }
}

#[cfg(not(unix))]
impl<T: Zeroable> DerefMut for ZeroPages<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.vec
    }
}

impl<T: Zeroable> Default for ZeroPages<T> {
    fn default() -> Self {
        Self::new(0)
    }
}

impl<T: Zeroable + std::fmt::Debug> std::fmt::Debug for ZeroPages<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq, Zeroable)]
    #[repr(align(64))]
    struct Row {
        a: u64,
        b: u32,
        c: bool,
    }

    #[test]
    fn starts_zeroed_aligned_and_keeps_what_is_written() {
        let mut rows = ZeroPages::<Row>::new(100_000);
        assert_eq!(rows.len(), 100_000);
        assert_eq!(rows.as_ptr() as usize % 64, 0);
        assert!(rows.iter().all(|r| *r == Row::zeroed()));
        rows[77_777] = Row {
            a: 7,
            b: 8,
            c: true,
        };
        assert_eq!(rows[77_777].a, 7);
        assert_eq!(rows.iter().filter(|r| r.c).count(), 1);
        assert!(ZeroPages::<Row>::new(0).is_empty());
    }

    #[test]
    fn drops_what_it_holds() {
        #[derive(Zeroable)]
        struct Holder(Option<Box<u32>>);
        let mut held = ZeroPages::<Holder>::new(3);
        held[1].0 = Some(Box::new(5));
        assert_eq!(held[1].0.as_deref(), Some(&5));
        drop(held); // Miri or a leak checker would flag a missed drop.
    }
}
