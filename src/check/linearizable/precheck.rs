//! Verdicts that need no search: a key is not linearizable when a
//! completed op observes a value that no op wrote. The search would prove
//! it too, but only after exploring every order of the ops before it,
//! which on a few hundred concurrent ops (crashed writes above all) takes
//! minutes and gigabytes.

use crate::check::linearizable::register::{RegFn, RegOp, NIL};

/// Configurations the search may memoise when it only refines a known
/// verdict (about 0.1 s and tens of MB).
pub(super) const REFINE_CONFIGS: usize = 200_000;

/// The earliest-completing completed op that observes a value no op in
/// `ops` writes (a read of it, or a cas expecting it) other than the
/// initial `nil`, if any. Failed ops are not in `ops`; crashed writes
/// count as writers (they may have taken effect).
pub(super) fn unwritten_read(ops: &[RegOp]) -> Option<usize> {
    let nvalues = ops
        .iter()
        .map(|o| o.a.max(o.b) as usize + 1)
        .max()
        .unwrap_or(1);
    let mut written = vec![false; nvalues.max(NIL as usize + 1)];
    written[NIL as usize] = true;
    for op in ops {
        match op.f {
            RegFn::Write => written[op.a as usize] = true,
            RegFn::Cas => written[op.b as usize] = true,
            RegFn::Read => {}
        }
    }
    ops.iter()
        .enumerate()
        .filter(|(_, o)| o.ok() && o.f != RegFn::Write && !written[o.a as usize])
        .min_by_key(|(_, o)| o.complete)
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::super::{check_history, LinOptions};
    use crate::edn::pr_str;
    use crate::model::Format;
    use crate::read::read_history_bytes;

    /// 16 writes that crash (each may or may not have taken effect, with
    /// values 1 to 3 written many times, so the chain does not apply), 80
    /// sequential write-read pairs, then a read of 999, which nobody wrote.
    /// The search alone ran for minutes and took gigabytes.
    fn crashed_writes_then_unwritten_read() -> String {
        let mut lines = Vec::new();
        let mut op = |t: &str, p: u32, f: &str, v: &str| {
            let i = lines.len();
            lines.push(format!(
                "{{:index {i}, :type :{t}, :process {p}, :f :{f}, :value {v}}}"
            ));
        };
        for p in 0..16 {
            op("invoke", p, "write", &(p % 3 + 1).to_string());
        }
        for i in 0..80 {
            let (p, v) = (100 + i % 3, (i % 3 + 1).to_string());
            op("invoke", p, "write", &v);
            op("ok", p, "write", &v);
            op("invoke", p, "read", "nil");
            op("ok", p, "read", &v);
        }
        op("invoke", 200, "read", "nil");
        op("ok", 200, "read", "999");
        for p in 0..16 {
            op("info", p, "write", &(p % 3 + 1).to_string());
        }
        lines.join("\n")
    }

    #[test]
    fn an_unwritten_read_decides_at_once() {
        let text = crashed_writes_then_unwritten_read();
        let h = read_history_bytes(text.into_bytes(), "t.edn", Format::Edn).expect("edn");
        // `:cause :unwritten-read` shows the pre-check decided it, without
        // the search (speed is measured in benches, not asserted here).
        let r = check_history(&h, &LinOptions::default()).expect("checks");
        assert_eq!(
            pr_str(&r),
            "{:valid? false, :analyzer :wgl, \
             :op {:index 337, :time -1, :type :ok, :process 200, :f :read, :value 999}, \
             :previous-ok {:index 335, :time -1, :type :ok, :process 101, :f :read, :value 2}, \
             :last-consistent-states [], :cause :unwritten-read}"
        );
    }

    #[test]
    fn small_searches_still_name_the_op_they_reach() {
        // A cas expecting 7 (never written) after two writes of 1: the
        // search finishes within its budget and reports as it always did.
        let text = "{:index 0 :type :invoke :process 0 :f :write :value 1}\n\
                    {:index 1 :type :ok :process 0 :f :write :value 1}\n\
                    {:index 2 :type :invoke :process 1 :f :write :value 1}\n\
                    {:index 3 :type :ok :process 1 :f :write :value 1}\n\
                    {:index 4 :type :invoke :process 0 :f :cas :value [7 2]}\n\
                    {:index 5 :type :ok :process 0 :f :cas :value [7 2]}\n";
        let h = read_history_bytes(text.as_bytes().to_vec(), "t.edn", Format::Edn).expect("edn");
        let r = check_history(&h, &LinOptions::default()).expect("checks");
        assert_eq!(
            pr_str(&r),
            "{:valid? false, :analyzer :wgl, \
             :op {:index 5, :time -1, :type :ok, :process 0, :f :cas, :value [7 2]}, \
             :previous-ok {:index 3, :time -1, :type :ok, :process 1, :f :write, :value 1}, \
             :last-consistent-states [1]}"
        );
    }
}
