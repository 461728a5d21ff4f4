//! Checking many histories at once: finding them in Jepsen stores and
//! directories, running them in parallel with results in input order (the
//! progress display is the CLI's: `cli::progress`).
//!
//! Jepsen's binary `test.jepsen` store file is not read: it is a custom
//! block container holding Fressian-encoded data written with Jepsen's own
//! Fressian handlers (records, Bifurcan collections, histories as chunked
//! "BigVectors"); there is no maintained Rust Fressian crate, and a reader
//! faithful to those handlers is a project of its own. Every Jepsen store
//! also has `history.edn`, which is what ellery reads.

use crate::model::Format;
use crate::read::peers::detect;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// Expands the command line's inputs into history files, in a stable order.
///
/// A file is taken as it is. A directory is walked (without following
/// symbolic links, so Jepsen's `latest`/`current` links add nothing): a
/// directory holding `history.edn` is a Jepsen test run and contributes
/// exactly that file; elsewhere every `*.edn` and `*.json` file is taken,
/// except Jepsen's `results.edn`. Peer-format histories are found too (see
/// [`crate::read::peers::detect`]): a directory of Cobra `T<N>.log` files
/// (taken whole), a dbcop `history.bincode`, a text-format `*.txt`.
pub fn discover(inputs: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    Ok(discover_histories(inputs)?.0)
}

/// [`discover`], also returning the files a directory walk passed over
/// because they are not histories: `*.expected.edn` files and result maps
/// (a file whose first form is a map with a `:valid?` key, such as Elle's or
/// Jepsen's results), which test and store directories hold next to their
/// histories. Files named on the command line are always taken.
pub fn discover_histories(inputs: &[PathBuf]) -> std::io::Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for input in inputs {
        let cobra = || crate::read::peers::detect(input) == Some(Format::Cobra);
        if input.as_os_str() == "-" || !input.is_dir() || cobra() {
            out.push(input.clone());
        } else {
            let mut found = Vec::new();
            walk(input, &mut found)?;
            for f in found {
                if is_result_file(&f) {
                    skipped.push(f);
                } else {
                    out.push(f);
                }
            }
        }
    }
    Ok((out, skipped))
}

/// Whether a file found by a walk holds a result rather than a history:
/// its name ends in `.expected.edn`, or its first form is a map with a
/// `:valid?` (JSON: `"valid?"`) key. Op maps never have one.
pub fn is_result_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.ends_with(".expected.edn") {
        return true;
    }
    if !(name.ends_with(".edn") || name.ends_with(".json")) {
        return false;
    }
    // Only the first form matters; results are small, and a history's
    // first op map is short, so a bounded prefix is read.
    let mut buf = vec![0u8; 1 << 16];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut buf))
        .unwrap_or(0);
    let head = &buf[..n];
    let start = crate::edn::parse::skip_trivia(head, 0);
    if head.get(start) != Some(&b'{') {
        return false;
    }
    // Keys at depth 1 of the first map: look for `:valid?` / `"valid?"`
    // outside strings and nested forms.
    let mut depth = 0usize;
    let mut i = start;
    while i < head.len() {
        match head[i] {
            b'"' => {
                let j = crate::edn::parse::skip_string(head, i).unwrap_or(head.len());
                if depth == 1 && &head[i..j.min(head.len())] == b"\"valid?\"" {
                    return true;
                }
                i = j;
                continue;
            }
            b'{' | b'[' | b'(' => depth += 1,
            b'}' | b']' | b')' => {
                depth -= 1;
                if depth == 0 {
                    return false;
                }
            }
            b':' if depth == 1 && head[i..].starts_with(b":valid?") => {
                let after = head.get(i + 7).copied().unwrap_or(b' ');
                if after.is_ascii_whitespace() || after == b',' {
                    return true;
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// The error `e` with the path it happened at, which io errors lack.
fn at(path: &Path) -> impl FnOnce(std::io::Error) -> std::io::Error + '_ {
    move |e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(at(dir))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(at(dir))?
        .into_iter()
        .map(|e| e.path())
        .collect();
    entries.sort();
    let history = dir.join("history.edn");
    let is_run = history.is_file();
    if is_run {
        out.push(history);
    }
    for path in entries {
        let meta = std::fs::symlink_metadata(&path).map_err(at(&path))?;
        if meta.file_type().is_symlink() {
            continue;
        }
        if meta.is_dir() {
            if detect(&path) == Some(Format::Cobra) {
                out.push(path);
            } else {
                walk(&path, out)?;
            }
        } else if !is_run {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let wanted = name.ends_with(".edn") || name.ends_with(".json");
            let peer = name == "history.bincode"
                || (name.ends_with(".txt") && detect(&path) == Some(Format::Text));
            if (wanted && name != "results.edn") || peer {
                out.push(path);
            }
        }
    }
    Ok(())
}

/// Runs `work` on every item with up to `jobs` threads, and hands each
/// result to `emit` in the items' order, as soon as every earlier one is
/// done (so output is deterministic and still streams).
pub fn run_ordered<T, R, W, E>(items: &[T], jobs: usize, work: W, mut emit: E)
where
    T: Sync,
    R: Send,
    W: Fn(&T) -> R + Sync,
    E: FnMut(usize, R),
{
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, R)>();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            let tx = tx.clone();
            let (next, work) = (&next, &work);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= items.len() {
                    break;
                }
                if tx.send((i, work(&items[i]))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut pending: std::collections::BTreeMap<usize, R> = Default::default();
        let mut want = 0;
        for (i, r) in rx {
            pending.insert(i, r);
            while let Some(r) = pending.remove(&want) {
                emit(want, r);
                want += 1;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_out_in_input_order() {
        let items: Vec<u64> = (0..50).collect();
        let mut seen = Vec::new();
        run_ordered(
            &items,
            4,
            |&x| {
                std::thread::sleep(std::time::Duration::from_micros((50 - x) * 20));
                x * 2
            },
            |i, r| seen.push((i, r)),
        );
        let want: Vec<(usize, u64)> = (0..50).map(|i| (i as usize, i * 2)).collect();
        assert_eq!(seen, want);
    }

    #[test]
    fn walk_errors_name_the_directory() {
        // (Running as root, an unreadable directory cannot be made; a
        // vanished one fails the same way.)
        let gone = std::env::temp_dir().join(format!("ellery-gone-{}", std::process::id()));
        let e = walk(&gone, &mut Vec::new()).expect_err("no such directory");
        assert_eq!(
            e.to_string(),
            format!("{}: No such file or directory (os error 2)", gone.display())
        );
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    }

    #[test]
    fn discovers_jepsen_store_layouts() {
        let root = std::env::temp_dir().join(format!("ellery-discover-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let run = root.join("store/append/20240101T000000.000Z");
        std::fs::create_dir_all(&run).expect("mkdir");
        for f in ["history.edn", "results.edn", "test.jepsen"] {
            std::fs::write(run.join(f), "").expect("write");
        }
        let loose = root.join("loose");
        std::fs::create_dir_all(&loose).expect("mkdir");
        for f in ["b.json", "a.edn", "notes.txt", "results.edn"] {
            std::fs::write(loose.join(f), "").expect("write");
        }
        std::fs::write(loose.join("ops.txt"), "\nr(1,0,1,1)\n").expect("write");
        let cobra = root.join("peers/cobra-run");
        let dbcop = root.join("peers/hist-00000");
        std::fs::create_dir_all(&cobra).expect("mkdir");
        std::fs::create_dir_all(&dbcop).expect("mkdir");
        for f in ["T0.log", "T1.log", "T0.debug"] {
            std::fs::write(cobra.join(f), "").expect("write");
        }
        std::fs::write(dbcop.join("history.bincode"), "").expect("write");
        #[cfg(unix)]
        std::os::unix::fs::symlink(&run, root.join("store/append/latest")).expect("symlink");
        let found = discover(std::slice::from_ref(&root)).expect("walk");
        assert_eq!(
            found,
            vec![
                loose.join("a.edn"),
                loose.join("b.json"),
                loose.join("ops.txt"),
                cobra.clone(),
                dbcop.join("history.bincode"),
                run.join("history.edn")
            ]
        );
        // A Cobra directory given directly is one history.
        assert_eq!(
            discover(std::slice::from_ref(&cobra)).expect("walk"),
            vec![cobra.clone()]
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
