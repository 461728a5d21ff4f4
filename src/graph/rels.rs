//! Relationship sets on dependency edges.

/// A set of edge relationships, one bit each (the same bits as Elle's
/// `BitRels`, so that search order over relationships matches Elle's).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct Rels(pub u8);

impl Rels {
    /// No relationships.
    pub const NONE: Rels = Rels(0);
    /// Write-write dependency.
    pub const WW: Rels = Rels(0x01);
    /// Write-read dependency.
    pub const WR: Rels = Rels(0x02);
    /// Read-write anti-dependency.
    pub const RW: Rels = Rels(0x04);
    /// Predicate write-write dependency.
    pub const WWP: Rels = Rels(0x08);
    /// Predicate write-read dependency.
    pub const WRP: Rels = Rels(0x10);
    /// Predicate anti-dependency.
    pub const RWP: Rels = Rels(0x20);
    /// Process order.
    pub const PROCESS: Rels = Rels(0x40);
    /// Real-time order.
    pub const REALTIME: Rels = Rels(0x80);
    /// Any anti-dependency.
    pub const ANY_RW: Rels = Rels(0x04 | 0x20);
    /// Every single relationship, in bit order.
    pub const ALL: [Rels; 8] = [
        Rels::WW,
        Rels::WR,
        Rels::RW,
        Rels::WWP,
        Rels::WRP,
        Rels::RWP,
        Rels::PROCESS,
        Rels::REALTIME,
    ];

    /// Union.
    pub const fn union(self, o: Rels) -> Rels {
        Rels(self.0 | o.0)
    }
    /// Intersection.
    pub const fn intersection(self, o: Rels) -> Rels {
        Rels(self.0 & o.0)
    }
    /// Difference.
    pub const fn difference(self, o: Rels) -> Rels {
        Rels(self.0 & !o.0)
    }
    /// Whether no relationship is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Whether any relationship of `o` is set.
    pub const fn intersects(self, o: Rels) -> bool {
        self.0 & o.0 != 0
    }
    /// Elle's keyword name of a single relationship.
    pub fn name(self) -> &'static str {
        match self.0 {
            0x01 => "ww",
            0x02 => "wr",
            0x04 => "rw",
            0x08 => "wwp",
            0x10 => "wrp",
            0x20 => "rwp",
            0x40 => "process",
            0x80 => "realtime",
            _ => "rels",
        }
    }
    /// The single relationships in this set, in bit order.
    pub fn singles(self) -> impl Iterator<Item = Rels> {
        Rels::ALL.into_iter().filter(move |r| self.intersects(*r))
    }
}
