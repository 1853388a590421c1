//! A hasher for maps keyed by numbers this library makes (handles, addresses, step
//! numbers): one multiplication instead of SipHash, which was a quarter of our own
//! instructions in a host function + sync. Such keys are not chosen by an adversary who
//! could aim for collisions: a lookup of any value costs one probe sequence.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` keyed by numbers of ours.
pub type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

/// The 128-bit product of the key and an odd constant, its halves folded together: every
/// bit of the key reaches both the low bits (the bucket) and the high ones (the map's
/// control byte), whatever the key's alignment (handles step by 16, blocks by 64).
#[derive(Default)]
pub struct IntHasher(u64);

/// Not the golden ratio's constant, which the allocation registry picks its shard with
/// (keys of one shard would then share high bits).
const MULTIPLIER: u64 = 0xD6E8_FEB8_6659_FD93;

impl IntHasher {
    #[inline]
    fn mix(&mut self, value: u64) {
        let product = u128::from(self.0 ^ value) * u128::from(MULTIPLIER);
        self.0 = (product as u64) ^ ((product >> 64) as u64);
    }
}

impl Hasher for IntHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    /// Keys of other types are folded in eight bytes at a time.
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u64(&mut self, value: u64) {
        self.mix(value);
    }

    #[inline]
    fn write_usize(&mut self, value: usize) {
        self.mix(value as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    /// Handles 16 apart and blocks 64 apart fill a table's buckets evenly.
    #[test]
    fn aligned_keys_spread_over_buckets() {
        let build = BuildHasherDefault::<IntHasher>::default();
        for step in [16usize, 64, 4096] {
            let buckets = 256;
            let mut used = vec![0u32; buckets];
            for i in 0..buckets * 4 {
                used[(build.hash_one(0x0ff1_0000 + i * step) as usize) % buckets] += 1;
            }
            let empty = used.iter().filter(|&&n| n == 0).count();
            assert!(
                empty < buckets / 8,
                "step {step}: {empty} of {buckets} buckets empty"
            );
            let top: std::collections::HashSet<u64> = (0..buckets)
                .map(|i| build.hash_one(i * step) >> 57)
                .collect();
            assert!(top.len() > 64, "step {step}: {} control values", top.len());
        }
    }

    #[test]
    fn a_map_finds_what_it_holds() {
        let mut map = IntMap::default();
        for i in 0..1000usize {
            map.insert(i * 16, i);
        }
        assert!((0..1000usize).all(|i| map.get(&(i * 16)) == Some(&i)));
        assert_eq!(map.get(&8), None);
    }
}
