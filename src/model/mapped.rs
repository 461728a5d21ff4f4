//! A history file's bytes without copying them: a read-only mapping of
//! the file on Linux, the bytes read into memory elsewhere. The readers
//! parse the mapping, and a history read from it keeps it as its
//! [`super::SourceText`] to print ops.
//!
//! Reading a 229 MB history through `read` copied every byte from the page
//! cache into a buffer (a tenth of the reader's CPU, issue 23); mapped, the
//! parsers read the page cache itself. The pages of each block are faulted
//! in on the thread that joins the block before ([`FileBytes::prefetch`]),
//! as the copy was, and let go once the block is read
//! ([`FileBytes::release`]), so the resident size stays about two blocks
//! as before.
//!
//! A mapped file that shrinks while it is read (another program truncates
//! or rewrites it) makes the next read of a page past its new end a bus
//! error. Rather than dying of the signal, ellery then says so and exits
//! with 3, the code for bad input: the history was not read, so no verdict
//! is printed for it (files must not change during a check, whatever the
//! reader). A history of 16–64 MB keeps its mapping to print ops, so a
//! shrink while its result is printed ends the same way, with exit 3
//! (explanation files written by then stay).

use std::ops::Range;

/// A whole file's bytes: mapped (Linux) or read.
#[derive(Debug)]
pub struct FileBytes {
    #[cfg(target_os = "linux")]
    map: Option<linux::Map>,
    read: Vec<u8>,
}

impl FileBytes {
    /// The bytes of `file` (`len` bytes long when it was opened), named
    /// `origin` in errors.
    pub(crate) fn of(
        file: &mut std::fs::File,
        len: usize,
        origin: &str,
    ) -> std::io::Result<FileBytes> {
        #[cfg(target_os = "linux")]
        if let Some(map) = linux::Map::of(file, len, origin) {
            return Ok(FileBytes {
                map: Some(map),
                read: Vec::new(),
            });
        }
        let _ = origin;
        let mut read = Vec::with_capacity(len);
        std::io::Read::read_to_end(file, &mut read)?;
        Ok(FileBytes {
            #[cfg(target_os = "linux")]
            map: None,
            read,
        })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        #[cfg(target_os = "linux")]
        if let Some(map) = &self.map {
            return map.bytes();
        }
        &self.read
    }

    /// Faults the pages of `range` in now, on this thread (nothing when
    /// the bytes were read).
    pub(crate) fn prefetch(&self, range: Range<usize>) {
        #[cfg(target_os = "linux")]
        if let Some(map) = &self.map {
            map.advise(range, linux::MADV_POPULATE_READ);
        }
        let _ = range;
    }

    /// Lets go of the pages of `range` but the one holding its end (the
    /// next range's first): the file's pages stay in the page cache, out
    /// of this process's resident size.
    pub(crate) fn release(&self, range: Range<usize>) {
        #[cfg(target_os = "linux")]
        if let Some(map) = &self.map {
            map.advise(
                range.start..range.end / linux::PAGE * linux::PAGE,
                linux::MADV_DONTNEED,
            );
        }
        let _ = range;
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::c_void;
    use std::ops::Range;
    use std::os::fd::AsRawFd;
    use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

    extern "C" {
        fn mmap(
            addr: *mut c_void,
            len: usize,
            prot: i32,
            flags: i32,
            fd: i32,
            off: i64,
        ) -> *mut c_void;
        fn munmap(addr: *mut c_void, len: usize) -> i32;
        fn madvise(addr: *mut c_void, len: usize, advice: i32) -> i32;
        fn signal(signum: i32, handler: usize) -> usize;
        fn write(fd: i32, buf: *const c_void, count: usize) -> isize;
        fn _exit(status: i32) -> !;
        fn pause() -> i32;
    }
    /// Linux's bus error signal number (x86-64, AArch64, RISC-V).
    const SIGBUS: i32 = 7;

    /// The name of the file mapped while it is the only one since none was
    /// (`check FILE`), for [`on_bus_error`]: a leaked copy (a few bytes per
    /// mapped file), so that it stays valid whatever the handler reads.
    static ONLY_FILE: AtomicPtr<Box<[u8]>> = AtomicPtr::new(std::ptr::null_mut());
    /// How many files are mapped now.
    static MAPPED: AtomicUsize = AtomicUsize::new(0);

    /// What a bus error means while files are mapped: one of them shrank.
    /// Only async-signal-safe calls: writes and an immediate exit.
    extern "C" fn on_bus_error(_: i32) {
        // Two reading threads may fault at once: one says it and exits,
        // the others wait for that exit (their words interleaved with its).
        static SAYING: AtomicBool = AtomicBool::new(false);
        if SAYING.swap(true, Ordering::AcqRel) {
            loop {
                // SAFETY: pause(2) may be called in a signal handler.
                unsafe { pause() };
            }
        }
        let say = |bytes: &[u8]| {
            // SAFETY: write(2) may be called in a signal handler.
            unsafe { write(2, bytes.as_ptr().cast(), bytes.len()) };
        };
        let name = ONLY_FILE.load(Ordering::Acquire);
        if MAPPED.load(Ordering::Acquire) == 1 && !name.is_null() {
            say(b"ellery: ");
            // SAFETY: a leaked box, never freed.
            say(unsafe { &*name });
            say(b": the file shrank while it was read (files must not change during a check); no verdict\n");
        } else {
            say(b"ellery: a history file shrank while it was read (files must not change during a check); no verdict\n");
        }
        // SAFETY: _exit(2) may be called in a signal handler.
        unsafe { _exit(3) }
    }

    /// Installs [`on_bus_error`] once, before the first mapping, and notes
    /// `origin` as the file being mapped.
    fn catch_bus_errors(origin: &str) {
        static ONCE: std::sync::Once = std::sync::Once::new();
        // SAFETY: the handler only calls async-signal-safe functions.
        ONCE.call_once(|| unsafe {
            signal(SIGBUS, on_bus_error as extern "C" fn(i32) as usize);
        });
        // With two files mapped at once (`check -j`), neither is named: the
        // one left when the other ends would not be the one noted.
        let name = match MAPPED.fetch_add(1, Ordering::AcqRel) {
            0 => Box::leak(Box::new(origin.as_bytes().to_vec().into_boxed_slice())) as *mut _,
            _ => std::ptr::null_mut(),
        };
        ONLY_FILE.store(name, Ordering::Release);
    }
    const PROT_READ: i32 = 1;
    const MAP_PRIVATE: i32 = 2;
    pub(super) const MADV_DONTNEED: i32 = 4;
    pub(super) const MADV_POPULATE_READ: i32 = 22;
    pub(super) const PAGE: usize = 4096;

    /// A read-only private mapping of a whole file, unmapped when dropped.
    #[derive(Debug)]
    pub(super) struct Map {
        ptr: *mut c_void,
        len: usize,
    }

    // SAFETY: the mapping is read-only and owned by this value; the bytes
    // are shared as `&[u8]` only.
    unsafe impl Send for Map {}
    unsafe impl Sync for Map {}

    impl Map {
        /// Maps `len` bytes of `file`; `None` when the system refuses (or
        /// the file is empty).
        pub(super) fn of(file: &std::fs::File, len: usize, origin: &str) -> Option<Map> {
            if len == 0 {
                return None;
            }
            catch_bus_errors(origin);
            // SAFETY: a fresh read-only mapping of an open file; the
            // result is checked against MAP_FAILED.
            let ptr = unsafe {
                mmap(
                    std::ptr::null_mut(),
                    len,
                    PROT_READ,
                    MAP_PRIVATE,
                    file.as_raw_fd(),
                    0,
                )
            };
            if ptr as isize == -1 {
                MAPPED.fetch_sub(1, Ordering::AcqRel);
                return None;
            }
            Some(Map { ptr, len })
        }

        pub(super) fn bytes(&self) -> &[u8] {
            // SAFETY: `len` mapped readable bytes, alive as long as `self`.
            unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
        }

        /// Advice for the pages that `range` touches (its start rounded
        /// down to a page); errors are ignored: advice only.
        pub(super) fn advise(&self, range: Range<usize>, advice: i32) {
            let start = range.start / PAGE * PAGE;
            let end = range.end.min(self.len);
            if start >= end {
                return;
            }
            // SAFETY: the pages lie within this mapping.
            unsafe {
                madvise(self.ptr.add(start), end - start, advice);
            }
        }
    }

    impl Drop for Map {
        fn drop(&mut self) {
            // SAFETY: the mapping made in `of`, unmapped once.
            unsafe {
                munmap(self.ptr, self.len);
            }
            MAPPED.fetch_sub(1, Ordering::AcqRel);
        }
    }
}
