//! Internal errors: a panic while checking one history becomes that
//! history's error, so the other histories of a batch still get their
//! answers (exit code [`crate::error::EXIT_INTERNAL`]).
//!
//! A panic hook, installed once, keeps the panic's message and location for
//! the thread that catches it, instead of printing it there and then: the
//! caller prints one line naming the history. A panic on a thread that is
//! not catching (a worker a check spawned, whose panic its parent re-raises)
//! is printed as one line while any catch is active, since it cannot be
//! tied to a history from here.

use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe, PanicHookInfo};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

thread_local! {
    /// Whether this thread is inside [`catch`].
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    /// The last panic caught on this thread: message and location.
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Catch regions active on any thread.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// The panic's message and where it happened.
fn describe(info: &PanicHookInfo<'_>) -> String {
    let msg = payload_message(info.payload());
    match info.location() {
        Some(l) => format!("{msg} (at {}:{}:{})", l.file(), l.line(), l.column()),
        None => msg,
    }
}

/// A panic payload's message (`panic!` gives a `&str` or a `String`).
fn payload_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_string())
}

fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CATCHING.with(Cell::get) {
                LAST.with(|l| *l.borrow_mut() = Some(describe(info)));
            } else if ACTIVE.load(Ordering::SeqCst) > 0 {
                eprintln!(
                    "ellery: internal error in a worker thread: {}",
                    describe(info)
                );
            } else {
                default(info);
            }
        }));
    });
}

/// Runs `work`; a panic in it becomes `Err` with the panic's message and
/// location (printed nowhere: the caller reports it).
pub fn catch<R>(work: impl FnOnce() -> R) -> Result<R, String> {
    install_hook();
    let was = CATCHING.with(|c| c.replace(true));
    ACTIVE.fetch_add(1, Ordering::SeqCst);
    let r = catch_unwind(AssertUnwindSafe(work));
    ACTIVE.fetch_sub(1, Ordering::SeqCst);
    CATCHING.with(|c| c.set(was));
    r.map_err(|payload| {
        LAST.with(|l| l.borrow_mut().take())
            .unwrap_or_else(|| payload_message(&*payload))
    })
}

/// The line ellery prints for an internal error in the history `what`.
pub fn message(what: &str, panic: &str) -> String {
    format!("{what}: internal error (a bug in ellery; please report it with this history): {panic}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error_with_its_location() {
        let r: Result<(), String> = catch(|| panic!("boom {}", 7));
        let e = r.expect_err("panicked");
        assert!(e.starts_with("boom 7 (at src/internal.rs:"), "{e}");
        assert_eq!(catch(|| 5), Ok(5));
        // Nested catches keep the outer region catching.
        let outer = catch(|| {
            let inner: Result<(), String> = catch(|| panic!("inner"));
            assert!(inner.is_err());
            panic!("outer")
        });
        assert!(outer.expect_err("outer").starts_with("outer (at"));
        // A panic in a worker thread surfaces as its scope's panic (the
        // worker's own message goes to standard error, one line).
        let scoped: Result<(), String> = catch(|| {
            std::thread::scope(|s| {
                s.spawn(|| panic!("in a worker"));
            })
        });
        let e = scoped.expect_err("re-raised");
        assert!(e.starts_with("a scoped thread panicked (at "), "{e}");
    }
}
