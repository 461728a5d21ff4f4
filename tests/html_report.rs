//! The HTML report (`index.html`) written under `--directory`: its content
//! for invalid and valid histories, escaping of everything from a history,
//! the index pages of batch runs and `ellery diff -d`, determinism, and (when
//! Chromium is installed; required under CI) a real render and screenshot by
//! `scripts/report-screenshot.sh`.

mod common;

use common::{corpus_dir, s, Scratch};
use std::path::Path;
use std::process::Command;

fn ellery(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ellery"))
        .args(args)
        .output()
        .expect("ellery runs")
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn have_dot() -> bool {
    Command::new("dot").arg("-V").output().is_ok()
}

/// Every `href="…"`/`src="…"` target in a page.
fn links(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["href=\"", "src=\""] {
        for (i, _) in page.match_indices(attr) {
            let rest = &page[i + attr.len()..];
            out.push(rest[..rest.find('"').expect("closing quote")].to_string());
        }
    }
    out
}

/// Nothing the page would fetch from the network, and no script.
fn assert_self_contained(page: &str) {
    assert!(!page.to_ascii_lowercase().contains("<script"), "no script");
    assert!(!page.contains("<link"), "no external stylesheet");
    for l in links(page) {
        assert!(
            !l.contains(':') || l.starts_with('#'),
            "relative link only: {l}"
        );
    }
    assert!(!page.contains("url(http"), "no remote CSS resource");
}

/// Every relative link in `dir/index.html` names a file that exists.
fn assert_links_resolve(dir: &Path, page: &str) {
    for l in links(page) {
        if l.starts_with('#') {
            continue;
        }
        let decoded = l.replace("%20", " ");
        assert!(
            dir.join(&decoded).is_file(),
            "{l} exists under {}",
            dir.display()
        );
    }
}

const G05: &str = "g05-list-append-snapshot-isolation-501.edn";

#[test]
fn an_invalid_history_gets_verdict_lattice_explanations_plots_and_links() {
    let Some(hist) = corpus_dir("elle-golden/histories") else {
        return;
    };
    let out = Scratch::new("g05");
    let dir = out.0.join("elle");
    let o = ellery(&["check", "-d", s(&dir), s(&hist.join(G05))]);
    assert_eq!(o.status.code(), Some(1));
    let page = read(&dir.join("index.html"));
    assert!(page.starts_with("<!DOCTYPE html>\n"));
    assert!(page.contains("<span class=\"verdict invalid\" id=\"verdict\">invalid</span>"));
    assert!(page.contains("<a href=\"#G2-item\"><code>G2-item</code></a>"));
    // :not #{:repeatable-read}, :also-not #{:serializable
    // :strong-serializable :strong-session-serializable}
    assert_eq!(page.matches("class=\"model not\"").count(), 1);
    assert!(page.contains("<title>repeatable-read (violated: :not)</title>"));
    assert_eq!(page.matches("class=\"model also-not\"").count(), 3);
    for m in [
        "serializable",
        "strong-serializable",
        "strong-session-serializable",
    ] {
        assert!(
            page.contains(&format!("<title>{m} (violated: :also-not)</title>")),
            "{m}"
        );
    }
    // The explanation, exactly as in Elle's G2-item.txt, HTML-escaped.
    let txt = read(&dir.join("G2-item.txt"));
    let explanation = txt.split_once('\n').expect("header line").1;
    assert!(explanation.contains("a contradiction!"));
    let escaped = explanation
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;");
    assert!(page.contains(&format!("<h4>G2-item #0</h4><pre>{escaped}</pre>")));
    if have_dot() {
        let svg = read(&dir.join("G2-item/0.svg"));
        let element = &svg[svg.find("<svg").expect("svg element")..];
        assert!(
            page.contains(&format!("<div class=\"plot\">{element}</div>")),
            "cycle plot inlined"
        );
    }
    for f in ["G2-item.txt", "sccs/0.", "G2-item/0."] {
        assert!(page.contains(&format!("<li><a href=\"{f}")), "links {f}");
    }
    assert!(!page.contains("href=\"index.html\""), "no link to itself");
    assert_self_contained(&page);
    assert_links_resolve(&dir, &page);
}

#[test]
fn plots_without_svg_are_linked_or_noted() {
    let Some(hist) = corpus_dir("elle-golden/histories") else {
        return;
    };
    let out = Scratch::new("plots");
    let g05 = hist.join(G05);
    for (flags, want) in [
        (
            ["-p", "dot"],
            "<p><a href=\"G2-item/0.dot\">plot (DOT source)</a></p>",
        ),
        (["-b", "10"], "<p>No plot was written for this cycle.</p>"),
    ] {
        let dir = out.0.join(flags[0]);
        let mut args = vec!["check", "-d", s(&dir)];
        args.extend(flags);
        args.push(s(&g05));
        assert_eq!(ellery(&args).status.code(), Some(1));
        let page = read(&dir.join("index.html"));
        assert!(page.contains(want), "{flags:?}");
        assert!(
            !page.contains("<div class=\"plot\">"),
            "{flags:?}: nothing inlined"
        );
        assert_links_resolve(&dir, &page);
    }
}

#[test]
fn a_valid_history_gets_a_page_too() {
    let Some(hist) = corpus_dir("elle-golden/histories") else {
        return;
    };
    let out = Scratch::new("g01");
    let dir = out.0.join("d");
    let o = ellery(&[
        "check",
        "-d",
        s(&dir),
        s(&hist.join("g01-list-append-strict-serializable-501.edn")),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let page = read(&dir.join("index.html"));
    assert!(page.contains("<span class=\"verdict valid\" id=\"verdict\">valid</span>"));
    assert!(page.contains("Ruled out (<code>:not</code>): none<br>"));
    assert!(!page.contains("class=\"model not\""));
    assert!(!page.contains("id=\"anomalies\""));
    assert!(page.contains("<p>No other files were written.</p>"));
    assert_self_contained(&page);
}

#[test]
fn a_linearizability_result_shows_its_map_without_the_lattice() {
    let Some(knossos) = corpus_dir("knossos/cas-register/bad") else {
        return;
    };
    let out = Scratch::new("cas");
    let dir = out.0.join("d");
    let o = ellery(&["check", "-d", s(&dir), s(&knossos.join("rethink-fail.edn"))]);
    assert_eq!(o.status.code(), Some(1));
    let page = read(&dir.join("index.html"));
    assert!(page.contains("<span class=\"verdict invalid\" id=\"verdict\">invalid</span>"));
    assert!(!page.contains("id=\"models\""), "no model lattice");
    assert!(page.contains("<details open><summary>"));
    assert!(page.contains(":analyzer :wgl"));
}

/// A G1c cycle between two transactions whose keys and values are markup.
const HOSTILE: &str = r#"{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append "<b>x</b>" "<i>1</i>"] [:r "y&'\"" nil]]}
{:index 1, :type :invoke, :process 1, :f :txn, :value [[:append "y&'\"" "</pre><script>alert(1)</script>"] [:r "<b>x</b>" nil]]}
{:index 2, :type :ok, :process 0, :f :txn, :value [[:append "<b>x</b>" "<i>1</i>"] [:r "y&'\"" ["</pre><script>alert(1)</script>"]]]}
{:index 3, :type :ok, :process 1, :f :txn, :value [[:append "y&'\"" "</pre><script>alert(1)</script>"] [:r "<b>x</b>" ["<i>1</i>"]]]}
"#;

#[test]
fn everything_from_the_history_is_escaped() {
    let out = Scratch::new("hostile");
    let h = out.file("<b>h</b>.edn", HOSTILE);
    let dir = out.0.join("d");
    let o = ellery(&["check", "-c", "serializable", "-d", s(&dir), s(&h)]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let page = read(&dir.join("index.html"));
    assert!(page.contains("<a href=\"#G1c\"><code>G1c</code></a>"));
    for raw in ["<b>", "<i>", "</pre><script", "'\""] {
        assert!(!page.contains(raw), "{raw} escaped");
    }
    assert!(page.contains("&lt;b&gt;x&lt;/b&gt;"), "keys shown escaped");
    assert!(page.contains("&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.contains("<title>ellery: "), "title");
    assert!(
        page.contains("&lt;b&gt;h&lt;/b&gt;.edn</title>"),
        "path escaped"
    );
    assert_self_contained(&page);
}

#[test]
fn batch_runs_get_an_index_of_every_history() {
    let Some(hist) = corpus_dir("elle-golden/histories") else {
        return;
    };
    let out = Scratch::new("batch");
    let input = out.0.join("in");
    std::fs::create_dir_all(&input).expect("mkdir");
    for f in [G05, "g01-list-append-strict-serializable-501.edn"] {
        std::fs::copy(hist.join(f), input.join(f)).expect("copy");
    }
    out.file("in/z-bad.edn", "{:index 0 :type\n");
    let mut pages = Vec::new();
    for jobs in ["1", "2"] {
        let dir = out.0.join(format!("d{jobs}"));
        let o = ellery(&["check", "-q", "-j", jobs, "-d", s(&dir), s(&input)]);
        assert_eq!(o.status.code(), Some(3), "one history is unreadable");
        let index = read(&dir.join("index.html"));
        assert!(index.contains(
            "<p id=\"summary\">3 histories: 1 valid, 1 invalid, 0 unknown, 1 not checked</p>"
        ));
        let rows: Vec<&str> = index.split("<tr><td>").skip(1).collect();
        assert_eq!(rows.len(), 3);
        assert!(rows[0].contains("g01-list-append") && rows[0].contains("verdict valid"));
        assert!(rows[1].contains("g05-list-append") && rows[1].contains("<code>G2-item</code>"));
        assert!(rows[2].contains("z-bad.edn") && rows[2].contains("not checked"));
        assert!(
            !rows[2].contains("<a href"),
            "no page for an unreadable history"
        );
        assert_self_contained(&index);
        assert_links_resolve(&dir, &index);
        let sub = links(&index)[1].trim_end_matches("/index.html").to_string();
        pages.push((index, read(&dir.join(&sub).join("index.html"))));
    }
    // Byte-identical whatever -j (the pages name input paths, not outputs).
    assert_eq!(pages[0], pages[1]);
}

#[test]
fn diff_with_a_directory_writes_both_results_and_the_comparison() {
    let Some(golden) = corpus_dir("elle-golden") else {
        return;
    };
    let out = Scratch::new("diff");
    let dir = out.0.join("d");
    let elle = golden.join("results/g05-list-append-snapshot-isolation-501.strict.edn");
    let o = ellery(&[
        "diff",
        "--check",
        "-d",
        s(&dir),
        s(&elle),
        s(&golden.join("histories").join(G05)),
    ]);
    assert_eq!(o.status.code(), Some(0), "agree");
    let index = read(&dir.join("index.html"));
    assert!(index.contains("<h1>ellery diff</h1>"));
    assert!(index.contains("2 histories: 0 valid, 2 invalid"));
    assert!(index.contains("<a href=\"elle/index.html\">elle: "));
    assert!(index.contains("<a href=\"ellery/index.html\">ellery: "));
    assert!(index
        .contains("<pre id=\"comparison\">verdict        same       elle false, ellery false\n"));
    assert_links_resolve(&dir, &index);
    // Elle's page: its result map's cases as EDN; ellery's: explanations.
    let elle_page = read(&dir.join("elle/index.html"));
    assert!(elle_page.contains("<title>repeatable-read (violated: :not)</title>"));
    assert!(elle_page.contains("<pre>{:cycle [{:index 10"));
    let ours = read(&dir.join("ellery/index.html"));
    assert!(ours.contains("<h4>G2-item #0</h4><pre>Let:\n"));
    assert!(dir.join("ellery/G2-item.txt").is_file());
}

#[test]
fn diff_of_two_result_files_writes_both_pages() {
    let Some(golden) = corpus_dir("elle-golden/results") else {
        return;
    };
    let out = Scratch::new("diff2");
    let dir = out.0.join("d");
    let elle = golden.join("g05-list-append-snapshot-isolation-501.strict.edn");
    let ours = golden.join("g01-list-append-strict-serializable-501.strict.edn");
    let o = ellery(&["diff", "-d", s(&dir), s(&elle), s(&ours)]);
    assert_eq!(o.status.code(), Some(1), "verdicts differ");
    let index = read(&dir.join("index.html"));
    assert!(index.contains("2 histories: 1 valid, 1 invalid"));
    assert!(index
        .contains("<pre id=\"comparison\">verdict        DIFFERENT  elle false, ellery true\n"));
    assert_links_resolve(&dir, &index);
    let ours_page = read(&dir.join("ellery/index.html"));
    assert!(ours_page.contains("<span class=\"verdict valid\" id=\"verdict\">valid</span>"));
    assert!(ours_page.contains("<p>No other files were written.</p>"));
}

/// Chromium's executable, if installed (required under CI, which installs
/// it in `.ci/run`).
fn chromium() -> Option<&'static str> {
    for b in ["chromium", "chromium-browser", "google-chrome"] {
        if Command::new(b)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return Some(b);
        }
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("chromium not installed (required under CI: apt-get install chromium)");
    }
    eprintln!("skipping the browser check: chromium not installed");
    None
}

#[test]
fn chromium_renders_the_report_and_takes_a_screenshot() {
    let Some(hist) = corpus_dir("elle-golden/histories") else {
        return;
    };
    if chromium().is_none() {
        return;
    }
    let out = Scratch::new("chromium");
    let dir = out.0.join("d");
    let o = ellery(&["check", "-d", s(&dir), s(&hist.join(G05))]);
    assert_eq!(o.status.code(), Some(1));
    let png = out.0.join("shot.png");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/report-screenshot.sh");
    let r = Command::new(script)
        .args([s(&dir.join("index.html")), s(&png), "1000", "1200"])
        .output()
        .expect("run the script");
    assert!(
        r.status.success(),
        "{}{}",
        String::from_utf8_lossy(&r.stdout),
        String::from_utf8_lossy(&r.stderr)
    );
    let bytes = std::fs::read(&png).expect("screenshot written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    // Width and height from the IHDR chunk: the requested window.
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    assert_eq!((be(&bytes[16..20]), be(&bytes[20..24])), (1000, 1200));
    assert!(
        bytes.len() > 20_000,
        "not a blank page: {} bytes",
        bytes.len()
    );
    // The DOM Chromium built holds what the page says: it parsed it whole.
    let dom = read(&out.0.join("shot.png.dom.html"));
    assert!(dom.contains("id=\"verdict\">invalid</span>"));
    assert!(dom.contains("class=\"model not\""));
    assert!(dom.contains("<h4>G2-item #0</h4>"));
    assert!(dom.contains("id=\"files\""), "parsed to the end");
}
