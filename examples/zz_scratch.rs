use ellery::check::sat::*;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let h = ellery::read::read_history_bytes(std::fs::read(&path).unwrap(), "x", ellery::model::Format::Edn).unwrap();
    let (rh, _, preds) = reg_history_with_predicates(&h, true, true).unwrap();
    for tw in [true, false] { for pr in [true, false] { for pol in [Polarity::KnownOrder, Polarity::Solver] {
        let o = SatOptions { session_order: true, real_time: true, two_width: tw, prune: pr, polarity: pol, skip_internal: true, skip_unexplained: true, ..SatOptions::default() };
        let (v, _) = check_with_predicates(&rh, &preds, &o);
        let ok = match &v { Verdict::Invalid(Violation::Cycle(c)) => format!("{:?}", verify_cycle_with(&rh, &preds, c).map_err(|e| e.chars().take(80).collect::<String>())), v => format!("{:?}", v) };
        println!("tw {tw} prune {pr} {pol:?}: {ok}");
    }}}
}
