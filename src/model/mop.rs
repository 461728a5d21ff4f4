//! Micro-ops: what a transaction's `[f k v]` entries are read into.

use super::Atom;

/// The function of a micro-op, `[f k v]`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum MopFn {
    /// `:r` (also `:read`): read a key.
    Read,
    /// `:append`: append an element to a list.
    Append,
    /// `:w` (also `:write`): write a register.
    Write,
    /// `:rp`: a predicate read (argument [`MopArg::Pred`]).
    PredRead,
    /// `:wp`: a predicate write (argument [`MopArg::Pred`]).
    PredWrite,
    /// Any other micro-op function; its name is interned
    /// ([`Interner::fn_name`](super::Interner::fn_name)).
    Other(FnName),
}

/// The name of a micro-op function outside the built-ins, interned in the
/// history's [`Interner`](super::Interner) ([`Interner::fn_name`](super::Interner::fn_name), [`Interner::fn_value`](super::Interner::fn_value)).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct FnName(u32);

impl FnName {
    /// The interner slot of the name.
    pub(super) fn slot(self) -> usize {
        self.0 as usize
    }

    /// The name an interned atom stands for as a function (a keyword's
    /// atom is always interned); `None` for an inline integer.
    /// `None` also for a slot past [`FN_NAME_SLOTS`].
    pub fn of(atom: Atom) -> Option<FnName> {
        FnName::at(atom.interned_slot()?)
    }

    /// The name interned at `slot`, if a [`Mop`] can hold it.
    pub(super) fn at(slot: usize) -> Option<FnName> {
        (slot < FN_NAME_SLOTS).then_some(FnName(slot as u32))
    }

    /// This name in the interner that absorbed its own
    /// ([`Interner::absorb`](super::Interner::absorb) returned `table`); `None` when its slot there
    /// is past [`FN_NAME_SLOTS`].
    pub fn absorbed(self, table: &[Atom]) -> Option<FnName> {
        match table.get(self.0 as usize).and_then(|a| a.interned_slot()) {
            Some(slot) => FnName::at(slot),
            None => Some(self),
        }
    }
}

impl MopFn {
    /// The keyword name (without colon) ellery writes for a built-in
    /// function; `None` for [`MopFn::Other`], whose name is interned.
    pub fn keyword(self) -> Option<&'static str> {
        Some(match self {
            MopFn::Read => "r",
            MopFn::Append => "append",
            MopFn::Write => "w",
            MopFn::PredRead => "rp",
            MopFn::PredWrite => "wp",
            MopFn::Other(_) => return None,
        })
    }
}

/// The argument or result of a micro-op.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum MopArg {
    /// `nil`: e.g. an unobserved read.
    Nil,
    /// A single value: an appended element, a written or read register value.
    Atom(Atom),
    /// A list of values (a list-append read), as a range in
    /// [`History::elements`](super::History::elements).
    List {
        /// First element's position.
        start: u32,
        /// Number of elements.
        len: u32,
    },
    /// A predicate micro-op's predicate and rows: an index into
    /// [`History::predicates`](super::History::predicates).
    Pred(u32),
}

/// A micro-op `[f k v]` inside a transaction: what it does ([`Mop::f`]),
/// the key it acts on ([`Mop::key`]) and its argument or result
/// ([`Mop::arg`]).
///
/// Packed into 20 bytes (two enums side by side took 28): a million-
/// transaction history holds about five million micro-ops, its biggest
/// table (issue 23). The two enums' tags and a function's name share one
/// word, which is why a [`FnName`] is below [`FN_NAME_SLOTS`].
///
/// ```
/// use ellery::model::{Atom, Mop, MopArg, MopFn};
/// let key = Atom::int(3).unwrap();
/// let m = Mop::new(MopFn::Write, key, MopArg::Atom(Atom::int(1).unwrap()));
/// assert_eq!((m.f(), m.key()), (MopFn::Write, key));
/// assert_eq!(m.arg(), MopArg::Atom(Atom::int(1).unwrap()));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mop {
    key: Atom,
    /// The argument's atom, a list's start (low half) and length (high
    /// half), or a predicate's index; 0 for `nil`. An [`Atom`] for its
    /// 4-byte alignment (a `u64` would pad the micro-op to 24 bytes).
    payload: Atom,
    /// The function's tag (low 3 bits), the argument's (next 2 bits) and
    /// an [`MopFn::Other`] function's name (the rest); equal micro-ops
    /// have equal words (unused bits are 0).
    meta: u32,
}

/// How many function names a [`Mop`] can tell apart: an unknown micro-op
/// function's name must be among the first 2^27 (134,217,728) values
/// interned (the readers report a history that names one later).
pub const FN_NAME_SLOTS: usize = 1 << 27;

impl Mop {
    /// The micro-op `[f key arg]`.
    pub fn new(f: MopFn, key: Atom, arg: MopArg) -> Mop {
        let (f_tag, name) = match f {
            MopFn::Read => (0, 0),
            MopFn::Append => (1, 0),
            MopFn::Write => (2, 0),
            MopFn::PredRead => (3, 0),
            MopFn::PredWrite => (4, 0),
            MopFn::Other(name) => (5, name.0),
        };
        let (arg_tag, payload) = match arg {
            MopArg::Nil => (0, 0),
            MopArg::Atom(a) => (1, a.0),
            MopArg::List { start, len } => (2, start as u64 | (len as u64) << 32),
            MopArg::Pred(i) => (3, i as u64),
        };
        Mop {
            key,
            payload: Atom(payload),
            meta: f_tag | arg_tag << 3 | name << 5,
        }
    }

    /// What the micro-op does.
    #[inline]
    pub fn f(&self) -> MopFn {
        match self.meta & 7 {
            0 => MopFn::Read,
            1 => MopFn::Append,
            2 => MopFn::Write,
            3 => MopFn::PredRead,
            4 => MopFn::PredWrite,
            _ => MopFn::Other(FnName(self.meta >> 5)),
        }
    }

    /// The key it acts on.
    #[inline]
    pub fn key(&self) -> Atom {
        self.key
    }

    /// Its argument or result.
    #[inline]
    pub fn arg(&self) -> MopArg {
        let p = self.payload.0;
        match (self.meta >> 3) & 3 {
            0 => MopArg::Nil,
            1 => MopArg::Atom(Atom(p)),
            2 => MopArg::List {
                start: p as u32,
                len: (p >> 32) as u32,
            },
            _ => MopArg::Pred(p as u32),
        }
    }
}

impl std::fmt::Debug for Mop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mop")
            .field("f", &self.f())
            .field("key", &self.key)
            .field("arg", &self.arg())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A packed micro-op gives back every function and argument it was
    /// made of, at the edges of each field too, and two are equal exactly
    /// when their parts are.
    #[test]
    fn micro_ops_give_back_their_parts() {
        let last = FnName::at(FN_NAME_SLOTS - 1).expect("the last name fits");
        assert_eq!(FnName::at(FN_NAME_SLOTS), None);
        let fs = [
            MopFn::Read,
            MopFn::Append,
            MopFn::Write,
            MopFn::PredRead,
            MopFn::PredWrite,
            MopFn::Other(FnName(0)),
            MopFn::Other(last),
        ];
        let atoms = [
            Atom::int(0).expect("inline"),
            Atom::int(-(1 << 62)).expect("inline"),
            Atom::int((1 << 62) - 1).expect("inline"),
            Atom::from_slot(0),
            Atom::from_slot(u32::MAX as usize),
        ];
        let mut args = vec![MopArg::Nil, MopArg::Pred(0), MopArg::Pred(u32::MAX)];
        args.extend(atoms.iter().map(|&a| MopArg::Atom(a)));
        for (start, len) in [(0, 0), (u32::MAX, 1), (7, u32::MAX), (u32::MAX, u32::MAX)] {
            args.push(MopArg::List { start, len });
        }
        let mut all = Vec::new();
        for &f in &fs {
            for &key in &atoms {
                for &arg in &args {
                    let m = Mop::new(f, key, arg);
                    assert_eq!((m.f(), m.key(), m.arg()), (f, key, arg));
                    all.push(((f, key, arg), m));
                }
            }
        }
        for (i, (parts, m)) in all.iter().enumerate() {
            for (other_parts, other) in &all[i..] {
                assert_eq!(parts == other_parts, m == other, "{m:?} {other:?}");
            }
        }
    }
}
