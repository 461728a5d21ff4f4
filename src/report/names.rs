//! File names derived from data (a history's keys, its path), made safe to
//! create under `--directory`: never a path separator, never `.` or `..`,
//! never hidden, never too long for a file system, and still distinct for
//! distinct data, the same from run to run.

/// Longest name (in bytes) [`safe_file_name`] returns; file systems allow
/// 255, and callers append an extension.
const MAX_NAME: usize = 200;

/// Whether `b` is kept as it is in a file name: ASCII letters, digits and a
/// few punctuation marks that mean nothing to shells or file systems.
fn plain(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_-+=:,@.".contains(&b)
}

/// `text` as one file name component. Bytes other than ASCII letters,
/// digits and `_-+=:,@.` are written `%XX` (so `/`, `\`, NUL and `%` itself
/// cannot appear raw, and distinct texts give distinct names), as is a
/// leading `.` (no hidden files, no `.` or `..`). A name longer than 200
/// bytes keeps its first 183 bytes, then `~` and 16 hex digits of a hash
/// of the whole (stable across runs and platforms). The empty text is `%`.
pub fn safe_file_name(text: &str) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(text.len());
    for (i, &b) in text.as_bytes().iter().enumerate() {
        if plain(b) && !(i == 0 && b == b'.') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    if out.is_empty() {
        out.push('%');
    }
    if out.len() > MAX_NAME {
        let hash = fnv1a(out.as_bytes());
        out.truncate(MAX_NAME - 17);
        let _ = write!(out, "~{hash:016x}");
    }
    out
}

/// 64-bit FNV-1a: a fixed, dependency-free hash, so names do not change
/// between runs or Rust versions.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Makes `names` pairwise distinct, in order: a name seen before gets
/// `-2`, `-3`, … (the first suffix not yet taken).
pub fn make_unique(names: Vec<String>) -> Vec<String> {
    let mut taken = std::collections::HashSet::new();
    names
        .into_iter()
        .map(|name| {
            let mut candidate = name.clone();
            let mut n = 1;
            while !taken.insert(candidate.clone()) {
                n += 1;
                candidate = format!("{name}-{n}");
            }
            candidate
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_distinct_and_bounded() {
        assert_eq!(safe_file_name("1"), "1");
        assert_eq!(safe_file_name(":x"), ":x");
        assert_eq!(safe_file_name("\"../../x\""), "%22..%2F..%2Fx%22");
        assert_eq!(safe_file_name("../../../../x"), "%2E.%2F..%2F..%2F..%2Fx");
        assert_eq!(safe_file_name(".."), "%2E.");
        assert_eq!(safe_file_name("."), "%2E");
        assert_eq!(safe_file_name(""), "%");
        assert_eq!(safe_file_name("a%2F"), "a%252F");
        assert_eq!(safe_file_name("a\\b\0c"), "a%5Cb%00c");
        assert_eq!(safe_file_name("é"), "%C3%A9");
        let long = "k".repeat(1000);
        let name = safe_file_name(&long);
        assert_eq!(name.len(), 200);
        assert_eq!(
            name,
            format!("{}~{:016x}", "k".repeat(183), fnv1a(long.as_bytes()))
        );
        assert_ne!(name, safe_file_name(&"k".repeat(999)));
        assert_eq!(
            make_unique(vec![
                "a".into(),
                "b".into(),
                "a".into(),
                "a-2".into(),
                "a".into()
            ]),
            ["a", "b", "a-2", "a-2-2", "a-3"]
        );
    }
}
