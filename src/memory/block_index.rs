//! An ordered index of the blocks the backends handed out, so the allocation holding an
//! interior pointer is found in O(log n).
//!
//! It changes only when a backend allocates or frees (cache misses, large blocks), never
//! on the pooled hot path. Whether a block is live is the registry's to say: an entry
//! whose block was since freed, or re-used by the backend at another size, is only a
//! candidate that the registry then rejects or corrects.

use parking_lot::RwLock;
use std::collections::BTreeMap;

#[derive(Default)]
pub(crate) struct BlockIndex {
    /// Block start → block size.
    blocks: RwLock<BTreeMap<usize, usize>>,
}

impl BlockIndex {
    pub(crate) fn insert(&self, base: usize, size: usize) {
        self.blocks.write().insert(base, size);
    }

    pub(crate) fn remove(&self, base: usize) {
        self.blocks.write().remove(&base);
    }

    pub(crate) fn remove_all(&self, bases: &[usize]) {
        if bases.is_empty() {
            return;
        }
        let mut blocks = self.blocks.write();
        for base in bases {
            blocks.remove(base);
        }
    }

    /// The start of the block that holds `ptr`, if any.
    pub(crate) fn block_holding(&self, ptr: usize) -> Option<usize> {
        let blocks = self.blocks.read();
        let (&base, &size) = blocks.range(..=ptr).next_back()?;
        (ptr - base < size).then_some(base)
    }

    pub(crate) fn clear(&self) {
        self.blocks.write().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_block_holding_a_pointer() {
        let index = BlockIndex::default();
        index.insert(0x1000, 0x100);
        index.insert(0x2000, 0x40);
        assert_eq!(index.block_holding(0x1000), Some(0x1000));
        assert_eq!(index.block_holding(0x10ff), Some(0x1000));
        assert_eq!(index.block_holding(0x1100), None);
        assert_eq!(index.block_holding(0x0fff), None);
        assert_eq!(index.block_holding(0x203f), Some(0x2000));
        index.remove(0x2000);
        assert_eq!(index.block_holding(0x2000), None);
    }
}
