//! Reads of values nobody wrote, reported by the inference
//! ([`thin_air_cases`]) instead of sending the history to the exact checker.

use super::{dirty_reads, external_reads, ElleDirtyCases, FirstTwo, Writers};
use crate::edn::Value;
use crate::model::History;

/// The exact G1a and G1b cases of `h` when reads of values no transaction
/// wrote (the misread scan's `ThinAir`) are the only difference between
/// them and Elle's: the exact cases are Elle's plus those reads, as `G1a`
/// with `:writer nil`, in history order. Such a read gives the inference no
/// edge (no writer, no version after it), so with these cases its answer
/// is the one it gives everywhere else: a 1M-transaction history with one
/// such read took the exact checker 23 s and 2 GB. `None` (the exact
/// checker decides) when Elle's cases differ otherwise, or when a
/// committed transaction reads a value only it writes (the exact checks
/// count that read from thin air too; the inference would take the reader
/// for its writer).
pub fn thin_air_cases(h: &History) -> Option<ElleDirtyCases> {
    use crate::infer::rw_register::{g1a_cases, g1b_cases};
    let writers = Writers::new(h);
    if reads_own_value(h, &writers) {
        return None;
    }
    let (a, b) = dirty_reads(h, &writers);
    let (elle_a, elle_b) = (g1a_cases(h), g1b_cases(h));
    let unwritten = |c: &Value| c.get_kw("writer") == Some(&Value::Nil);
    let written = a.iter().filter(|c| !unwritten(c));
    (b == elle_b && written.eq(elle_a.iter())).then_some([a, b])
}

/// Whether a committed transaction's external read returns a value that
/// no other transaction wrote but it did (finally or in between).
fn reads_own_value(h: &History, w: &Writers) -> bool {
    let only = |ws: Option<&FirstTwo>, i: u32| ws.is_some_and(|ws| ws.none_other_than(i));
    !external_reads(h, |i, _, kv| {
        let i = i as u32;
        !(only(w.installed.get(&kv), i) || only(w.intermediate.get(&kv), i))
    })
}
