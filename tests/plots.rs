//! Plots under `--directory`: Elle's DOT layout (record nodes of micro-ops,
//! labelled, coloured edges between mop ports), rendered by graphviz when
//! it is installed (required under CI).

mod common;

use common::corpus_dir;
use std::path::Path;
use std::process::Command;

fn ellery(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ellery"))
        .args(args)
        .output()
        .expect("ellery runs")
}

/// A scratch output directory, removed when dropped.
struct OutDir(std::path::PathBuf);

impl OutDir {
    fn new(tag: &str) -> OutDir {
        let dir = std::env::temp_dir().join(format!("ellery-plots-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        OutDir(dir)
    }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `ellery check <args> -d <fresh dir> <history>`: the run and the directory.
fn check_into_dir(tag: &str, args: &[&str], history: &Path) -> (std::process::Output, OutDir) {
    let out = OutDir::new(tag);
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    all.extend(["-d", out.0.to_str().expect("utf-8")]);
    all.push(history.to_str().expect("utf-8"));
    (ellery(&all), out)
}

fn have_dot() -> bool {
    Command::new("dot").arg("-V").output().is_ok()
}

#[test]
fn dot_plots_follow_elles_layout() {
    let Some(dir) = corpus_dir("elle-golden/histories") else {
        return;
    };
    let (o, out) = check_into_dir(
        "dot",
        &["-p", "dot"],
        &dir.join("g05-list-append-snapshot-isolation-501.edn"),
    );
    let out = &out.0;
    assert_eq!(o.status.code(), Some(1));
    let scc = std::fs::read_to_string(out.join("sccs/0.dot")).expect("scc plot");
    assert_eq!(
        scc,
        "digraph a_graph {\n\
T10 [height=0.4,shape=record,label=\"<f0> r 2 [1]|<f1> a 0 2|<f2> r 1 []\",color=\"#0058AD\",fontcolor=\"#0058AD\"]\n\
T13 [height=0.4,shape=record,label=\"<f0> r 1 []|<f1> a 2 2|<f2> r 0 [1]\",color=\"#0058AD\",fontcolor=\"#0058AD\"]\n\
T10:f0 -> T13:f1 [label=\"rw\",fontcolor=\"#5B00C0\",color=\"#5B00C0\"]\n\
T13:f2 -> T10:f1 [label=\"rw\",fontcolor=\"#5B00C0\",color=\"#5B00C0\"]\n}"
    );
    // The cycle plot names its transactions as G2-item.txt does (T1, T2 in
    // cycle order; issue 20), the SCC plot by op index as Elle does.
    let cycle = std::fs::read_to_string(out.join("G2-item/0.dot")).expect("cycle plot");
    let text = std::fs::read_to_string(out.join("G2-item.txt")).expect("explanation");
    let t1_index: &str = if text.contains("T1 = {:index 10,") {
        "10"
    } else {
        "13"
    };
    let (t1, t2) = if t1_index == "10" {
        ("T1", "T2")
    } else {
        ("T2", "T1")
    };
    assert_eq!(
        cycle,
        scc.replace("T10", "Tx")
            .replace("T13", t2)
            .replace("Tx", t1),
        "{text}"
    );
    assert!(
        text.contains(&format!("T1 = {{:index {t1_index},")),
        "{text}"
    );
}

#[test]
fn svg_plots_come_from_graphviz() {
    if !have_dot() {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("graphviz's dot is required under CI (.ci/run installs it)");
        }
        eprintln!("skipping: graphviz's dot is not installed");
        return;
    }
    let Some(dir) = corpus_dir("elle-golden/histories") else {
        return;
    };
    let (o, out) = check_into_dir("svg", &[], &dir.join("g19-list-append-stale-read-501.edn"));
    let out = &out.0;
    assert_eq!(o.status.code(), Some(1));
    for plot in ["sccs/0.svg", "G-single-item-realtime/0.svg"] {
        let svg = std::fs::read_to_string(out.join(plot)).expect("svg written");
        assert!(svg.starts_with("<?xml"), "{plot} is SVG");
        assert!(
            svg.contains(">rt</text>") && svg.contains(">rw</text>"),
            "{plot} has labelled edges"
        );
    }
    assert!(!out.join("sccs/0.dot").exists());
}

#[test]
fn oversized_plots_are_skipped_with_a_note() {
    let Some(dir) = corpus_dir("elle-golden/histories") else {
        return;
    };
    let (o, out) = check_into_dir(
        "big",
        &["-b", "10"],
        &dir.join("g05-list-append-snapshot-isolation-501.edn"),
    );
    let out = &out.0;
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("skipped plot sccs/0: larger than 10 bytes"),
        "{stderr}"
    );
    assert!(!out.join("sccs").exists());
    assert!(out.join("G2-item.txt").is_file());
}

#[test]
fn incompatible_orders_get_an_html_table() {
    let Some(dir) = corpus_dir("plume-tap") else {
        return;
    };
    let (o, out) = check_into_dir("html", &[], &dir.join("tap-n.edn"));
    let out = &out.0;
    assert_eq!(o.status.code(), Some(1));
    let html = std::fs::read_to_string(out.join("incompatible-order/1.html")).expect("html");
    assert!(html.starts_with("<html><head><style>th { text-align: left; }</style>"));
    assert!(html.contains("<h1>All Reads of 1</h1>"));
    // Four reads of key 1, and the disagreeing elements highlighted.
    assert_eq!(html.matches("<tr><td>").count(), 4);
    assert_eq!(html.matches("style=\"background: #").count(), 3);
}
