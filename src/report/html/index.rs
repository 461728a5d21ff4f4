//! Pages listing several results: the index of a batch run
//! (`ellery check -d DIR` with several histories) and of `ellery diff -d`.

use super::{escape, href, names, page, result_page, verdict_word, INDEX};
use crate::check::outcome::{Outcome, Validity};
use crate::edn::Value;
use std::fmt::Write;
use std::path::Path;

/// One row of an index of several histories.
#[derive(Clone, Debug)]
pub struct Entry {
    /// What the row is called (a history's path).
    pub name: String,
    /// The history's own page, relative to the index (`sub/index.html`),
    /// when one was written.
    pub link: Option<String>,
    /// The verdict, or why there is none (unreadable history, internal
    /// error, …).
    pub verdict: Result<Validity, String>,
    /// The anomaly types found.
    pub anomaly_types: Vec<String>,
}

impl Entry {
    /// The row of history `path` checked into sub-directory `subdir`, whose
    /// page is `subdir/index.html`.
    pub fn checked(path: &Path, subdir: &str, outcome: &Outcome) -> Entry {
        Entry {
            name: path.display().to_string(),
            link: Some(format!("{subdir}/{INDEX}")),
            verdict: Ok(outcome.validity),
            anomaly_types: names(outcome.result.get_kw("anomaly-types")),
        }
    }

    /// The row of history `path` that could not be checked, and why.
    pub fn failed(path: &Path, why: &str) -> Entry {
        Entry {
            name: path.display().to_string(),
            link: None,
            verdict: Err(why.to_string()),
            anomaly_types: Vec::new(),
        }
    }
}

/// A page listing several histories (a batch run, or `ellery diff`): one
/// table row each with its verdict, anomaly types and a link to its page.
/// `pre` is preformatted plain text shown under the table.
pub fn index_page(title: &str, pre: Option<&str>, entries: &[Entry]) -> String {
    let mut s = format!("<h1>{}</h1>", escape(title));
    let mut counts = [0usize; 4];
    for e in entries {
        counts[match e.verdict {
            Ok(Validity::Valid) => 0,
            Ok(Validity::Invalid) => 1,
            Ok(Validity::Unknown) => 2,
            Err(_) => 3,
        }] += 1;
    }
    let _ = write!(
        s,
        "<p id=\"summary\">{} histories: {} valid, {} invalid, {} unknown, {} not checked</p>",
        entries.len(),
        counts[0],
        counts[1],
        counts[2],
        counts[3]
    );
    s.push_str("<table><thead><tr><th>History</th><th>Verdict</th><th>Anomaly types</th></tr></thead><tbody>");
    for e in entries {
        let name = match &e.link {
            Some(l) => format!("<a href=\"{}\">{}</a>", href(l), escape(&e.name)),
            None => escape(&e.name),
        };
        let verdict = match &e.verdict {
            Ok(v) => {
                let w = verdict_word(*v);
                format!("<span class=\"verdict {w}\">{w}</span>")
            }
            Err(why) => format!(
                "<span class=\"verdict error\">not checked</span> <code>{}</code>",
                escape(why)
            ),
        };
        let types: Vec<String> = e
            .anomaly_types
            .iter()
            .map(|t| format!("<code>{}</code>", escape(t)))
            .collect();
        let _ = write!(
            s,
            "<tr><td>{name}</td><td>{verdict}</td><td>{}</td></tr>",
            types.join(" ")
        );
    }
    s.push_str("</tbody></table>");
    if let Some(text) = pre {
        let _ = write!(s, "<pre id=\"comparison\">{}</pre>", escape(text));
    }
    page(title, &s)
}

/// Writes the index of a batch run (`ellery check -d DIR` with several
/// histories, each with its page in a sub-directory) as `dir/index.html`.
pub fn write_batch_index(dir: &Path, entries: &[Entry]) -> std::io::Result<()> {
    let title = format!("ellery: {} histories", entries.len());
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(INDEX), index_page(&title, None, entries))
}

/// The sub-directories of `ellery diff -d DIR`: Elle's result's page, and
/// ellery's (where `ellery diff --check` writes its files).
pub const DIFF_ELLE: &str = "elle";
/// See [`DIFF_ELLE`].
pub const DIFF_ELLERY: &str = "ellery";

/// Writes the pages of `ellery diff -d DIR`: `DIR/elle/index.html` for
/// Elle's result (read from `elle_name`), `DIR/ellery/index.html` for
/// ellery's unless `ours_written` (already written by the check, with its
/// history), and `DIR/index.html` listing both with `comparison` (the
/// text `ellery diff` prints).
pub fn write_diff_report(
    dir: &Path,
    (elle_name, elle): (&str, &Value),
    (ours_name, ours): (&str, &Value),
    ours_written: bool,
    comparison: &str,
) -> std::io::Result<()> {
    let elle = Outcome::from_result(elle.clone());
    let ours = Outcome::from_result(ours.clone());
    let mut entries = Vec::new();
    for (sub, name, o, write) in [
        (DIFF_ELLE, elle_name, &elle, true),
        (DIFF_ELLERY, ours_name, &ours, !ours_written),
    ] {
        let d = dir.join(sub);
        if write {
            std::fs::create_dir_all(&d)?;
            std::fs::write(d.join(INDEX), result_page(&d, name, None, o))?;
        }
        entries.push(Entry {
            name: format!("{sub}: {name}"),
            link: Some(format!("{sub}/{INDEX}")),
            verdict: Ok(o.validity),
            anomaly_types: names(o.result.get_kw("anomaly-types")),
        });
    }
    std::fs::create_dir_all(dir)?;
    std::fs::write(
        dir.join(INDEX),
        index_page("ellery diff", Some(comparison), &entries),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_page_lists_rows_with_verdicts_and_escaped_names() {
        let entries = [
            Entry {
                name: "a/<b>.edn".into(),
                link: Some("a-<b>/index.html".into()),
                verdict: Ok(Validity::Invalid),
                anomaly_types: vec!["G0".into()],
            },
            Entry {
                name: "c.edn".into(),
                link: None,
                verdict: Err("c.edn:1:1: expected a map".into()),
                anomaly_types: vec![],
            },
        ];
        let p = index_page("batch", Some("x < y"), &entries);
        assert!(p.contains("<pre id=\"comparison\">x &lt; y</pre>"));
        assert!(p.contains("2 histories: 0 valid, 1 invalid, 0 unknown, 1 not checked"));
        assert!(p.contains("<a href=\"a-%3Cb%3E/index.html\">a/&lt;b&gt;.edn</a>"));
        assert!(p.contains("<span class=\"verdict invalid\">invalid</span>"));
        assert!(p.contains("<code>c.edn:1:1: expected a map</code>"));
        assert!(!p.contains("<b>"));
    }
}
