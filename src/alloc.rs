//! The binary's allocator: the system's, with big blocks backed by huge
//! pages where the kernel offers them on request and they pay.
//!
//! A check builds its tables once and touches each page of them: with 4 KB
//! pages, faulting them in was a fifth of the CPU of `ellery check` on a
//! 200k-transaction rw-register history (page faults, their memory-cgroup
//! charges and unmapping; `perf`, 29 Nov), most of it under the reader's
//! growing tables. Linux hands out 2 MB pages for a region marked
//! `MADV_HUGEPAGE` when `/sys/kernel/mm/transparent_hugepage/enabled` is
//! `madvise` (the common default) or `always`: one fault per 2 MB instead of
//! 512. Only blocks of at least [`ADVISE_FROM_BYTES`] are marked; glibc maps
//! those on their own ([`crate::limits::tune_allocator`]), so a mark covers
//! one block's mapping and is dropped with it. Elsewhere (other systems, THP
//! `never`) the mark is refused and nothing changes.
//!
//! Not in a virtual machine that hands free 2 MB blocks back to its host
//! (free page reporting, [`huge_pages_pay`]): there a fresh huge page is
//! nearly always one the host took back, and faulting it in waits for the
//! host to back it again. Checking 1M list-append transactions spent a
//! third of its CPU zeroing such pages (`perf`, 30 Nov: 1.4–2.0 s of system
//! CPU against 0.45 s with 4 KB pages, which mostly come from pages freed
//! moments before). [`set_huge_pages`] turns the marks off;
//! [`crate::limits::tune_allocator`] decides once at start
//! (`ELLERY_HUGE_PAGES=on|off` overrides).
//!
//! ```
//! use ellery::alloc::BigPages;
//! // In a binary: #[global_allocator] static ALLOC: BigPages = BigPages;
//! let a = BigPages;
//! let layout = std::alloc::Layout::from_size_align(8 << 20, 8).unwrap();
//! unsafe {
//!     let p = std::alloc::GlobalAlloc::alloc(&a, layout);
//!     assert!(!p.is_null());
//!     p.write(7);
//!     std::alloc::GlobalAlloc::dealloc(&a, p, layout);
//! }
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Whether big blocks are marked for huge pages ([`set_huge_pages`]).
static HUGE_PAGES: AtomicBool = AtomicBool::new(true);

/// Turns the huge-page marks of [`BigPages`] on or off (on by default).
pub fn set_huge_pages(on: bool) {
    HUGE_PAGES.store(on, Relaxed);
}

/// Whether marking big blocks for huge pages pays here: `ELLERY_HUGE_PAGES`
/// (`on` or `off`) when set, else not when the kernel reports free blocks
/// to a hypervisor (module docs).
pub fn huge_pages_pay() -> bool {
    match std::env::var("ELLERY_HUGE_PAGES").as_deref() {
        Ok("on") => return true,
        Ok("off") => return false,
        _ => {}
    }
    let order =
        std::fs::read_to_string("/sys/module/page_reporting/parameters/page_reporting_order");
    !order.is_ok_and(|o| reports_free_memory(&o))
}

/// Whether a `page_reporting_order` of `text` says free blocks go back to
/// the host: mainline Linux shows -1 until a reporting device (a balloon)
/// registers, then the order of the smallest block reported (9, a huge
/// page, by default; a huge page split from a bigger reported block was
/// taken back as well).
fn reports_free_memory(text: &str) -> bool {
    text.trim().parse::<i32>().is_ok_and(|o| o >= 0)
}

/// Blocks at least this large are marked for huge pages: big enough that
/// the 2 MB granularity adds little to what they hold.
pub const ADVISE_FROM_BYTES: usize = 4 << 20;

/// [`System`], marking big blocks for huge pages (see the module docs).
pub struct BigPages;

// SAFETY: every call is forwarded to `System` unchanged; the mark only sets
// an advisory flag on memory this allocator just handed out.
unsafe impl GlobalAlloc for BigPages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        // A block that grew past the bound, or moved, is marked again (a
        // moved mapping keeps its mark; marking twice is harmless).
        advise(p, new_size);
        p
    }
}

/// Marks the pages of the block at `p` of `len` bytes for huge pages, when
/// it is at least [`ADVISE_FROM_BYTES`].
fn advise(p: *mut u8, len: usize) {
    if p.is_null() || len < ADVISE_FROM_BYTES || !HUGE_PAGES.load(Relaxed) {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        /// Linux's `MADV_HUGEPAGE`.
        const MADV_HUGEPAGE: i32 = 14;
        const PAGE: usize = 4096;
        // The whole pages of the block: glibc's mapping of a big block
        // starts a header before it, on a page boundary, so these are its
        // pages (marking the mapping whole keeps it one mapping, which a
        // later `mremap` of the block needs).
        let start = p as usize & !(PAGE - 1);
        let end = (p as usize + len + PAGE - 1) & !(PAGE - 1);
        // SAFETY: the range lies within memory this process owns (the
        // block just allocated); MADV_HUGEPAGE changes no contents.
        unsafe {
            madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Any reporting order turns the marks off; none, or mainline's -1 (no
    /// reporting device), keeps them.
    #[test]
    fn reporting_of_huge_blocks_is_read_from_the_order() {
        assert!(reports_free_memory("9\n"));
        assert!(reports_free_memory("0"));
        assert!(!reports_free_memory("-1\n"));
        assert!(reports_free_memory("10"));
        assert!(!reports_free_memory("none"));
        assert!(!reports_free_memory(""));
    }

    /// Marked blocks keep their contents when they grow past the bound and
    /// move, and zeroed ones read as zeros.
    #[test]
    fn big_blocks_keep_their_contents_across_growth() {
        let a = BigPages;
        let small = Layout::from_size_align(1 << 20, 8).expect("layout");
        // SAFETY: every pointer is used within the size it was allocated
        // or reallocated with, and freed once with its latest layout.
        unsafe {
            let p = a.alloc(small);
            assert!(!p.is_null());
            for i in 0..small.size() {
                *p.add(i) = (i % 251) as u8;
            }
            let grown = 16 << 20;
            let q = a.realloc(p, small, grown);
            assert!(!q.is_null());
            assert!((0..small.size()).all(|i| *q.add(i) == (i % 251) as u8));
            *q.add(grown - 1) = 9;
            let bigger = 64 << 20;
            let r = a.realloc(
                q,
                Layout::from_size_align(grown, 8).expect("layout"),
                bigger,
            );
            assert!(!r.is_null());
            assert!((0..small.size()).all(|i| *r.add(i) == (i % 251) as u8));
            assert_eq!(*r.add(grown - 1), 9);
            a.dealloc(r, Layout::from_size_align(bigger, 8).expect("layout"));
            let zeroed = Layout::from_size_align(8 << 20, 8).expect("layout");
            let z = a.alloc_zeroed(zeroed);
            assert!(!z.is_null());
            assert!((0..zeroed.size()).step_by(4096).all(|i| *z.add(i) == 0));
            a.dealloc(z, zeroed);
        }
    }
}
