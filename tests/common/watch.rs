//! What the `ellery watch` tests share: running the binary, comparing
//! watch's final map with check's, generating inputs, reading round lines.

use super::{s, Scratch};
use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs the ellery binary with `args`, feeding `stdin` (or nothing).
#[allow(dead_code)]
pub fn ellery(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ellery"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ellery");
    let mut input = child.stdin.take().unwrap();
    if let Some(b) = stdin {
        input.write_all(b).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

/// Output bytes as text.
#[allow(dead_code)]
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Watch's final map (its last line) and exit code must be check's, under
/// `models` in rounds of `round` ops; returns watch's stdout and stderr
/// (with `--verbose` round lines when `verbose`).
#[allow(dead_code)]
pub fn watch_same_as_check(
    path: &str,
    models: &str,
    round: &str,
    verbose: bool,
) -> (String, String) {
    let check = ellery(&["check", "-c", models, path], None);
    let mut args = vec!["watch", "-q", "-c", models, "--round", round, path];
    if verbose {
        args.insert(2, "--verbose");
    }
    let watch = ellery(&args, None);
    let out = text(&watch.stdout);
    assert_eq!(
        out.lines().last().unwrap_or(""),
        text(&check.stdout).trim_end(),
        "{path} under {models}: watch's final map differs from check's; stderr: {}",
        text(&watch.stderr)
    );
    assert_eq!(
        watch.status.code(),
        check.status.code(),
        "{path}: exit codes"
    );
    (out, text(&watch.stderr))
}

/// `ellery gen ARGS` written to `name` in `dir`; returns its path.
#[allow(dead_code)]
pub fn gen(dir: &Scratch, name: &str, args: &[&str]) -> String {
    let out = ellery(&[&["gen"][..], args].concat(), None);
    assert!(out.status.success(), "gen {args:?}: {}", text(&out.stderr));
    s(&dir.file(name, &text(&out.stdout))).to_string()
}

/// The `--verbose` round lines' (retained, forgotten) counts.
#[allow(dead_code)]
pub fn retained_counts(stderr: &str) -> Vec<(u64, u64)> {
    stderr
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("ellery: round ")?;
            let w: Vec<&str> = rest.split_whitespace().collect();
            Some((w.get(4)?.parse().ok()?, w.get(6)?.parse().ok()?))
        })
        .collect()
}

/// Processes 0 and 1 write x = 1 then x = 2, then `filler` fenced rounds of
/// other keys (fence key -1), then `reader` reads x = `stale` (`1` is a
/// stale read whose cycle reaches back to the first round).
#[allow(dead_code)]
pub fn fenced_stale_read(filler: usize, reader: u32, stale: &str) -> String {
    let mut h = String::new();
    let mut i = 0;
    let mut fence = 0;
    let mut txn = |h: &mut String, p: u32, v: &str| {
        for ty in ["invoke", "ok"] {
            h.push_str(&format!(
                "{{:index {i}, :time {}, :type :{ty}, :process {p}, :f :txn, :value {v}}}\n",
                i * 10
            ));
            i += 1;
        }
    };
    txn(&mut h, 0, "[[:w 1 1]]");
    txn(&mut h, 1, "[[:r 1 1] [:w 1 2]]");
    for n in 0..filler {
        let k = 100 + n;
        txn(&mut h, 0, &format!("[[:w {k} 1]]"));
        txn(&mut h, 1, &format!("[[:r {k} 1] [:w {k} 2]]"));
        for p in [0, 1] {
            let prev = if fence == 0 {
                "nil".to_string()
            } else {
                fence.to_string()
            };
            fence += 1;
            txn(&mut h, p, &format!("[[:r -1 {prev}] [:w -1 {fence}]]"));
        }
    }
    txn(&mut h, reader, &format!("[[:r 1 {stale}]]"));
    h
}
