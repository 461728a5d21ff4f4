//! Threads inside one check (issue 23): independent steps of an inference
//! (the non-cycle checks, the process and real-time graphs, the edges) run
//! side by side with [`join`], whose result is the same as running them one
//! after the other, so output never depends on the thread count.
//!
//! The budget is process-wide: threads checking histories (one per
//! [`Checking`] guard, i.e. `-j`'s jobs at work) plus the helpers [`join`]
//! has running never exceed the cores ([`cores`]): with `-j 2` on two cores
//! each check runs on its own thread, with one history it gets both. A
//! [`join`] that finds no core free runs its two parts in turn.
//!
//! Reading a history counts as checking it (the reader holds a
//! [`Checking`] guard too), and the reader's extra threads take their
//! places with [`Helpers`], so a history read while `-j` checks others
//! gets only the cores they leave free.
//!
//! `ELLERY_THREADS=N` sets the cores to count on (`1`: every check and
//! every read on one thread; for timings, and to compare outputs).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Checks running now.
static CHECKING: AtomicUsize = AtomicUsize::new(0);

/// Helper threads running now ([`join`]'s and the reader's).
static HELPERS: AtomicUsize = AtomicUsize::new(0);

/// Threads (checks or helpers) that wait for a helper of theirs
/// ([`Lent`]): their cores are free for that helper's own helpers.
static LENT: AtomicUsize = AtomicUsize::new(0);

/// Lends the current thread's core while it waits for its helper (a
/// [`join`] whose first part ended first, a [`Later::get`] of running
/// work): `auto`'s version chains run on a helper beside the inference,
/// and once the inference is done they may take the waiting thread's
/// core for their own halves (issue 23). Whatever is started in that time
/// ends before the helper does (every helper's work is scoped), so before
/// the lender runs again.
struct Lent(());

impl Lent {
    fn start() -> Lent {
        LENT.fetch_add(1, Ordering::SeqCst);
        Lent(())
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        LENT.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The cores a process may use: `ELLERY_THREADS` when it is a positive
/// number, else the machine's (read once).
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| {
        std::env::var("ELLERY_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    })
}

/// Counts a check as running while alive (see the module doc).
pub struct Checking(());

impl Checking {
    /// Starts counting.
    pub fn start() -> Checking {
        CHECKING.fetch_add(1, Ordering::SeqCst);
        Checking(())
    }
}

impl Drop for Checking {
    fn drop(&mut self) {
        CHECKING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Threads that check (or read) histories, less those that wait
/// ([`LENT`]), so that `busy + helpers` is the threads that run. Never
/// below zero: a lend beyond the checks (helpers waiting while no check
/// is counted, as in unit tests) is ignored, which only leaves a core
/// idle.
fn busy(checking: usize, lent: usize) -> usize {
    checking.saturating_sub(lent)
}

/// Helper places free when `busy` threads check (or read) histories and
/// `helpers` helpers run, on `cores` cores: the one rule of the budget
/// (the caller's own thread always counts).
fn free_places(cores: usize, busy: usize, helpers: usize) -> usize {
    cores.saturating_sub((busy + helpers).max(1))
}

/// Places in the budget for helper threads a caller runs itself (the
/// reader's parts, [`crate::read`]), given back on drop. [`join`] takes one
/// the same way.
pub struct Helpers(usize);

impl Helpers {
    /// Up to `want` places, as many as the checks and helpers running now
    /// leave free (perhaps none).
    pub fn take(want: usize) -> Helpers {
        let mut got = 0;
        let busy = busy(CHECKING.load(Ordering::SeqCst), LENT.load(Ordering::SeqCst));
        let _ = HELPERS.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |h| {
            got = want.min(free_places(cores(), busy, h));
            (got > 0).then_some(h + got)
        });
        Helpers(got)
    }

    /// How many places this holds: threads the caller may run besides its
    /// own.
    pub fn count(&self) -> usize {
        self.0
    }
}

impl Drop for Helpers {
    fn drop(&mut self) {
        if self.0 > 0 {
            HELPERS.fetch_sub(self.0, Ordering::SeqCst);
        }
    }
}

/// Runs `a` and `b`, `b` on a helper thread when the budget has a core
/// free, else after `a`; returns both results. A panic in either is
/// re-raised with its own payload (so [`crate::internal::catch`] reports
/// its message).
pub fn join<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    let helper = Helpers::take(1);
    if helper.count() == 0 {
        let ra = a();
        return (ra, b());
    }
    on_helper(helper, a, b)
}

/// Runs `a`, and `b` beside it on a helper thread when the budget has a
/// core free; else `b` runs after `a` only when `after(&a's result)` says
/// it is still wanted (`None` otherwise). For speculative work that costs
/// nothing on a free core (`auto`'s witness beside the inference, issue
/// 23). Only `b` crosses threads. Panics are re-raised as in [`join`].
pub fn beside<A, B: Send>(
    a: impl FnOnce() -> A,
    b: impl FnOnce() -> B + Send,
    after: impl FnOnce(&A) -> bool,
) -> (A, Option<B>) {
    let helper = Helpers::take(1);
    if helper.count() == 0 {
        let ra = a();
        let rb = after(&ra).then(b);
        return (ra, rb);
    }
    let (ra, rb) = on_helper(helper, a, b);
    (ra, Some(rb))
}

/// The result of the `b` of [`start_beside`]: running on a helper thread,
/// or not started (no core was free), to run when asked for.
pub enum Later<'scope, B> {
    /// Running on a helper thread.
    Running(std::thread::ScopedJoinHandle<'scope, B>),
    /// Not started.
    Deferred(Box<dyn FnOnce() -> B + 'scope>),
}

impl<B> Later<'_, B> {
    /// `b`'s result: waits for the helper, or runs `b` now. A panic on the
    /// helper is re-raised here.
    pub fn get(self) -> B {
        match self {
            Later::Running(handle) => {
                let _lent = Lent::start();
                match handle.join() {
                    Ok(b) => b,
                    Err(payload) => std::panic::resume_unwind(payload),
                }
            }
            Later::Deferred(b) => b(),
        }
    }
}

/// Starts `b` on a helper thread when the budget has a core free, and runs
/// `a` with it: `a` asks for `b`'s result with [`Later::get`] (which runs
/// `b` then if it was not started) or never does (a started `b` is still
/// waited for before this returns). For speculative work started before
/// it is known to be wanted (`auto`'s witness beside its first steps,
/// issue 23). Only `b` crosses threads.
pub fn start_beside<A, B: Send>(
    b: impl FnOnce() -> B + Send,
    a: impl FnOnce(Later<'_, B>) -> A,
) -> A {
    let helper = Helpers::take(1);
    if helper.count() == 0 {
        return a(Later::Deferred(Box::new(b)));
    }
    std::thread::scope(|s| {
        let handle = s.spawn(move || {
            let _helper = helper;
            b()
        });
        a(Later::Running(handle))
    })
}

/// `a` on this thread and `b` on a helper thread holding `helper`'s place.
fn on_helper<A, B: Send>(
    helper: Helpers,
    a: impl FnOnce() -> A,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    std::thread::scope(|s| {
        let hb = s.spawn(move || {
            let _helper = helper;
            b()
        });
        let ra = a();
        let _lent = Lent::start();
        match hb.join() {
            Ok(rb) => (ra, rb),
            Err(payload) => std::panic::resume_unwind(payload),
        }
    })
}

/// Runs `f` on the two halves of `0..n` (on two threads as [`join`]
/// does) when `n` is at least `from`, else on `0..n` and then the empty
/// `n..n`; returns the two results in order. For scans of a history's ops
/// whose results combine in op order (issue 23).
pub fn halves<T: Send>(
    n: usize,
    from: usize,
    f: impl Fn(std::ops::Range<usize>) -> T + Sync,
) -> [T; 2] {
    if n < from {
        return [f(0..n), f(n..n)];
    }
    let (a, b) = join(|| f(0..n / 2), || f(n / 2..n));
    [a, b]
}

/// The size from which a scan of a history's ops is worth cutting in two
/// with [`halves`] (a helper thread costs tens of microseconds).
pub const SPLIT_FROM: usize = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `b` as the second part of a [`join`] whose first part waits
    /// for it (so lends no core while `b` runs; when the two run in turn,
    /// it waits half a second first); whether they ran side by side (the
    /// other tests hold places of the budget at times).
    fn inside_a_waiting_join<T: Send>(b: impl FnOnce() -> T + Send) -> (bool, T) {
        let (tx, rx) = std::sync::mpsc::channel();
        let (first, (second, r)) = join(
            move || {
                let _ = rx.recv_timeout(std::time::Duration::from_millis(500));
                std::thread::current().id()
            },
            move || {
                let r = b();
                let _ = tx.send(());
                (std::thread::current().id(), r)
            },
        );
        (first != second, r)
    }

    #[test]
    fn beside_runs_the_second_when_a_core_is_free_or_when_still_wanted() {
        let _c = Checking::start();
        // Wanted after: always run, on a helper or after.
        assert_eq!(beside(|| 1, || 2, |_| true), (1, Some(2)));
        // Not wanted after: only a free core runs it; inside a join that
        // took the last free place, it does not run.
        let (a, b) = beside(|| 1, || 2, |&a| a != 1);
        assert!(b.is_none() || b == Some(2), "{b:?}");
        assert_eq!(a, 1);
        let spent = cores() <= 2;
        let (side_by_side, (x, y)) = inside_a_waiting_join(|| beside(|| 3, || 4, |_| false));
        assert_eq!(x, 3);
        if spent && side_by_side {
            assert_eq!(y, None);
        }
        let r =
            crate::internal::catch(|| beside(|| 1, || -> u8 { panic!("beside failed") }, |_| true));
        assert!(r.expect_err("re-raised").starts_with("beside failed"));
    }

    #[test]
    fn start_beside_gives_the_result_when_asked_and_runs_deferred_work_only_then() {
        let _c = Checking::start();
        assert_eq!(start_beside(|| 2, |later| 1 + later.get()), 3);
        // Not asked for: a started `b` still ends before the return; a
        // deferred one never runs.
        let ran = std::sync::atomic::AtomicBool::new(false);
        let set = || ran.store(true, std::sync::atomic::Ordering::SeqCst);
        let (side_by_side, started) =
            inside_a_waiting_join(|| start_beside(set, |later| matches!(later, Later::Running(_))));
        assert_eq!(ran.load(std::sync::atomic::Ordering::SeqCst), started);
        if cores() <= 2 && side_by_side {
            assert!(!started, "inside a join on two cores no place is free");
        }
        let r = crate::internal::catch(|| {
            start_beside(
                || -> u8 { panic!("started beside failed") },
                |later| later.get(),
            )
        });
        assert!(r
            .expect_err("re-raised")
            .starts_with("started beside failed"));
    }

    #[test]
    fn join_returns_both_results_in_order_and_reraises_panics() {
        let _c = Checking::start();
        let (a, b) = join(|| (0..1000u64).sum::<u64>(), || "b".to_string());
        assert_eq!((a, b.as_str()), (499_500, "b"));
        // Nested joins find the budget spent and run in turn.
        let (x, (y, z)) = join(|| 1, || join(|| 2, || 3));
        assert_eq!((x, y, z), (1, 2, 3));
        let r = crate::internal::catch(|| join(|| 1, || -> u8 { panic!("helper failed") }));
        assert!(r.expect_err("re-raised").starts_with("helper failed"));
    }

    #[test]
    fn halves_cover_the_range_in_order() {
        let _c = Checking::start();
        let sum = |r: std::ops::Range<usize>| (r.start, r.end, r.sum::<usize>());
        assert_eq!(halves(10, 4, sum), [(0, 5, 10), (5, 10, 35)]);
        assert_eq!(halves(3, 4, sum), [(0, 3, 3), (3, 3, 0)]);
        assert_eq!(halves(0, 0, sum), [(0, 0, 0), (0, 0, 0)]);
    }

    #[test]
    fn the_budget_leaves_one_core_per_busy_thread() {
        // One history on two cores: one helper; two (`-j 2`, or one read
        // while another is checked): none.
        assert_eq!(free_places(2, 1, 0), 1);
        assert_eq!(free_places(2, 0, 0), 1, "the caller's own thread counts");
        assert_eq!(free_places(2, 2, 0), 0);
        assert_eq!(free_places(2, 1, 1), 0);
        assert_eq!(free_places(8, 3, 2), 3);
        assert_eq!(free_places(1, 1, 0), 0);
        assert_eq!(free_places(2, 5, 3), 0);
        // One history on two cores whose thread waits for its helper: the
        // helper may take one more (`auto`'s chains once the inference is
        // done); with `-j 2` the other check keeps it.
        assert_eq!(free_places(2, busy(1, 1), 1), 1);
        assert_eq!(free_places(2, busy(2, 1), 1), 0);
        assert_eq!(busy(0, 1), 0);
    }
}
