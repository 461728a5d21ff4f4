//! Issue 23: threads inside one check never change the output. The same
//! histories checked with `ELLERY_THREADS=1` (every step on one thread) and
//! `ELLERY_THREADS=2` (independent inference steps side by side), one at a
//! time (`-j 1`) and two at a time (`-j 2`, which leaves no core for helper
//! threads), print byte-identical results and exit the same way; and `auto`
//! answers MT list-append histories as before (the MT path answers the
//! valid ones, the inference the rest).

mod common;
use common::{s, Scratch};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `ellery ARGS` with `ELLERY_THREADS=threads`.
fn run(threads: &str, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ellery"))
        .env("ELLERY_THREADS", threads)
        .args(args)
        .output()
        .expect("runs")
}

/// [`run`]'s stdout and exit code.
fn ellery(threads: &str, args: &[&str]) -> (String, i32) {
    let out = run(threads, args);
    let stdout = String::from_utf8(out.stdout).expect("UTF-8");
    (stdout, out.status.code().expect("exit code"))
}

/// Generated histories (name, `gen` flags) and their expected summary.
const GENERATED: [(&str, &str, &str); 8] = [
    ("la", "-w list-append", "valid"),
    (
        "la-bad",
        "-w list-append --fault write-skew --fault cyclic-information-flow",
        "invalid\t:G1c :G2-item",
    ),
    ("rw", "-w rw-register", "valid"),
    (
        "rw-bad",
        "-w rw-register --fault aborted-read --fault write-skew",
        "invalid\t:G1a :G2-item",
    ),
    ("mtla", "-w list-append --mini", "valid"),
    (
        "mtla-bad",
        "-w list-append --mini --fault lost-update --info-fraction 0.05",
        "invalid\t:G-single-item :lost-update",
    ),
    ("mtrw", "-w rw-register --mini", "valid"),
    (
        "mtrw-bad",
        "-w rw-register --mini --fault stale-read",
        "invalid\t:G-single-item-realtime",
    ),
];

fn generate(dir: &Scratch) -> Vec<PathBuf> {
    GENERATED
        .iter()
        .map(|(name, flags, _)| {
            let mut args = vec!["gen", "-n", "2000", "--seed", "3"];
            args.extend(flags.split_whitespace());
            let (text, code) = ellery("1", &args);
            assert_eq!(code, 0, "gen {flags}");
            dir.file(&format!("{name}.edn"), &text)
        })
        .collect()
}

/// The same output, whatever the threads and jobs; returns it.
fn same_whatever_the_threads(args: &[&str]) -> (String, i32) {
    // `-j` after the subcommand.
    let with_jobs = |jobs| [&args[..1], &["-j", jobs][..], &args[1..]].concat();
    let one = ellery("1", &with_jobs("1"));
    for (threads, jobs) in [("2", "1"), ("2", "2"), ("1", "2")] {
        let other = ellery(threads, &with_jobs(jobs));
        assert_eq!(other, one, "ELLERY_THREADS={threads} -j {jobs} {args:?}");
    }
    one
}

#[test]
fn generated_histories_give_the_same_answers_on_one_and_two_threads() {
    let dir = Scratch::new("threads");
    let files = generate(&dir);
    let paths: Vec<&str> = files.iter().map(|p| s(p)).collect();
    let (summary, code) =
        same_whatever_the_threads(&[&["check", "-q", "--output", "summary"], &paths[..]].concat());
    let expected: String = files
        .iter()
        .zip(GENERATED)
        .map(|(p, (_, _, verdict))| format!("{}\t{verdict}\n", s(p)))
        .collect();
    assert_eq!(summary, expected);
    assert_eq!(code, 1);
    for algorithm in ["auto", "infer"] {
        for model in ["strict-serializable", "serializable", "snapshot-isolation"] {
            let args = [
                &["check", "-q", "--algorithm", algorithm, "-c", model][..],
                &paths[..],
            ]
            .concat();
            let (edn, code) = same_whatever_the_threads(&args);
            assert_eq!(edn.matches(";; ").count(), files.len(), "{edn}");
            assert_eq!(code, 1, "{algorithm} {model}");
        }
    }
}

/// The shipped example histories, every workload's directory at once.
#[test]
fn shipped_histories_give_the_same_answers_on_one_and_two_threads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("test-histories");
    let dirs: Vec<String> = ["list-append", "rw-register", "repeated-values"]
        .iter()
        .map(|d| s(&root.join(d)).to_string())
        .collect();
    let dirs: Vec<&str> = dirs.iter().map(String::as_str).collect();
    let (edn, code) = same_whatever_the_threads(&[&["check", "-q"], &dirs[..]].concat());
    assert!(edn.matches(";; ").count() > 50, "{edn}");
    // Some shipped examples are bad input (duplicate appends, …).
    assert_eq!(code, 3);
}

/// [`run`]'s stdout and the `--verbose` lines about each SCC's cycle
/// searches.
fn searches(threads: &str, args: &[&str]) -> (String, Vec<String>) {
    let out = run(threads, args);
    let stderr = String::from_utf8(out.stderr).expect("UTF-8");
    let lines = stderr
        .lines()
        .filter(|l| l.contains("scc of "))
        .map(String::from)
        .collect();
    (String::from_utf8(out.stdout).expect("UTF-8"), lines)
}

/// The SCCs are searched on two workers when a core is free (issue 23):
/// the cases and the `--verbose` lines still come in the SCCs' order.
#[test]
fn many_sccs_give_their_cases_and_lines_in_order_on_two_threads() {
    let dir = Scratch::new("threads-sccs");
    let args = "gen -w rw-register --mode read-committed -n 5000 -k 5 --seed 3";
    let (text, code) = ellery("1", &args.split(' ').collect::<Vec<_>>());
    assert_eq!(code, 0);
    let h = dir.file("rc.edn", &text);
    let check = ["check", "--verbose", s(&h)];
    let one = searches("1", &check);
    assert!(one.0.contains(":G2-item"), "{}", one.0);
    assert!(one.1.len() >= 4, "{:?}", one.1);
    assert_eq!(searches("2", &check), one);
}
