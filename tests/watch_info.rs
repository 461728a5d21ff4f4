//! `ellery watch` with crashed (`:info`) transactions and the new processes
//! Jepsen starts after each crash: collection goes on (it used to nearly
//! stop at the first `:info` op), verdicts stay `check`'s, and under a
//! real-time model a new process's read of a forgotten version is rejected
//! at once.

mod common;

use common::watch::{fenced_stale_read, gen, retained_counts, watch_same_as_check};
use common::{s, Scratch};
/// Watch's final map and exit code are check's; returns watch's stdout and
/// stderr (with `--verbose` round lines).
fn same_as_check(path: &str, models: &str, round: &str) -> (String, String) {
    watch_same_as_check(path, models, round, true)
}

/// rw-register with fences and 2% crashed transactions (each crash starts a
/// new process, as Jepsen does): under strict-serializable the stream is
/// collected to the end; under a session model too, and both verdicts are
/// check's, valid and with faults.
#[test]
fn fenced_rw_register_with_crashes_is_collected() {
    let dir = Scratch::new("watch-info-rw");
    let base = [
        "-w",
        "rw-register",
        "-n",
        "4000",
        "-p",
        "5",
        "-k",
        "50",
        "--mode",
        "strict-serializable",
        "--fences",
        "10",
        "--info-fraction",
        "0.02",
    ];
    let valid = gen(&dir, "valid.edn", &[&base[..], &["--seed", "9"]].concat());
    let (out, err) = same_as_check(&valid, "strict-serializable", "400");
    assert_eq!(out.trim(), "{:valid? true}");
    // Before, the first crash (line 132) stopped collection at 44 forgotten;
    // what is retained now waits for concurrent last writes of a key to be
    // ordered by a read or the key to be idle for 20,000 ops.
    let counts = retained_counts(&err);
    assert!(counts.last().unwrap().1 > 1000, "{counts:?}");
    let (out, _) = same_as_check(&valid, "strong-session-serializable", "400");
    assert_eq!(out.trim(), "{:valid? true}");
    for (i, f) in ["stale-read", "write-skew", "lost-update", "aborted-read"]
        .iter()
        .enumerate()
    {
        let seed = (40 + i).to_string();
        let p = gen(
            &dir,
            &format!("{f}.edn"),
            &[&base[..], &["--seed", &seed, "--fault", f]].concat(),
        );
        for models in ["strict-serializable", "strong-session-serializable"] {
            let (out, _) = same_as_check(&p, models, "400");
            // A stale read breaks real time only.
            let invalid = models == "strict-serializable" || *f != "stale-read";
            assert_eq!(
                out.lines().last().unwrap().starts_with("{:valid? false"),
                invalid,
                "{f} under {models}: {out}"
            );
        }
    }
}

/// list-append with 2% crashed transactions under strict-serializable: an
/// `:info` completion no longer counts as a real-time predecessor of what
/// follows it (it is none in Elle's real-time graph), a crashed transaction
/// whose elements were read is forgotten like the others, one never read is
/// set aside, so collection goes on.
#[test]
fn list_append_with_crashes_is_collected() {
    let dir = Scratch::new("watch-info-la");
    let base = ["-n", "6000", "-k", "100", "--info-fraction", "0.02"];
    let valid = gen(&dir, "valid.edn", &[&base[..], &["--seed", "3"]].concat());
    let (out, err) = same_as_check(&valid, "strict-serializable", "400");
    assert_eq!(out.trim(), "{:valid? true}");
    // Without crashes the same stream forgets 1572 (the rest waits for its
    // keys to be read or idle for 20,000 ops); the first crash used to stop
    // collection at 50.
    let counts = retained_counts(&err);
    let forgotten = counts.last().unwrap().1;
    assert!(forgotten > 1000, "list-append: {counts:?}");
    let p = gen(
        &dir,
        "stale.edn",
        &[&base[..], &["--seed", "4", "--fault", "stale-read"]].concat(),
    );
    let (out, _) = same_as_check(&p, "strict-serializable", "400");
    assert!(
        out.lines().last().unwrap().starts_with("{:valid? false"),
        "{out}"
    );
}

/// x = 1 then x = 2, many fenced rounds of other keys, then a process that
/// never appeared before reads x: with the stale value 1, under
/// strict-serializable (real time orders the new process after everything
/// forgotten) the read is rejected as it arrives; under a session model
/// (nothing orders it) the read is legal, collection stops and the final
/// map is check's. Reading the latest value is valid under both.
#[test]
fn new_process_after_collection() {
    let dir = Scratch::new("watch-info-late");
    let stale = dir.file("stale.edn", &fenced_stale_read(200, 7, "1"));
    let (out, err) = same_as_check(s(&stale), "strict-serializable", "40");
    assert!(
        out.contains(":read-of-collected-version [{:op {:index 1605, "),
        "{out}"
    );
    assert!(
        out.lines().last().unwrap().starts_with("{:valid? false"),
        "{out}"
    );
    assert!(!err.contains("first appears"), "{err}");
    let (out, err) = same_as_check(s(&stale), "strong-session-serializable", "40");
    assert_eq!(out.trim(), "{:valid? true}");
    assert!(err.contains("process 7 first appears"), "{err}");
    let fresh = dir.file("fresh.edn", &fenced_stale_read(200, 7, "2"));
    for models in ["strict-serializable", "strong-session-serializable"] {
        let (out, _) = same_as_check(s(&fresh), models, "40");
        assert_eq!(out.trim(), "{:valid? true}", "{models}");
    }
}
