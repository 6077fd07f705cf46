//! The memory under a [`super::MacTable`]: zeroed slots, on 2 MiB pages
//! once the table is large enough to fill them.
//!
//! Why: with cbench's 100,000 hosts per switch each table is 4 MiB, and 16
//! to 64 of them on 4 KiB pages are 16k to 64k pages against the few
//! thousand entries of the processor's second-level TLB, so nearly every
//! lookup also walks the page table (measured: about a fifth of all CPU
//! time stalled right after the table's prefetch). On 2 MiB pages the same
//! tables need 32 to 128 entries. Transparent huge pages are usually
//! enabled only for memory that asks for them (`madvise` mode), and only
//! for 2 MiB-aligned ranges advised *before* they are first touched: a
//! table grown in a `Vec` and advised afterwards got a tenth of its memory
//! onto huge pages and no gain (BENCHMARKS.md, "Tried and not kept": MAC
//! tables on huge pages). No crate hands out aligned, advised, zeroed
//! memory, so this maps it: anonymous memory is zero-filled, and a zeroed
//! slot is an empty one.
//!
//! Smaller tables stay in a `Vec`: a switch with a few hosts must not cost
//! a 2 MiB page (10,000 switches would need 20 GiB).

use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Bytes of a huge page on x86-64 and most arm64 kernels.
const HUGE_PAGE: usize = 2 << 20;

/// Types for which the all-zero byte pattern is a valid value, so zeroed
/// memory can be read as them.
///
/// # Safety
/// Implement only for types whose every field is an integer (or such a
/// type): no references, no enums with niches, no `bool`.
#[allow(unsafe_code)]
pub unsafe trait Zeroable: Copy {}

/// `len` zeroed `T`s: a `Vec` below [`HUGE_PAGE`] bytes, else mapped.
pub enum Slots<T: Zeroable> {
    /// A small table.
    Heap(Vec<T>),
    /// A large table, on its own 2 MiB-aligned mapping.
    Mapped(Mapping<T>),
}

impl<T: Zeroable> Slots<T> {
    /// `len` zeroed slots.
    pub fn zeroed(len: usize) -> Slots<T> {
        let bytes = len.saturating_mul(size_of::<T>());
        if bytes >= HUGE_PAGE {
            if let Some(m) = Mapping::zeroed(len) {
                return Slots::Mapped(m);
            }
        }
        Slots::Heap(zeroed_vec(len))
    }

    /// Whether the slots sit on a mapping advised onto huge pages (the
    /// kernel may still have given 4 KiB pages).
    pub fn is_mapped(&self) -> bool {
        matches!(self, Slots::Mapped(_))
    }
}

#[allow(unsafe_code)]
fn zeroed_vec<T: Zeroable>(len: usize) -> Vec<T> {
    // SAFETY: `T: Zeroable` says all-zero bytes are a valid `T`.
    vec![unsafe { std::mem::zeroed::<T>() }; len]
}

impl<T: Zeroable> Deref for Slots<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Slots::Heap(v) => v,
            Slots::Mapped(m) => m.as_slice(),
        }
    }
}

impl<T: Zeroable> DerefMut for Slots<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            Slots::Heap(v) => v,
            Slots::Mapped(m) => m.as_mut_slice(),
        }
    }
}

impl<T: Zeroable> Clone for Slots<T> {
    fn clone(&self) -> Self {
        let mut copy = Slots::zeroed(self.len());
        copy.copy_from_slice(self);
        copy
    }
}

impl<T: Zeroable> std::fmt::Debug for Slots<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.is_mapped() { "mapped" } else { "heap" };
        write!(f, "{} {} slots", self.len(), kind)
    }
}

/// An anonymous private mapping of `len` `T`s, 2 MiB-aligned and advised
/// onto huge pages before anything touched it.
pub struct Mapping<T> {
    ptr: NonNull<T>,
    len: usize,
    /// The mapped bytes (`len` rounded up to whole huge pages).
    bytes: usize,
}

// SAFETY: the mapping is owned memory like a `Vec<T>`'s.
#[allow(unsafe_code)]
unsafe impl<T: Send> Send for Mapping<T> {}
// SAFETY: shared access only reads, as for `&[T]`.
#[allow(unsafe_code)]
unsafe impl<T: Sync> Sync for Mapping<T> {}

#[allow(unsafe_code)]
impl<T: Zeroable> Mapping<T> {
    /// `None` when the kernel refuses the memory (the caller falls back to
    /// the heap, which would then fail as loudly as any allocation).
    fn zeroed(len: usize) -> Option<Mapping<T>> {
        debug_assert!(align_of::<T>() <= HUGE_PAGE);
        let bytes = len.checked_mul(size_of::<T>())?.next_multiple_of(HUGE_PAGE);
        // Map one huge page more than needed, then unmap the unaligned
        // head and the tail, leaving `bytes` starting on a 2 MiB boundary.
        let span = bytes.checked_add(HUGE_PAGE)?;
        // SAFETY: a fresh anonymous mapping; no existing memory is named.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                span,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return None;
        }
        let start = raw as usize;
        let aligned = start.next_multiple_of(HUGE_PAGE);
        let head = aligned - start;
        let tail = span - head - bytes;
        // SAFETY: both ranges lie inside the mapping just made, and
        // nothing refers to them. A failed unmap only leaves them mapped.
        unsafe {
            if head > 0 {
                libc::munmap(raw, head);
            }
            if tail > 0 {
                libc::munmap((aligned + bytes) as *mut libc::c_void, tail);
            }
            // Before the first touch, so the first faults get huge pages.
            // Failure (THP off) leaves ordinary pages: still correct.
            libc::madvise(aligned as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE);
        }
        Some(Mapping {
            ptr: NonNull::new(aligned as *mut T)?,
            len,
            bytes,
        })
    }

    fn as_slice(&self) -> &[T] {
        // SAFETY: `ptr` is aligned for `T` (2 MiB-aligned), the mapping
        // holds at least `len` `T`s, zero-filled by the kernel (valid by
        // `T: Zeroable`) or written since, and lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as `as_slice`, and `&mut self` makes this the only
        // reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// Where the slots start, for tests of the alignment.
    #[cfg(test)]
    pub fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }
}

impl<T> Drop for Mapping<T> {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: exactly the range mapped in `zeroed`, no longer used.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.bytes);
        }
    }
}
