//! The process-wide thread budget (issue 23): reading and checking share
//! one count of the cores (`ELLERY_THREADS`), so a history read while
//! another is checked (`check -j 2`) gets no extra thread on two cores.
//! One test in its own binary: the budget is process-wide state.

use ellery::par::{join, Checking, Helpers};

#[test]
fn reads_and_checks_share_one_budget() {
    // Before anything reads the budget's size.
    std::env::set_var("ELLERY_THREADS", "2");
    assert_eq!(ellery::par::cores(), 2);

    // One history (read or checked): one helper on two cores.
    let first = Checking::start();
    let h = Helpers::take(4);
    assert_eq!(h.count(), 1);
    // The place is taken: nothing more for a reader or a join.
    assert_eq!(Helpers::take(1).count(), 0);
    let on = std::thread::current().id();
    let (a, b) = join(
        || std::thread::current().id(),
        || std::thread::current().id(),
    );
    assert_eq!((a, b), (on, on), "a join without a free core runs in turn");
    drop(h);
    assert_eq!(Helpers::take(1).count(), 1, "given back on drop");

    // Two histories at once (one read, one checked): no helper at all.
    let second = Checking::start();
    assert_eq!(Helpers::take(3).count(), 0);
    let (a, b) = join(
        || std::thread::current().id(),
        || std::thread::current().id(),
    );
    assert_eq!((a, b), (on, on));
    drop(second);
    let (_, b) = join(|| (), || std::thread::current().id());
    assert_ne!(
        b, on,
        "with a core free, join's second part runs on a helper"
    );
    drop(first);

    // Reading a history on the budget's two cores gives the one-thread
    // reader's result (the reader takes its parts' places the same way).
    let mut src = Vec::new();
    let opts = ellery::gen::GenOptions {
        workload: ellery::gen::Workload::RwRegister,
        txns: 2000,
        seed: 3,
        ..Default::default()
    };
    ellery::gen::generate(&opts, &mut src).expect("generated");
    let whole = ellery::read::read_history_bytes(src.clone(), "h", ellery::model::Format::Edn)
        .expect("reads");
    let parts = ellery::read::read_edn_in_parts(src, "h", 2).expect("reads");
    assert_eq!(whole.ops.len(), parts.ops.len());
    assert_eq!(Helpers::take(1).count(), 1, "every place given back");
}
