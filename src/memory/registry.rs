//! The registry of live allocations: base address -> (size, kind, device), global over
//! devices and sharded by address so concurrent frees rarely share a lock.
//!
//! Shards are hash maps with a one-multiply hasher: inserting and removing a base is the
//! hot path (every alloc and free). Interior pointers are resolved by the manager's
//! ordered block index, then checked here.

use super::padded::Padded;
use crate::plugin::foundation::int_hash::IntMap;
use crate::plugin::AllocKind;
use parking_lot::Mutex;

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
    device: u32,
    kind: AllocKind,
}

impl Entry {
    fn info(self, base: usize) -> AllocationInfo {
        AllocationInfo {
            base,
            size: self.size,
            kind: self.kind,
            device: self.device as usize,
        }
    }
}

const SHARD_BITS: u32 = 6;
/// Entries a shard's table holds before it first grows (about 1.5 KiB of table).
const SHARD_START_CAPACITY: usize = 48;
const SHARDS: usize = 1 << SHARD_BITS;

/// One shard: live allocations by base address, under one lock.
type Shard = Padded<Mutex<IntMap<usize, Entry>>>;

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
        // Tables are made on a shard's first insert (`olInit` + `olShutDown` of a program
        // that allocates nothing then costs no table: 64 of them were a third of it).
        let shard = || Padded(Mutex::new(IntMap::default()));
        Registry {
            shards: (0..SHARDS).map(|_| shard()).collect(),
        }
    }

    /// Records a live allocation; false (and nothing changed) when `base` is already live.
    #[inline]
    pub(crate) fn insert(&self, info: AllocationInfo) -> bool {
        let mut shard = self.shards[shard_of(info.base)].lock();
        if shard.capacity() == 0 {
            // Each table starts roomy: small tables of neighbouring shards would be
            // malloc'd side by side and share cache lines, which threads then write in
            // turn.
            shard.reserve(SHARD_START_CAPACITY);
        }
        match shard.entry(info.base) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(Entry {
                    size: info.size,
                    kind: info.kind,
                    device: info.device as u32,
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

    /// The live allocation starting exactly at `base`.
    #[inline]
    pub(crate) fn get(&self, base: usize) -> Option<AllocationInfo> {
        let entry = *self.shards[shard_of(base)].lock().get(&base)?;
        Some(entry.info(base))
    }

    /// Removes and returns every live allocation.
    pub(crate) fn drain(&self) -> Vec<AllocationInfo> {
        let mut all = Vec::new();
        for shard in self.shards.iter() {
            let mut shard = shard.lock();
            if shard.is_empty() {
                continue; // no scan of an empty table's slots
            }
            let taken = std::mem::take(&mut *shard);
            all.extend(taken.into_iter().map(|(base, e)| e.info(base)));
        }
        all
    }

    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().len()).sum()
    }

    /// The live allocations of device `device`, by base address.
    pub(crate) fn of_device(&self, device: usize) -> Vec<AllocationInfo> {
        let mut found: Vec<AllocationInfo> = self
            .shards
            .iter()
            .flat_map(|s| {
                s.lock()
                    .iter()
                    .filter(|(_, e)| e.device as usize == device)
                    .map(|(&base, e)| e.info(base))
                    .collect::<Vec<_>>()
            })
            .collect();
        found.sort_by_key(|a| a.base);
        found
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
    fn insert_get_remove() {
        let r = Registry::new();
        assert!(r.insert(info(0x1000, 100)));
        assert!(r.insert(info(0x2000, 0x1000)));
        assert!(!r.insert(info(0x1000, 5)));
        assert_eq!(r.len(), 2);
        assert_eq!(r.get(0x1000), Some(info(0x1000, 100)));
        assert_eq!(r.get(0x1063), None);
        assert_eq!(r.get(0x2000), Some(info(0x2000, 0x1000)));
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
