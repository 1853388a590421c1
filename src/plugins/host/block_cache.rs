//! Large host blocks kept after they are freed, for the next allocation of the same size.
//!
//! glibc gives a block of a MiB or more back to the kernel when it is freed (munmap), so
//! the next allocation of that size gets fresh pages, and the first copy into them pays a
//! page fault and the kernel's zeroing per 4 KiB page: an OpenMP region mapping 8 MiB
//! `tofrom` paid about 2,000 faults every time, and under load each fault is a chance to
//! be taken off the core. Below [`MIN_CACHED`] the memory manager's size classes keep the
//! blocks; above it, this cache does, within [`MAX_BYTES`] in all, the most recently freed
//! first. What does not fit is freed at once (the oldest blocks first make room), the
//! whole cache is freed when an allocation fails and when the device is dropped (at
//! `olShutDown`), so the memory kept is bounded and given back when it is needed.

use parking_lot::Mutex;

/// Blocks from this size up are kept (smaller ones are the memory manager's to pool).
pub const MIN_CACHED: usize = 1 << 20;
/// The most bytes kept in all.
pub const MAX_BYTES: usize = 256 << 20;
/// The largest block kept: half the cache, so one block never evicts everything.
const MAX_BLOCK: usize = MAX_BYTES / 2;

/// The size a block of `size` bytes is allocated with: from [`MIN_CACHED`] up, rounded up
/// to an eighth of its power of two (at most 12.5% more address space, untouched pages
/// cost nothing), so requests of nearly the same size share blocks. The same request
/// always gives the same size, so `free` recomputes it.
pub fn block_size(size: usize) -> usize {
    // Sizes no power of two holds are left as they are (the allocation refuses them).
    let Some(power) = size.checked_next_power_of_two() else {
        return size;
    };
    if size < MIN_CACHED {
        return size;
    }
    let step = power / 8;
    size.div_ceil(step).saturating_mul(step)
}

/// Freed blocks, each `(address, block size)`, the most recently freed last.
#[derive(Default)]
pub struct BlockCache {
    blocks: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    blocks: Vec<(usize, usize)>,
    bytes: usize,
}

impl BlockCache {
    /// A kept block of exactly `block_size` bytes (a value of [`block_size`]), if any.
    pub fn take(&self, block_size: usize) -> Option<usize> {
        if block_size < MIN_CACHED {
            return None;
        }
        let mut kept = self.blocks.lock();
        let i = kept.blocks.iter().rposition(|&(_, s)| s == block_size)?;
        let (addr, size) = kept.blocks.remove(i);
        kept.bytes -= size;
        Some(addr)
    }

    /// Keeps a freed block. Returns the blocks the caller must free now: the block itself
    /// when it is not kept, or the oldest kept ones it displaced.
    pub fn put(&self, addr: usize, block_size: usize) -> Vec<(usize, usize)> {
        if !(MIN_CACHED..=MAX_BLOCK).contains(&block_size) {
            return vec![(addr, block_size)];
        }
        let mut kept = self.blocks.lock();
        let mut evicted = Vec::new();
        while kept.bytes + block_size > MAX_BYTES {
            let oldest = kept.blocks.remove(0);
            kept.bytes -= oldest.1;
            evicted.push(oldest);
        }
        kept.blocks.push((addr, block_size));
        kept.bytes += block_size;
        evicted
    }

    /// Every kept block, for the caller to free; the cache is empty afterwards.
    pub fn drain(&self) -> Vec<(usize, usize)> {
        let mut kept = self.blocks.lock();
        kept.bytes = 0;
        std::mem::take(&mut kept.blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_round_to_an_eighth_of_their_power_of_two() {
        assert_eq!(block_size(4096), 4096);
        assert_eq!(block_size(MIN_CACHED), MIN_CACHED);
        assert_eq!(block_size(8 << 20), 8 << 20);
        assert_eq!(block_size((8 << 20) + 1), 10 << 20);
        assert_eq!(block_size(3_000_000), 3 << 20);
        assert_eq!(block_size(usize::MAX), usize::MAX);
        assert_eq!(block_size((usize::MAX >> 1) + 2), (usize::MAX >> 1) + 2);
    }

    #[test]
    fn a_freed_block_is_reused_for_the_same_size_only() {
        let cache = BlockCache::default();
        assert!(cache.put(0x1000_0000, 8 << 20).is_empty());
        assert_eq!(cache.take(10 << 20), None);
        assert_eq!(cache.take(8 << 20), Some(0x1000_0000));
        assert_eq!(cache.take(8 << 20), None);
    }

    #[test]
    fn the_cache_stays_within_its_bound() {
        let cache = BlockCache::default();
        let block = 64 << 20;
        let mut freed = Vec::new();
        for i in 0..6 {
            freed.extend(cache.put(0x1000_0000 * (i + 1), block));
        }
        // Four fit in 256 MiB; the two oldest made room for the last two.
        assert_eq!(freed, vec![(0x1000_0000, block), (0x2000_0000, block)]);
        // Small and huge blocks are never kept.
        assert_eq!(cache.put(0x9000, 4096), vec![(0x9000, 4096)]);
        assert_eq!(cache.put(0x9000, MAX_BYTES), vec![(0x9000, MAX_BYTES)]);
        assert_eq!(cache.drain().len(), 4);
        assert_eq!(cache.take(block), None);
    }
}
