//! The registry of live allocations: base address -> (size, kind, device), global over
//! devices and sharded by address so concurrent frees rarely share a lock.

use super::padded::Padded;
use crate::plugin::AllocKind;
use parking_lot::Mutex;
use std::collections::BTreeMap;

/// What the manager knows about a live allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocationInfo {
    /// The address `allocate` returned.
    pub base: usize,
    /// The size that was requested (not rounded to a class).
    pub size: usize,
    pub kind: AllocKind,
    /// Index of the device in the manager's device list.
    pub device: usize,
}

#[derive(Clone, Copy)]
struct Entry {
    size: usize,
    kind: AllocKind,
    device: usize,
}

impl Entry {
    fn info(self, base: usize) -> AllocationInfo {
        AllocationInfo {
            base,
            size: self.size,
            kind: self.kind,
            device: self.device,
        }
    }
}

const SHARD_BITS: u32 = 6;
const SHARDS: usize = 1 << SHARD_BITS;

/// One shard: live allocations by base address, under one lock.
type Shard = Padded<Mutex<BTreeMap<usize, Entry>>>;

pub(crate) struct Registry {
    shards: Box<[Shard]>,
}

/// The shard of `base`: a multiplicative hash of the address bits above the 64-byte
/// alignment, so that blocks aligned to large powers of two still spread out.
#[inline]
fn shard_of(base: usize) -> usize {
    const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;
    let h = ((base as u64) >> 6).wrapping_mul(GOLDEN);
    (h >> (64 - SHARD_BITS)) as usize
}

impl Registry {
    pub(crate) fn new() -> Self {
        Registry {
            shards: (0..SHARDS).map(|_| Padded::default()).collect(),
        }
    }

    /// Records a live allocation; false (and nothing changed) when `base` is already live.
    #[inline]
    pub(crate) fn insert(&self, info: AllocationInfo) -> bool {
        let mut shard = self.shards[shard_of(info.base)].lock();
        match shard.entry(info.base) {
            std::collections::btree_map::Entry::Occupied(_) => false,
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert(Entry {
                    size: info.size,
                    kind: info.kind,
                    device: info.device,
                });
                true
            }
        }
    }

    /// Forgets the allocation starting exactly at `base`.
    #[inline]
    pub(crate) fn remove(&self, base: usize) -> Option<AllocationInfo> {
        let entry = self.shards[shard_of(base)].lock().remove(&base)?;
        Some(entry.info(base))
    }

    /// The live allocation containing `ptr` (`base <= ptr < base + size`).
    pub(crate) fn find(&self, ptr: usize) -> Option<AllocationInfo> {
        if let Some(entry) = self.shards[shard_of(ptr)].lock().get(&ptr) {
            return Some(entry.info(ptr));
        }
        self.shards.iter().find_map(|shard| {
            let shard = shard.lock();
            let (&base, &entry) = shard.range(..=ptr).next_back()?;
            (ptr - base < entry.size).then(|| entry.info(base))
        })
    }

    /// Removes and returns every live allocation.
    pub(crate) fn drain(&self) -> Vec<AllocationInfo> {
        let mut all = Vec::new();
        for shard in self.shards.iter() {
            let taken = std::mem::take(&mut *shard.lock());
            all.extend(taken.into_iter().map(|(base, e)| e.info(base)));
        }
        all
    }

    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(base: usize, size: usize) -> AllocationInfo {
        AllocationInfo {
            base,
            size,
            kind: AllocKind::Device,
            device: 1,
        }
    }

    #[test]
    fn insert_find_remove() {
        let r = Registry::new();
        assert!(r.insert(info(0x1000, 100)));
        assert!(r.insert(info(0x2000, 0x1000)));
        assert!(!r.insert(info(0x1000, 5)));
        assert_eq!(r.len(), 2);
        assert_eq!(r.find(0x1000), Some(info(0x1000, 100)));
        assert_eq!(r.find(0x1063), Some(info(0x1000, 100)));
        assert_eq!(r.find(0x1064), None);
        assert_eq!(r.find(0xfff), None);
        assert_eq!(r.find(0x2fff), Some(info(0x2000, 0x1000)));
        assert_eq!(r.find(0x3000), None);
        assert_eq!(r.remove(0x1010), None);
        assert_eq!(r.remove(0x1000), Some(info(0x1000, 100)));
        assert_eq!(r.remove(0x1000), None);
        assert_eq!(r.drain(), vec![info(0x2000, 0x1000)]);
        assert_eq!(r.len(), 0);
    }

    #[test]
    fn shards_spread_aligned_addresses() {
        let used: std::collections::HashSet<usize> = (0..256)
            .map(|i| shard_of(0x7f00_0000_0000 + i * 4096))
            .collect();
        assert!(used.len() > SHARDS / 2, "{} shards used", used.len());
    }
}
