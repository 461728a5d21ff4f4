//! Bad input never hurts: histories whose ops are out of `:index` order,
//! internal errors confined to their own history, file names derived from
//! data kept inside `-d`, and the memory guard.

mod common;

use common::{s, Scratch};
use std::path::Path;
use std::process::{Command, Output};

/// Runs ellery with `args`, and `env` set, in `dir`.
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ellery"));
    c.args(args)
        .current_dir(dir)
        .env_remove("ELLERY_INJECT_PANIC");
    for (k, v) in env {
        c.env(k, v);
    }
    let o: Output = c.output().expect("ellery runs");
    (
        o.status.code().expect("exit code, not a signal"),
        String::from_utf8(o.stdout).expect("UTF-8 stdout"),
        String::from_utf8(o.stderr).expect("UTF-8 stderr"),
    )
}

/// A process whose second transaction has smaller indices than its first
/// (the file's order and `:index` order disagree): this made the SAT
/// answer's explanation panic.
const DECREASING: &str = "\
{:index 10 :type :invoke :process 0 :f :txn :value [[:w 1 1]]}
{:index 11 :type :ok :process 0 :f :txn :value [[:w 1 1]]}
{:index 2 :type :invoke :process 0 :f :txn :value [[:r 1 nil]]}
{:index 3 :type :ok :process 0 :f :txn :value [[:r 1 nil]]}
";

/// An op line that appears twice.
const DUPLICATED: &str = "\
{:index 0 :type :invoke :process 0 :f :txn :value [[:w 1 1]]}
{:index 1 :type :ok :process 0 :f :txn :value [[:w 1 1]]}
{:index 2 :type :invoke :process 1 :f :txn :value [[:r 1 nil]]}
{:index 3 :type :ok :process 1 :f :txn :value [[:r 1 1]]}
{:index 3 :type :ok :process 1 :f :txn :value [[:r 1 1]]}
";

#[test]
fn ops_out_of_index_order_are_input_errors_under_every_algorithm() {
    let dir = Scratch::new("index");
    dir.file("dec.edn", DECREASING);
    dir.file("dup.edn", DUPLICATED);
    let want = |file: &str, line: u32, last: u64, found: u64| {
        format!(
            "ellery: {file}:{line}:1: expected an op with an :index greater than the previous op's ({last}), found :index {found} (ops must be in :index order, each once)\n"
        )
    };
    for alg in ["auto", "sat", "infer", "mini"] {
        for (file, line, last, found) in [("dec.edn", 3, 11, 2), ("dup.edn", 5, 3, 3)] {
            let (code, out, err) = run(&dir.0, &["check", "--algorithm", alg, file], &[]);
            assert_eq!((code, out.as_str()), (3, ""), "{alg} {file}: {err}");
            assert_eq!(err, want(file, line, last, found), "{alg}");
        }
        // elle-cli mode: its one error code.
        let (code, _, err) = run(
            &dir.0,
            &["-m", "rw-register", "--algorithm", alg, "dec.edn"],
            &[],
        );
        assert_eq!((code, err), (255, want("dec.edn", 3, 11, 2)));
    }
}

#[test]
fn an_internal_error_in_one_history_spares_the_others() {
    let dir = Scratch::new("panic");
    let valid = "{:index 0 :type :invoke :process 0 :f :txn :value [[:w 1 1]]}\n\
                 {:index 1 :type :ok :process 0 :f :txn :value [[:w 1 1]]}\n\
                 {:index 2 :type :invoke :process 1 :f :txn :value [[:r 1 nil]]}\n\
                 {:index 3 :type :ok :process 1 :f :txn :value [[:r 1 1]]}\n";
    for name in ["h/a.edn", "h/b-boom.edn", "h/c.edn"] {
        dir.file(name, valid);
    }
    let boom = [("ELLERY_INJECT_PANIC", "boom")];
    for jobs in ["1", "2"] {
        let (code, out, err) = run(
            &dir.0,
            &["check", "-j", jobs, "--output", "summary", "h"],
            &boom,
        );
        assert_eq!(code, 4, "{err}");
        assert_eq!(out, "h/a.edn\tvalid\nh/c.edn\tvalid\n");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, "{err}");
        assert!(
            lines[0].starts_with(
                "ellery: h/b-boom.edn: internal error (a bug in ellery; please report it with this history): injected panic (ELLERY_INJECT_PANIC=boom) (at src/cli/check_cmd.rs:"
            ),
            "{err}"
        );
        assert!(
            lines[1].starts_with("ellery: 3 histories in ")
                && lines[1]
                    .ends_with(" s: 2 valid, 0 invalid, 0 unknown, 0 unreadable, 1 internal error"),
            "{err}"
        );
    }
    // Internal errors outrank invalid and unreadable histories.
    dir.file("h/d.edn", "{:index 0");
    let (code, _, _) = run(&dir.0, &["check", "-q", "h"], &boom);
    assert_eq!(code, 4);
    // elle-cli mode: 255, the message names the history.
    let (code, out, err) = run(&dir.0, &["-m", "rw-register", "h/b-boom.edn"], &boom);
    assert_eq!((code, out.as_str()), (255, ""));
    assert!(
        err.starts_with("ellery: h/b-boom.edn: internal error ("),
        "{err}"
    );
    // `diff --check` too.
    let elle = dir.file("elle.edn", "{:valid? true}");
    let (code, _, err) = run(
        &dir.0,
        &["diff", "--check", s(&elle), "h/b-boom.edn"],
        &boom,
    );
    assert_eq!(code, 4, "{err}");
}

/// The `incompatible-order` files under `dir`, relative, sorted.
fn html_files(dir: &Path) -> Vec<String> {
    let mut all = tree(dir);
    all.retain(|f| f.contains("incompatible-order"));
    all
}

/// Every file under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).expect("under root");
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Two reads of one key that disagree on its order: the key's
/// `incompatible-order/<key>.html` file.
fn incompatible(key: &str) -> String {
    format!(
        "{{:index 0 :type :invoke :process 0 :f :txn :value [[:append {key} 1] [:append {key} 2]]}}\n\
         {{:index 1 :type :ok :process 0 :f :txn :value [[:append {key} 1] [:append {key} 2]]}}\n\
         {{:index 2 :type :invoke :process 1 :f :txn :value [[:r {key} nil]]}}\n\
         {{:index 3 :type :ok :process 1 :f :txn :value [[:r {key} [1 2]]]}}\n\
         {{:index 4 :type :invoke :process 2 :f :txn :value [[:r {key} nil]]}}\n\
         {{:index 5 :type :ok :process 2 :f :txn :value [[:r {key} [2 1]]]}}\n"
    )
}

#[test]
fn file_names_from_data_stay_inside_the_output_directory() {
    let dir = Scratch::new("names");
    // Keys that are paths, a separator, a hidden name, and two keys that
    // print alike.
    dir.file("in/evil.edn", &incompatible("\"../../../../x\""));
    let (code, _, err) = run(
        &dir.0,
        &["check", "-q", "-d", "out/one", "in/evil.edn"],
        &[],
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        html_files(&dir.0.join("out")),
        ["one/incompatible-order/%22..%2F..%2F..%2F..%2Fx%22.html"]
    );
    // Nothing written outside `out/`.
    let mut outside = tree(&dir.0);
    outside.retain(|f| !f.starts_with("out/"));
    assert_eq!(outside, ["in/evil.edn"]);
    // Several histories: one subdirectory each, names distinct even where
    // the flattened paths agree (`a-b/c` and `a/b-c`, `h.edn` and `h.json`).
    dir.file("many/a-b/c.edn", &incompatible(":k"));
    dir.file("many/a/b-c.edn", &incompatible(":k"));
    dir.file("many/.hidden.edn", &incompatible("\"/etc/passwd\""));
    dir.file("many/h.edn", &incompatible(":k"));
    let json = "[{\"index\":0,\"type\":\"invoke\",\"process\":0,\"f\":\"txn\",\"value\":[[\"append\",\"k\",1],[\"append\",\"k\",2]]},\
                {\"index\":1,\"type\":\"ok\",\"process\":0,\"f\":\"txn\",\"value\":[[\"append\",\"k\",1],[\"append\",\"k\",2]]},\
                {\"index\":2,\"type\":\"invoke\",\"process\":1,\"f\":\"txn\",\"value\":[[\"r\",\"k\",null]]},\
                {\"index\":3,\"type\":\"ok\",\"process\":1,\"f\":\"txn\",\"value\":[[\"r\",\"k\",[2,1]]]},\
                {\"index\":4,\"type\":\"invoke\",\"process\":2,\"f\":\"txn\",\"value\":[[\"r\",\"k\",null]]},\
                {\"index\":5,\"type\":\"ok\",\"process\":2,\"f\":\"txn\",\"value\":[[\"r\",\"k\",[1,2]]]}]";
    dir.file("many/h.json", json);
    let (code, _, err) = run(
        &dir.0,
        &["check", "-q", "-j", "2", "-d", "out/many", "many"],
        &[],
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        html_files(&dir.0.join("out/many")),
        [
            "many-.hidden/incompatible-order/%22%2Fetc%2Fpasswd%22.html",
            "many-a-b-c-2/incompatible-order/:k.html",
            "many-a-b-c/incompatible-order/:k.html",
            "many-h-2/incompatible-order/%22k%22.html",
            "many-h/incompatible-order/:k.html",
        ]
    );
}

/// JSON has no infinite or NaN numbers: such values print as their EDN
/// spelling in a string, never as `null` (which is nil).
#[test]
fn non_finite_numbers_in_json_output_stay_distinguishable() {
    let v = ellery::edn::parse_one(
        b"[##Inf ##-Inf ##NaN 1/0 -1/0 0/0 nil 1.5 1N 123456789012345678901234567890N]",
    )
    .expect("edn");
    assert_eq!(
        ellery::edn::value_to_json(&v).to_string(),
        r###"["##Inf","##-Inf","##NaN","##Inf","##-Inf","##NaN",null,1.5,1,1.2345678901234568e+29]"###
    );
    assert_eq!(
        ellery::report::json_pprint::pprint_json(&v),
        "[\"##Inf\", \"##-Inf\", \"##NaN\", \"##Inf\", \"##-Inf\", \"##NaN\", null, 1.5, 1,\n 123456789012345678901234567890]\n"
    );
}

#[test]
fn histories_larger_than_the_memory_limit_are_refused_before_reading() {
    let dir = Scratch::new("memory");
    dir.file(
        "h.edn",
        "{:index 0 :type :invoke :process 0 :f :txn :value [[:w 1 1]]}\n",
    );
    let refused = "ellery: h.edn: too large to check: about 65 MB needed (4 × its 1 MB, plus 64 MB), more than the --max-memory limit, 64 MB; --max-memory SIZE sets the limit (none: no limit)\n";
    let (code, out, err) = run(&dir.0, &["check", "--max-memory", "64M", "h.edn"], &[]);
    assert_eq!((code, out.as_str(), err.as_str()), (3, "", refused));
    let (code, _, err) = run(
        &dir.0,
        &["-m", "rw-register", "--max-memory", "64M", "h.edn"],
        &[],
    );
    assert_eq!((code, err.as_str()), (255, refused));
    for ok in ["65M", "none"] {
        let (code, _, err) = run(&dir.0, &["check", "--max-memory", ok, "h.edn"], &[]);
        assert_eq!(code, 2, "{ok}: {err}");
    }
    let (code, _, err) = run(&dir.0, &["check", "--max-memory", "lots", "h.edn"], &[]);
    assert_eq!(code, 3);
    assert!(
        err.starts_with("error: invalid value 'lots' for '--max-memory <SIZE>': --max-memory: expected a size such as 512M, 8G or 1.5G, or none; found \"lots\""),
        "{err}"
    );
}

/// A history given as a pipe (`<(…)`) is read whole: the peer-format
/// detection does not sniff (and so consume) its beginning.
#[test]
fn pipes_are_read_whole() {
    let dir = Scratch::new("pipe");
    dir.file("dec.edn", DECREASING);
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "{} check <(cat dec.edn)",
            env!("CARGO_BIN_EXE_ellery")
        ))
        .current_dir(&dir.0)
        .output()
        .expect("bash runs");
    let err = String::from_utf8(o.stderr).expect("UTF-8");
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.ends_with(":3:1: expected an op with an :index greater than the previous op's (11), found :index 2 (ops must be in :index order, each once)\n"),
        "{err}"
    );
}

/// A big history file truncated by another program while ellery reads it
/// (mapped, on Linux): a clear error and exit 3, never death by a bus
/// error. The truncation comes a few milliseconds into the read of a
/// 100 MB file; should it land before the file is opened, the short file
/// is bad input (its last line cut), also exit 3.
#[test]
fn a_file_that_shrinks_while_it_is_read_is_bad_input_not_a_crash() {
    use std::io::Write;
    let dir = Scratch::new("shrink");
    let path = dir.0.join("big.edn");
    {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
        let mut i = 0u64;
        while i < 2_600_000 {
            for t in ["invoke", "ok"] {
                writeln!(
                    w,
                    "{{:index {i}, :time {i}, :type :{t}, :process {}, :f :txn, :value [[:w {} {i}]]}}",
                    i / 2 % 10,
                    i % 100
                )
                .expect("write");
                i += 1;
            }
        }
    }
    assert!(std::fs::metadata(&path).expect("size").len() > 100 << 20);
    let child = Command::new(env!("CARGO_BIN_EXE_ellery"))
        .args(["check", "big.edn"])
        .current_dir(&dir.0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("ellery runs");
    std::thread::sleep(std::time::Duration::from_millis(30));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|f| f.set_len(1 << 20))
        .expect("truncate");
    let o = child.wait_with_output().expect("ellery ends");
    let err = String::from_utf8_lossy(&o.stderr);
    let code = o.status.code();
    assert!(code.is_some(), "killed by a signal: {:?}, {err}", o.status);
    if code == Some(3) {
        assert!(
            err == "ellery: big.edn: the file shrank while it was read (files must not change during a check); no verdict\n"
                || err.contains("expected"),
            "{err}"
        );
        assert!(o.stdout.is_empty(), "a verdict after a failed read");
    } else {
        // The read was over before the truncation.
        assert_eq!(code, Some(0), "{err}");
    }
}
