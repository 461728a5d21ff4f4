//! Elle's iteration orders, reproduced.
//!
//! Elle's answers depend on the order in which the JVM iterates hash-based
//! collections: its cycle search walks Bifurcan graphs (hash tries keyed by a
//! Murmur3 hash of the op index), and its result maps are Clojure maps whose
//! printed order follows Clojure's hash-array-mapped tries. To print the same
//! cycle and the same map, ellery computes the same hashes and orders here.
//! Nothing here depends on the JVM; it is arithmetic on documented hash
//! functions (Murmur3 as used by Clojure, Bifurcan's hash spreading).

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;

fn mix_k1(k1: u32) -> u32 {
    k1.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
}

fn mix_h1(h1: u32, k1: u32) -> u32 {
    (h1 ^ k1)
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64)
}

fn fmix(mut h1: u32, length: u32) -> u32 {
    h1 ^= length;
    h1 ^= h1 >> 16;
    h1 = h1.wrapping_mul(0x85eb_ca6b);
    h1 ^= h1 >> 13;
    h1 = h1.wrapping_mul(0xc2b2_ae35);
    h1 ^= h1 >> 16;
    h1
}

/// Clojure's `Murmur3.hashLong`.
pub fn murmur3_long(input: i64) -> i32 {
    if input == 0 {
        return 0;
    }
    let low = input as u32;
    let high = ((input as u64) >> 32) as u32;
    let mut h1 = mix_h1(0, mix_k1(low));
    h1 = mix_h1(h1, mix_k1(high));
    fmix(h1, 8) as i32
}

/// Clojure's `Murmur3.hashInt`.
pub fn murmur3_int(input: i32) -> i32 {
    if input == 0 {
        return 0;
    }
    let h1 = mix_h1(0, mix_k1(input as u32));
    fmix(h1, 4) as i32
}

/// Clojure's `Murmur3.hashUnencodedChars` (over UTF-16 code units).
pub fn murmur3_chars(s: &str) -> i32 {
    let units: Vec<u16> = s.encode_utf16().collect();
    let mut h1: u32 = 0;
    let mut i = 1;
    while i < units.len() {
        let k1 = units[i - 1] as u32 | ((units[i] as u32) << 16);
        h1 = mix_h1(h1, mix_k1(k1));
        i += 2;
    }
    if units.len() & 1 == 1 {
        h1 ^= mix_k1(units[units.len() - 1] as u32);
    }
    fmix(h1, 2 * units.len() as u32) as i32
}

/// Clojure's `Util.hashCombine`.
fn hash_combine(seed: i32, hash: i32) -> i32 {
    // Java's `>>` on an int is arithmetic (sign-extending): shift the
    // signed value, or every keyword whose name hashes negative gets bit 30
    // wrong.
    let shifted = (seed >> 2) as u32;
    let seed = seed as u32;
    let hash = hash as u32;
    (seed
        ^ hash
            .wrapping_add(0x9e37_79b9)
            .wrapping_add(seed << 6)
            .wrapping_add(shifted)) as i32
}

/// Java's `String.hashCode`.
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(u as i32))
}

/// Clojure's `hasheq` of a symbol or keyword name such as `ns/name`.
fn symbol_hasheq(full: &str) -> i32 {
    let (ns, name) = match full.find('/') {
        Some(i) if full.len() > 1 => (Some(&full[..i]), &full[i + 1..]),
        _ => (None, full),
    };
    let ns_hash = ns.map(java_string_hash).unwrap_or(0);
    hash_combine(murmur3_chars(name), ns_hash)
}

/// Clojure's `hasheq` for the EDN values ellery puts in hashed collections
/// (keywords, integers, strings, symbols, nil, booleans, and vectors, lists,
/// sets and maps of those).
pub fn clojure_hasheq(v: &crate::edn::Value) -> i32 {
    use crate::edn::Value;
    match v {
        Value::Nil => 0,
        Value::Bool(true) => 1231,
        Value::Bool(false) => 1237,
        Value::Int(n) => murmur3_long(*n),
        Value::Str(s) => murmur3_int(java_string_hash(s)),
        Value::Keyword(k) => symbol_hasheq(k).wrapping_add(0x9e37_79b9u32 as i32),
        Value::Symbol(s) => symbol_hasheq(s),
        Value::Vector(items) | Value::List(items) => {
            let mut h: i32 = 1;
            for item in items {
                h = h.wrapping_mul(31).wrapping_add(clojure_hasheq(item));
            }
            let mixed = mix_h1(0, mix_k1(h as u32));
            fmix(mixed, items.len() as u32) as i32
        }
        Value::Set(items) => {
            let mut h: i32 = 0;
            for item in items {
                h = h.wrapping_add(clojure_hasheq(item));
            }
            let mixed = mix_h1(0, mix_k1(h as u32));
            fmix(mixed, items.len() as u32) as i32
        }
        // Murmur3.hashUnordered over the entries, each hashed as the
        // vector [k v] (also a record's hash, before its type hash).
        Value::Map(entries) => {
            let mut h: i32 = 0;
            for (k, v) in entries {
                h = h.wrapping_add(clojure_hasheq(&Value::Vector(vec![k.clone(), v.clone()])));
            }
            let mixed = mix_h1(0, mix_k1(h as u32));
            fmix(mixed, entries.len() as u32) as i32
        }
        Value::Char(c) => *c as i32,
        // Not expected in hashed positions; any stable value will do.
        _ => 0,
    }
}

/// The sort key that orders 32-bit hashes as a hash-array-mapped trie with
/// 5-bit fan-out, least significant bits first, iterates them (Clojure's
/// `PersistentHashMap` and `PersistentHashSet`).
pub fn hamt_key(hash: i32) -> u64 {
    let h = hash as u32;
    let mut key = 0u64;
    let mut shift = 0;
    while shift < 32 {
        key = (key << 5) | ((h >> shift) & 31) as u64;
        shift += 5;
    }
    key
}

/// Orders items as a Clojure map or set built by inserting them in the given
/// order would iterate them: insertion order up to 8 entries (an array map),
/// hash-trie order beyond (a hash map). Items with equal hashes keep their
/// insertion order.
pub fn clojure_map_order<T>(items: &mut [T], hash: impl Fn(&T) -> i32) {
    if items.len() <= 8 {
        return;
    }
    clojure_hash_order(items, hash);
}

/// Orders items as a Clojure hash set or hash map iterates them, whatever
/// their number (e.g. `#{...}` set literals built by `set`/`into #{}`).
pub fn clojure_hash_order<T>(items: &mut [T], hash: impl Fn(&T) -> i32) {
    items.sort_by_cached_key(|item| hamt_key(hash(item)));
}

/// Bifurcan's hash of an op in Elle's graphs: `Murmur3.hashLong(index)`,
/// widened to a long and folded by Bifurcan's `Map.keyHash`.
pub fn bifurcan_op_hash(index: u64) -> u32 {
    bifurcan_spread(murmur3_long(index as i64))
}

/// Bifurcan's `Map.keyHash` applied to a Java `int` hash (widened to a long
/// with sign extension, folded to 32 bits, then spread).
pub fn bifurcan_spread(int_hash: i32) -> u32 {
    let h64 = int_hash as i64;
    let mut hash = ((h64 >> 32) ^ h64) as i32 as u32;
    hash ^= (hash >> 20) ^ (hash >> 12);
    hash ^= (hash >> 7) ^ (hash >> 4);
    hash
}

/// Sorts items into the order a Bifurcan `Map`/`Set` (a CHAMP trie with 5-bit
/// fan-out, least significant bits first) iterates them: at each trie node its
/// inline entries come first, in bit order, then its child nodes, in bit
/// order. The order depends on the whole set, not on each hash alone.
pub fn bifurcan_order<T: Copy>(items: &mut [T], hash: impl Fn(T) -> u32 + Copy) {
    fn go<T: Copy>(items: &mut [T], shift: u32, hash: &dyn Fn(T) -> u32) {
        if items.len() <= 1 || shift >= 32 {
            // Full collisions keep insertion order, as Bifurcan's collision
            // nodes do.
            return;
        }
        let chunk = |h: u32| (h >> shift) & 31;
        let mut counts = [0u32; 32];
        for &it in items.iter() {
            counts[chunk(hash(it)) as usize] += 1;
        }
        // Entries (chunks holding one item) first, then nodes; each in chunk
        // order. A stable sort keeps collision order.
        items.sort_by_key(|&it| {
            let c = chunk(hash(it));
            let is_node = counts[c as usize] > 1;
            (is_node, c)
        });
        let mut start = 0;
        while start < items.len() {
            let c = chunk(hash(items[start]));
            let mut end = start + 1;
            while end < items.len() && chunk(hash(items[end])) == c {
                end += 1;
            }
            if end - start > 1 {
                go(&mut items[start..end], shift + 5, hash);
            }
            start = end;
        }
    }
    go(items, 0, &hash);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edn::Value;

    #[test]
    fn murmur_matches_clojure() {
        // (hash 1) => 1392991556, (hash 42) => 1871679806 in Clojure.
        assert_eq!(murmur3_long(1), 1392991556);
        assert_eq!(murmur3_long(42), 1871679806);
        assert_eq!(murmur3_long(0), 0);
    }

    #[test]
    fn keyword_hash_matches_clojure() {
        // (hash :a) => -2123407586 in Clojure 1.10+.
        assert_eq!(clojure_hasheq(&Value::kw("a")), -2123407586);
    }

    #[test]
    fn string_hash_matches_clojure() {
        // (hash "a") => 1455541201
        assert_eq!(clojure_hasheq(&Value::Str("a".into())), 1455541201);
    }

    #[test]
    fn vector_hash_matches_clojure() {
        // (hash []) => -2017569654, (hash [1 2]) => 156247261
        assert_eq!(clojure_hasheq(&Value::Vector(vec![])), -2017569654);
        assert_eq!(
            clojure_hasheq(&Value::Vector(vec![Value::Int(1), Value::Int(2)])),
            156247261
        );
    }

    #[test]
    fn bifurcan_order_puts_entries_before_nodes() {
        // Hashes 0b00001 and 0b100001 share chunk 1 and become a node; hash 5
        // is an inline entry, so it comes first although its chunk is larger.
        let mut items = vec![1u32, 33, 5];
        bifurcan_order(&mut items, |h| h);
        assert_eq!(items, vec![5, 1, 33]);
    }
}
