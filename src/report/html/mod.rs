//! The HTML report written as `index.html` next to Elle's files under
//! `--directory`: the verdict, the `:not`/`:also-not` models on a picture of
//! the model lattice ([`crate::report::lattice`]), each anomaly with its
//! explanation and inline cycle plot, and links to every file written.
//!
//! The page is self-contained (inline CSS and SVG, no scripts, nothing
//! fetched), so it reads the same from a file, from Jepsen's web UI serving
//! the store directory, or from an archive. Everything that comes from a
//! history (keys, values, file names) is HTML-escaped; inlined graphviz SVG
//! is XML that graphviz escaped itself, and is only inlined when it holds no
//! script. Output is deterministic: no times, files listed sorted.

use crate::check::outcome::{Outcome, Validity};
use crate::check::ExplainedCycle;
use crate::edn::{pr_str, Value};
use crate::model::History;
use crate::report::files::explain_cycle;
use crate::report::lattice;
use std::fmt::Write;
use std::path::Path;

mod index;

pub use index::{write_batch_index, write_diff_report, Entry, DIFF_ELLE, DIFF_ELLERY};

/// Cases of one anomaly type shown on the page; the rest are in the files.
const SHOWN_PER_TYPE: usize = 10;
/// Longest EDN text shown for one case or for the whole result map.
const MAX_CASE_CHARS: usize = 4_000;
const MAX_RESULT_CHARS: usize = 200_000;
/// Files of one directory listed on the page; the directory is linked for
/// the rest.
const FILES_PER_DIR: usize = 50;
/// Largest SVG plot inlined; larger ones are linked.
const MAX_INLINE_SVG: usize = 512 * 1024;

/// The page's file name.
pub const INDEX: &str = "index.html";

/// Escapes text for HTML element content and quoted attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A relative path as a URL: each `/`-separated segment percent-encoded
/// (everything but unreserved characters), then HTML-escaped for an `href`.
pub fn href(rel: &str) -> String {
    let mut out = String::new();
    for (i, seg) in rel.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        for b in seg.bytes() {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                out.push(b as char);
            } else {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    escape(&out)
}

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em auto;max-width:70em;padding:0 1em;color:#222}\
h1{font-size:1.4em}h2{font-size:1.2em;border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}\
h3{font-size:1em}code,pre{font-family:monospace;font-size:.9em}\
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;white-space:pre-wrap;word-break:break-word}\
.verdict{display:inline-block;padding:.3em .8em;border-radius:4px;font-weight:bold;font-size:1.1em}\
.valid{background:#d7f0d7;color:#145214}.invalid{background:#f6caca;color:#7a0000}\
.unknown{background:#fbe8b8;color:#6b4a00}.error{background:#e0e0e0;color:#333}\
.lattice-box{overflow-x:auto;border:1px solid #eee;padding:.5em}\
.legend span{display:inline-block;padding:0 .5em;margin-right:.5em;border:1px solid}\
.plot svg{max-width:100%;height:auto}\
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.25em .6em;text-align:left}\
td .verdict{font-size:.9em;padding:.1em .5em}";

pub(crate) fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{}</title><style>{STYLE}</style></head><body>\n{body}</body></html>\n",
        escape(title)
    )
}

pub(crate) fn verdict_word(v: Validity) -> &'static str {
    match v {
        Validity::Valid => "valid",
        Validity::Invalid => "invalid",
        Validity::Unknown => "unknown",
    }
}

/// Names in a result's keyword set or list (`:not`, `:anomaly-types`).
pub(crate) fn names(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Set(xs) | Value::List(xs) | Value::Vector(xs)) => xs
            .iter()
            .map(|x| match x {
                Value::Keyword(k) => k.clone(),
                other => pr_str(other),
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn truncated(s: String, max: usize) -> String {
    if s.len() <= max {
        return s;
    }
    let mut cut = max;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{} … ({} more bytes)", &s[..cut], s.len() - cut)
}

/// The `<svg>` element of a graphviz SVG file, if it is one that is safe to
/// inline (no script or embedded HTML).
fn inline_svg(text: &str) -> Option<&str> {
    let start = text.find("<svg")?;
    let svg = &text[start..];
    let lower = svg.to_ascii_lowercase();
    let unsafe_ = ["<script", "foreignobject", "javascript:"]
        .iter()
        .any(|bad| lower.contains(bad))
        || has_event_handler(&lower);
    (!unsafe_).then_some(svg)
}

/// Whether lower-cased markup `s` has an attribute like ` onload=` inside a
/// tag (graphviz writes none; a history cannot make it write one).
fn has_event_handler(s: &str) -> bool {
    s.match_indices(" on").any(|(i, _)| {
        let rest = &s[i + 3..];
        let name_end = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        name_end > 0 && rest[name_end..].starts_with('=') && is_inside_tag(s, i)
    })
}

/// Whether byte `i` of `s` lies inside a markup tag (after a `<` with no `>`
/// since), as opposed to text content.
fn is_inside_tag(s: &str, i: usize) -> bool {
    let before = &s[..i];
    match (before.rfind('<'), before.rfind('>')) {
        (Some(lt), Some(gt)) => lt > gt,
        (Some(_), None) => true,
        _ => false,
    }
}

/// The plot of cycle `i` of `kind` as page markup: the SVG inlined, a PNG
/// shown by reference, a DOT file linked, or a note when none was written
/// (graphviz is not needed to read the page: an SVG larger than
/// [`MAX_INLINE_SVG`] or one with script-like content is linked instead).
fn plot_markup(dir: &Path, kind: &str, i: usize) -> String {
    let stem = format!("{kind}/{i}");
    let svg = dir.join(format!("{stem}.svg"));
    if let Ok(text) = std::fs::read_to_string(&svg) {
        if text.len() <= MAX_INLINE_SVG {
            if let Some(s) = inline_svg(&text) {
                return format!("<div class=\"plot\">{s}</div>");
            }
        }
        return format!(
            "<p><a href=\"{}\">plot (SVG)</a></p>",
            href(&format!("{stem}.svg"))
        );
    }
    if dir.join(format!("{stem}.png")).is_file() {
        return format!(
            "<div class=\"plot\"><img src=\"{}\" alt=\"{} cycle plot\" style=\"max-width:100%\"></div>",
            href(&format!("{stem}.png")),
            escape(&stem)
        );
    }
    if dir.join(format!("{stem}.dot")).is_file() {
        return format!(
            "<p><a href=\"{}\">plot (DOT source)</a></p>",
            href(&format!("{stem}.dot"))
        );
    }
    // Skipped as larger than --max-plot-bytes (ellery said so on stderr).
    "<p>No plot was written for this cycle.</p>".to_string()
}

/// Every file under `dir` (relative, `/`-separated, sorted), except the
/// page itself.
fn files_under(dir: &Path) -> Vec<(String, u64)> {
    fn walk(root: &Path, d: &Path, out: &mut Vec<(String, u64)>) {
        let Ok(entries) = std::fs::read_dir(d) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let Ok(meta) = e.metadata() else { continue };
            if meta.is_dir() {
                walk(root, &p, out);
            } else if let Ok(rel) = p.strip_prefix(root) {
                let rel: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push((rel.join("/"), meta.len()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.retain(|(f, _)| f != INDEX);
    out.sort_by(|a, b| natural_path_order(&a.0, &b.0));
    out
}

/// Orders paths segment by segment, segments with a leading number by that
/// number first (`G0/2.svg` before `G0/10.svg`), files of a directory
/// before its sub-directories (so each directory's files are contiguous).
fn natural_path_order(a: &str, b: &str) -> std::cmp::Ordering {
    let (da, fa) = a.rsplit_once('/').unwrap_or(("", a));
    let (db, fb) = b.rsplit_once('/').unwrap_or(("", b));
    let num = |s: &str| -> Option<u64> {
        let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    da.cmp(db)
        .then_with(|| num(fa).cmp(&num(fb)))
        .then_with(|| fa.cmp(fb))
}

fn verdict_section(s: &mut String, outcome: &Outcome) {
    let word = verdict_word(outcome.validity);
    let _ = write!(
        s,
        "<p>Verdict: <span class=\"verdict {word}\" id=\"verdict\">{word}</span></p>"
    );
    let types = names(outcome.result.get_kw("anomaly-types"));
    if !types.is_empty() {
        s.push_str("<p>Anomaly types: ");
        let links: Vec<String> = types
            .iter()
            .map(|t| format!("<a href=\"#{}\"><code>{}</code></a>", href(t), escape(t)))
            .collect();
        s.push_str(&links.join(", "));
        s.push_str("</p>");
    }
    if let Some(p) = &outcome.problem {
        let _ = write!(s, "<p>Problem: <code>{}</code></p>", escape(&p.to_string()));
    }
    if let Some(Value::Str(e)) = outcome.result.get_kw("error") {
        let _ = write!(s, "<p>Error: <code>{}</code></p>", escape(e));
    }
}

fn lattice_section(s: &mut String, outcome: &Outcome) {
    let not = names(outcome.result.get_kw("not"));
    let also = names(outcome.result.get_kw("also-not"));
    s.push_str("<h2 id=\"models\">Consistency models</h2>");
    let list = |xs: &[String]| {
        if xs.is_empty() {
            "none".to_string()
        } else {
            xs.iter()
                .map(|x| format!("<code>{}</code>", escape(x)))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let _ = write!(
        s,
        "<p>Ruled out (<code>:not</code>): {}<br>Also ruled out (<code>:also-not</code>): {}</p>",
        list(&not),
        list(&also)
    );
    s.push_str(
        "<p class=\"legend\"><span style=\"background:#f4a6a6;border-color:#b00000\">:not</span>\
<span style=\"background:#fbd7b0;border-color:#c06000\">:also-not</span>\
<span style=\"background:#f4f6fa;border-color:#9aa3b0\">not ruled out</span> \
An arrow points from a model to a weaker one it implies.</p>",
    );
    let _ = write!(
        s,
        "<div class=\"lattice-box\">{}</div>",
        lattice::svg(&lattice::marks(&not, &also))
    );
}

fn anomalies_section(s: &mut String, dir: &Path, h: Option<&History>, outcome: &Outcome) {
    let Some(Value::Map(anomalies)) = outcome.result.get_kw("anomalies") else {
        return;
    };
    s.push_str("<h2 id=\"anomalies\">Anomalies</h2>");
    for (k, cases) in anomalies {
        let kind = match k {
            Value::Keyword(k) => k.clone(),
            other => pr_str(other),
        };
        // Explained cycles need the history; a bare result map has none.
        let cycles: Vec<(&History, &ExplainedCycle)> = h
            .map(|h| {
                outcome
                    .cycles
                    .iter()
                    .filter(|c| c.kind == kind)
                    .map(|c| (h, c))
                    .collect()
            })
            .unwrap_or_default();
        let n = match cases {
            Value::Vector(xs) | Value::List(xs) | Value::Set(xs) => xs.len(),
            _ => 1,
        };
        let _ = write!(
            s,
            "<h3 id=\"{}\"><code>{}</code> ({n} case{})</h3>",
            href(&kind),
            escape(&kind),
            if n == 1 { "" } else { "s" }
        );
        if !cycles.is_empty() {
            for (i, (h, c)) in cycles.iter().take(SHOWN_PER_TYPE).enumerate() {
                let _ = write!(
                    s,
                    "<h4>{} #{i}</h4><pre>{}</pre>{}",
                    escape(&kind),
                    escape(&explain_cycle(h, c)),
                    plot_markup(dir, &kind, i)
                );
            }
            if cycles.len() > SHOWN_PER_TYPE {
                let _ = write!(
                    s,
                    "<p>{} more in <a href=\"{}\">{}</a>.</p>",
                    cycles.len() - SHOWN_PER_TYPE,
                    href(&format!("{kind}.txt")),
                    escape(&format!("{kind}.txt"))
                );
            }
            continue;
        }
        let items: Vec<&Value> = match cases {
            Value::Vector(xs) | Value::List(xs) | Value::Set(xs) => xs.iter().collect(),
            other => vec![other],
        };
        for case in items.iter().take(SHOWN_PER_TYPE) {
            let _ = write!(
                s,
                "<pre>{}</pre>",
                escape(&truncated(pr_str(case), MAX_CASE_CHARS))
            );
        }
        if items.len() > SHOWN_PER_TYPE {
            let _ = write!(
                s,
                "<p>{} more in the result map below.</p>",
                items.len() - SHOWN_PER_TYPE
            );
        }
    }
}

fn files_section(s: &mut String, dir: &Path) {
    let files = files_under(dir);
    s.push_str("<h2 id=\"files\">Files</h2>");
    if files.is_empty() {
        s.push_str("<p>No other files were written.</p>");
        return;
    }
    s.push_str("<ul>");
    // A history with thousands of cycles has thousands of plots: list the
    // first few of each directory and link the directory for the rest.
    let mut i = 0;
    while i < files.len() {
        let parent = |f: &str| f.rsplit_once('/').map(|(d, _)| d.to_string());
        let here = parent(&files[i].0);
        let n = files[i..]
            .iter()
            .take_while(|(f, _)| parent(f) == here)
            .count();
        for (f, len) in &files[i..i + n.min(FILES_PER_DIR)] {
            let _ = write!(
                s,
                "<li><a href=\"{}\">{}</a> ({len} bytes)</li>",
                href(f),
                escape(f)
            );
        }
        if let (true, Some(d)) = (n > FILES_PER_DIR, &here) {
            let _ = write!(
                s,
                "<li>… and {} more in <a href=\"{}/\">{}/</a></li>",
                n - FILES_PER_DIR,
                href(d),
                escape(d)
            );
        }
        i += n;
    }
    s.push_str("</ul>");
}

/// The report page of one checked history whose files are in `dir` (plots
/// are read from there to be inlined; every file there is linked).
pub fn history_page(dir: &Path, h: &History, outcome: &Outcome) -> String {
    result_page(dir, &h.origin, Some(h), outcome)
}

/// The report page of a result named `name`: with its history, cycles are
/// explained as in Elle's files; without (a result map read from a file),
/// every case is shown as EDN.
pub(crate) fn result_page(
    dir: &Path,
    name: &str,
    h: Option<&History>,
    outcome: &Outcome,
) -> String {
    let mut s = String::new();
    let _ = write!(s, "<h1>ellery: <code>{}</code></h1>", escape(name));
    verdict_section(&mut s, outcome);
    // A linearizability result (Knossos's map, with its :analyzer) is not
    // about Elle's models; its map is the explanation, so it is shown open.
    let knossos = outcome.result.get_kw("analyzer").is_some();
    if !knossos {
        lattice_section(&mut s, outcome);
    }
    anomalies_section(&mut s, dir, h, outcome);
    files_section(&mut s, dir);
    let _ = write!(
        s,
        "<h2 id=\"result\">Result map</h2><details{}><summary>EDN, as <code>ellery check --output edn</code> prints it</summary><pre>{}</pre></details>",
        if knossos { " open" } else { "" },
        escape(&truncated(pr_str(&outcome.result), MAX_RESULT_CHARS))
    );
    page(&format!("ellery: {name}"), &s)
}

/// Writes [`history_page`] as `dir/index.html` (creating `dir`). Called
/// after Elle's files are written, so it can inline and link them.
pub fn write_index(dir: &Path, h: &History, outcome: &Outcome) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(INDEX), history_page(dir, h, outcome))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn hrefs_percent_encode_each_segment() {
        assert_eq!(href("G0/0.svg"), "G0/0.svg");
        assert_eq!(href("a b/<x>&\"y\".html"), "a%20b/%3Cx%3E%26%22y%22.html");
        assert_eq!(href("ünï"), "%C3%BCn%C3%AF");
    }

    #[test]
    fn only_script_free_svg_is_inlined() {
        let ok = "<?xml version=\"1.0\"?>\n<!DOCTYPE svg>\n<svg width=\"1pt\"><text>on=1 &lt;script&gt;</text></svg>";
        assert_eq!(
            inline_svg(ok),
            Some("<svg width=\"1pt\"><text>on=1 &lt;script&gt;</text></svg>")
        );
        for bad in [
            "<svg><script>alert(1)</script></svg>",
            "<svg onload=\"x()\"></svg>",
            "<svg><a href=\"javascript:x()\"/></svg>",
            "<svg><foreignObject><div/></foreignObject></svg>",
            "no svg here",
        ] {
            assert_eq!(inline_svg(bad), None, "{bad}");
        }
    }

    #[test]
    fn files_sort_by_directory_then_number() {
        let mut v = vec![
            "sccs/10.svg",
            "G0.txt",
            "sccs/2.svg",
            "G0/1.svg",
            "a.txt",
            "sccs/1.dot",
        ];
        v.sort_by(|a, b| natural_path_order(a, b));
        assert_eq!(
            v,
            [
                "G0.txt",
                "a.txt",
                "G0/1.svg",
                "sccs/1.dot",
                "sccs/2.svg",
                "sccs/10.svg"
            ]
        );
    }

    #[test]
    fn long_directories_are_listed_in_part_and_linked() {
        let dir = std::env::temp_dir().join(format!("ellery-html-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sccs")).expect("mkdir");
        for i in 0..FILES_PER_DIR + 3 {
            std::fs::write(dir.join(format!("sccs/{i}.dot")), "x").expect("write");
        }
        std::fs::write(dir.join("G0.txt"), "ab").expect("write");
        std::fs::write(dir.join(INDEX), "old page").expect("write");
        let mut s = String::new();
        files_section(&mut s, &dir);
        let _ = std::fs::remove_dir_all(&dir);
        assert!(s.starts_with(
            "<h2 id=\"files\">Files</h2><ul><li><a href=\"G0.txt\">G0.txt</a> (2 bytes)</li>\
<li><a href=\"sccs/0.dot\">sccs/0.dot</a> (1 bytes)</li><li><a href=\"sccs/1.dot\">"
        ));
        assert!(s.ends_with(&format!(
            "<li><a href=\"sccs/{}.dot\">sccs/{0}.dot</a> (1 bytes)</li>\
<li>… and 3 more in <a href=\"sccs/\">sccs/</a></li></ul>",
            FILES_PER_DIR - 1
        )));
        assert!(!s.contains(INDEX), "the page does not list itself");
    }

    #[test]
    fn long_text_is_cut_on_a_character_boundary() {
        assert_eq!(truncated("ééé".into(), 3), "é … (4 more bytes)");
        assert_eq!(truncated("abc".into(), 3), "abc");
    }
}
