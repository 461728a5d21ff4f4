//! Proof-query patterns realized in real executions (closed, replayed):
//! why a proof method cannot succeed for a shipped program.

use ellery::robust::{self, sat, Loaded};
use std::path::PathBuf;

fn program(name: &str) -> Loaded {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("test-histories/robust")
        .join(name);
    robust::load(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
#[ignore]
fn explore() {
    let file = std::env::var("RB_FILE").unwrap_or("courseware-si.rob".into());
    let n: usize = std::env::var("RB_N").unwrap().parse().unwrap();
    let edges: usize = std::env::var("RB_E").unwrap().parse().unwrap();
    let backward = std::env::var("RB_B").is_ok();
    let l = program(&file);
    let models = if std::env::var("RB_SER").is_ok() { vec![ellery::robust::syntax::Model::Ser] } else { vec![] };
    let ax = robust::axioms(&l.prog, &models);
    let pat = if edges == 0 { sat::Pattern::IndPath } else { sat::Pattern::ChordlessPath { edges, backward } };
    let t = std::time::Instant::now();
    let r = sat::realize(&l.prog, &l.an, &ax, n, &pat, None);
    println!("{:?} in {:?}", r, t.elapsed());
    if let sat::Realization::Found(ex, at) = r {
        for (i, &d) in ex.descs.iter().enumerate() {
            println!("slot {i}: {} vis {:b}", robust::witness::instance_name(&l.prog, &l.an.descs[d]), ex.vis[i]);
        }
        println!("path {at:?}");
    }
}
