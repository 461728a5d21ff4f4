//! The candidate order that follows the history's events ([`by_events`]).

use super::*;

/// A candidate order that follows the history's events, as if each
/// transaction took effect as late as it could: at its completion, unless
/// something pulls it earlier. Committing a transaction first commits the
/// still-open writers of the values it read, and, before its writes
/// overwrite a value, the open transactions that read that value and can
/// take effect now. Every transaction so takes effect between its
/// invocation and its completion (`:info` ones only when a reader pulls
/// them), so real-time and process order hold by construction. `None` when
/// a read cannot be explained this way.
pub fn by_events(h: &History) -> Option<Vec<u32>> {
    let infos = read_infos(h);
    let mut keep = vec![false; h.ops.len()];
    for (i, op) in h.ops.iter().enumerate() {
        keep[i] = op.op_type == OpType::Ok;
    }
    for &i in &infos {
        keep[i as usize] = true;
    }
    let mut e = Events {
        h,
        writer: HashMap::new(),
        open_readers: HashMap::new(),
        open_writers: HashMap::new(),
        last_reader: HashMap::new(),
        current: HashMap::new(),
        state: vec![0; h.ops.len()],
        order: Vec::new(),
    };
    for (i, _) in h.ops.iter().enumerate().filter(|&(i, _)| keep[i]) {
        for m in txn_mops(h, i).iter().filter(|m| m.f() == MopFn::Write) {
            if let MopArg::Atom(v) = m.arg() {
                e.writer.insert((m.key(), v), i as u32);
            }
        }
    }
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type == OpType::Ok && keep[i] {
            let invoked = h.invocation_of(i).unwrap_or(i) as u32;
            external_reads(h, i, |k, v| {
                let last = e.last_reader.entry((k, v)).or_insert(0);
                *last = (*last).max(invoked);
            });
        }
    }
    for (i, op) in h.ops.iter().enumerate() {
        match op.op_type {
            OpType::Invoke => {
                let Some(c) = h.completion_of(i).filter(|&c| keep[c]) else {
                    continue;
                };
                e.state[c] = OPEN;
                if h.ops[c].op_type == OpType::Ok {
                    external_reads(h, c, |k, v| {
                        e.open_readers.entry((k, v)).or_default().push(c as u32)
                    });
                    for m in txn_mops(h, c).iter().filter(|m| m.f() == MopFn::Write) {
                        e.open_writers.entry(m.key()).or_default().push(c as u32);
                    }
                }
            }
            OpType::Ok if keep[i] => {
                if e.state[i] == 0 {
                    // Never invoked: it opens and completes here.
                    e.state[i] = OPEN;
                }
                e.commit(i as u32, 0)?;
            }
            _ => {}
        }
    }
    Some(e.order)
}

/// [`by_events`]'s transaction states.
const OPEN: u8 = 1;
const COMMITTING: u8 = 2;
const COMMITTED: u8 = 3;

/// How deep [`Events::commit`] may pull transactions forward.
const PULL_DEPTH: u32 = 200;

/// The replay state of [`by_events`].
struct Events<'h> {
    h: &'h History,
    /// The writer of each non-`nil` value.
    writer: HashMap<(Atom, Atom), u32>,
    /// Invoked `:ok` transactions by the values they read externally.
    open_readers: HashMap<(Atom, Option<Atom>), Vec<u32>>,
    /// Invoked `:ok` transactions by the keys they write (committed ones
    /// are dropped lazily).
    open_writers: HashMap<Atom, Vec<u32>>,
    /// The latest invocation among the `:ok` readers of each value.
    last_reader: HashMap<(Atom, Option<Atom>), u32>,
    current: HashMap<Atom, Option<Atom>>,
    /// 0 not invoked, else [`OPEN`], [`COMMITTING`], [`COMMITTED`].
    state: Vec<u8>,
    order: Vec<u32>,
}

impl Events<'_> {
    fn matches(&self, t: u32) -> bool {
        let mut ok = true;
        external_reads(self.h, t as usize, |k, v| {
            ok &= self.current.get(&k).copied().flatten() == v;
        });
        ok
    }

    /// Commits `t` (and what it pulls); `None` when a read cannot match.
    fn commit(&mut self, t: u32, depth: u32) -> Option<()> {
        match self.state[t as usize] {
            COMMITTED => return Some(()),
            OPEN if depth <= PULL_DEPTH => {}
            _ => return None,
        }
        self.state[t as usize] = COMMITTING;
        let observed = self.h.ops[t as usize].op_type == OpType::Ok;
        if observed {
            let mut sources = Vec::new();
            external_reads(self.h, t as usize, |k, v| {
                if let Some(&w) = v.and_then(|v| self.writer.get(&(k, v))) {
                    sources.push(w);
                }
            });
            for w in sources {
                if w != t && self.state[w as usize] != COMMITTED {
                    self.commit(w, depth + 1)?;
                }
            }
            if !self.matches(t) {
                return None;
            }
        }
        // Readers of the values about to be overwritten go first when they
        // can.
        let keys: Vec<Atom> = txn_mops(self.h, t as usize)
            .iter()
            .filter(|m| m.f() == MopFn::Write)
            .map(|m| m.key())
            .collect();
        // Real time puts an open writer of a key that completed before a
        // reader of the value `t` writes was invoked before that reader, so
        // before `t`: it goes first.
        let finals: TxnMap<Option<Atom>> = {
            let mut f = TxnMap::default();
            for m in txn_mops(self.h, t as usize) {
                if let (MopFn::Write, Ok(v)) = (m.f(), reg_value(m)) {
                    match f.get_mut(m.key()) {
                        Some(e) => *e = v,
                        None => f.push(m.key(), v),
                    }
                }
            }
            f
        };
        for &(k, v) in finals.entries() {
            let Some(&last) = self.last_reader.get(&(k, v)) else {
                continue;
            };
            let mut ws = self.open_writers.remove(&k).unwrap_or_default();
            ws.retain(|&w| self.state[w as usize] != COMMITTED);
            let early: Vec<u32> = ws
                .iter()
                .copied()
                .filter(|&w| w != t && w < last && self.state[w as usize] == OPEN)
                .collect();
            self.open_writers.insert(k, ws);
            for w in early {
                if self.state[w as usize] == OPEN && self.matches(w) {
                    let _ = self.try_commit(w, depth + 1);
                }
            }
        }
        for k in keys {
            let cur = (k, self.current.get(&k).copied().flatten());
            let readers = self.open_readers.get(&cur).cloned().unwrap_or_default();
            for r in readers {
                if r != t && self.state[r as usize] == OPEN && self.matches(r) {
                    // A reader that cannot go now stays open; its own
                    // completion decides.
                    let _ = self.try_commit(r, depth + 1);
                }
            }
        }
        if observed && !self.matches(t) {
            return None;
        }
        for m in txn_mops(self.h, t as usize) {
            if let (MopFn::Write, Ok(v)) = (m.f(), reg_value(m)) {
                self.current.insert(m.key(), v);
            }
        }
        self.state[t as usize] = COMMITTED;
        self.order.push(t);
        Some(())
    }

    /// [`Self::commit`] where failing leaves `r` open; what it pulled
    /// before failing stays committed (each took effect inside its own
    /// invocation–completion window, so that is still a valid prefix).
    fn try_commit(&mut self, r: u32, depth: u32) -> Option<()> {
        let before = self.state[r as usize];
        let result = self.commit(r, depth);
        if result.is_none() && self.state[r as usize] == COMMITTING {
            self.state[r as usize] = before;
        }
        result
    }
}
