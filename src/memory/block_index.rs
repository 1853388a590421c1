//! An ordered index of the blocks the backends handed out, so the allocation holding an
//! interior pointer is found in O(log n).
//!
//! It changes only when a backend allocates or frees (cache misses, large blocks), never
//! on the pooled hot path. Whether a block is live is the registry's to say. The index is
//! sharded by 64 MiB address region (the size of glibc's per-thread heaps), so threads
//! allocating from their own arenas take different locks; a block is listed in the
//! shard of every region it spans. Backend blocks never overlap, so within a shard the
//! block with the greatest start at or below a pointer is the only one that can hold it.

use super::padded::Padded;
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

const REGION_BITS: u32 = 26;
const SHARDS: usize = 64;

/// Block start → block size, for the blocks of one shard's regions.
type Shard = Padded<RwLock<BTreeMap<usize, usize>>>;

pub(crate) struct BlockIndex {
    shards: Box<[Shard]>,
    /// Every block ever listed (since the last `clear`) lies in `[lowest, end)`: a pointer
    /// outside it (host memory of the program's own, in a copy) is answered without a
    /// lock. The bounds only widen; a block listed before a pointer into it was handed
    /// out is seen by whoever was given the pointer (the handing over orders the two).
    lowest: AtomicUsize,
    end: AtomicUsize,
}

impl Default for BlockIndex {
    fn default() -> Self {
        BlockIndex {
            shards: (0..SHARDS).map(|_| Padded::default()).collect(),
            lowest: AtomicUsize::new(usize::MAX),
            end: AtomicUsize::new(0),
        }
    }
}

/// The shards a block spans (each once).
fn shards_of(base: usize, size: usize) -> impl Iterator<Item = usize> {
    let first = base >> REGION_BITS;
    let last = base.saturating_add(size.max(1) - 1) >> REGION_BITS;
    (first..=last.min(first + SHARDS - 1)).map(|region| region % SHARDS)
}

impl BlockIndex {
    pub(crate) fn insert(&self, base: usize, size: usize) {
        self.lowest.fetch_min(base, Relaxed);
        self.end.fetch_max(base.saturating_add(size), Relaxed);
        for shard in shards_of(base, size) {
            self.shards[shard].write().insert(base, size);
        }
    }

    pub(crate) fn remove(&self, base: usize) {
        let home = (base >> REGION_BITS) % SHARDS;
        let Some(size) = self.shards[home].read().get(&base).copied() else {
            return;
        };
        for shard in shards_of(base, size) {
            self.shards[shard].write().remove(&base);
        }
    }

    pub(crate) fn remove_all(&self, bases: &[usize]) {
        for &base in bases {
            self.remove(base);
        }
    }

    /// Whether `ptr` may lie in a listed block (false: it surely does not).
    #[inline]
    pub(crate) fn may_hold(&self, ptr: usize) -> bool {
        ptr >= self.lowest.load(Relaxed) && ptr < self.end.load(Relaxed)
    }

    /// The start of the block that holds `ptr`, if any.
    pub(crate) fn block_holding(&self, ptr: usize) -> Option<usize> {
        let shard = self.shards[(ptr >> REGION_BITS) % SHARDS].read();
        let (&base, &size) = shard.range(..=ptr).next_back()?;
        (ptr - base < size).then_some(base)
    }

    pub(crate) fn clear(&self) {
        for shard in self.shards.iter() {
            shard.write().clear();
        }
        self.lowest.store(usize::MAX, Relaxed);
        self.end.store(0, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_block_holding_a_pointer() {
        let index = BlockIndex::default();
        assert!(!index.may_hold(0x1000));
        index.insert(0x1000, 0x100);
        index.insert(0x2000, 0x40);
        assert!(index.may_hold(0x1000) && index.may_hold(0x203f));
        assert!(!index.may_hold(0xfff) && !index.may_hold(0x2040));
        assert_eq!(index.block_holding(0x1000), Some(0x1000));
        assert_eq!(index.block_holding(0x10ff), Some(0x1000));
        assert_eq!(index.block_holding(0x1100), None);
        assert_eq!(index.block_holding(0x0fff), None);
        assert_eq!(index.block_holding(0x203f), Some(0x2000));
        index.remove(0x2000);
        assert_eq!(index.block_holding(0x2000), None);
    }

    #[test]
    fn blocks_spanning_regions_are_found_from_each() {
        let index = BlockIndex::default();
        let region = 1usize << REGION_BITS;
        let base = 3 * region - 64;
        index.insert(base, 2 * region);
        // A block in a region aliasing the block's last shard, far below it.
        let alias = (3 + SHARDS) * region;
        index.insert(alias, 64);
        for ptr in [base, 3 * region, 4 * region + 5, base + 2 * region - 1] {
            assert_eq!(index.block_holding(ptr), Some(base), "{ptr:#x}");
        }
        assert_eq!(index.block_holding(base + 2 * region), None);
        assert_eq!(index.block_holding(alias + 8), Some(alias));
        index.remove(base);
        assert_eq!(index.block_holding(3 * region), None);
        assert_eq!(index.block_holding(alias), Some(alias));
    }
}
