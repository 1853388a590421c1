//! Memory a stream operation holds until the GPU has passed it: kernel-argument
//! segments (kernarg pool) and staging buffers (fine-grained host memory), both reused by
//! size class, and locked host memory. Each is recycled, freed or unlocked when dropped,
//! so a stream's completion action is dropping what the operation held once its signal
//! is done.

use super::ffi::MemoryPool;
use super::hsa::Hsa;
use super::recycler::Recycler;
use crate::plugin::foundation::error::Result;
use crate::plugin::foundation::flags::trace;
use std::sync::Arc;

/// Blocks from 256 bytes up are recycled by power-of-two class.
const SMALLEST: usize = 256;
/// Kernarg segments up to 64 KiB are recycled (larger ones, rare: the HSA limit is 4 KiB
/// on older runtimes, are allocated each time), up to 256 of each size.
const KERNARG_CLASSES: usize = 9;
const KERNARGS_PER_CLASS: usize = 256;
/// Staging buffers serve pageable copies below the lock threshold (1 MiB by default):
/// those up to 1 MiB are recycled, up to 4 of each size (the largest classes hold 4 MiB).
const STAGING_CLASSES: usize = 13;
const STAGING_PER_CLASS: usize = 4;

/// The class index of a block of `size` bytes and its bytes, among `classes` classes
/// from 256 bytes up; `None` above the largest.
pub fn size_class(size: usize, classes: usize) -> Option<(usize, usize)> {
    let bytes = size.max(SMALLEST).next_power_of_two();
    let index = (bytes / SMALLEST).trailing_zeros() as usize;
    (index < classes).then_some((index, bytes))
}

/// Memory of one pool that the GPUs may reach, allocated by size class and recycled:
/// allocating, granting the GPUs access and freeing are kernel-driver calls on ROCm, too
/// slow for every launch (kernel arguments) or every small pageable copy (staging).
pub struct BlockCache {
    hsa: Arc<Hsa>,
    pool: MemoryPool,
    classes: Vec<Recycler<usize>>,
}

impl BlockCache {
    fn new(hsa: Arc<Hsa>, pool: MemoryPool, classes: usize, keep: usize) -> Arc<BlockCache> {
        Arc::new(BlockCache {
            hsa,
            pool,
            classes: (0..classes).map(|_| Recycler::new(keep)).collect(),
        })
    }

    /// The cache of kernel-argument segments (the kernarg pool).
    pub fn kernargs(hsa: Arc<Hsa>, pool: MemoryPool) -> Arc<BlockCache> {
        Self::new(hsa, pool, KERNARG_CLASSES, KERNARGS_PER_CLASS)
    }

    /// The cache of staging buffers (fine-grained host memory).
    pub fn staging(hsa: Arc<Hsa>, pool: MemoryPool) -> Arc<BlockCache> {
        Self::new(hsa, pool, STAGING_CLASSES, STAGING_PER_CLASS)
    }

    /// A block of at least `size` bytes the GPUs may reach: a recycled one of its class,
    /// or a new one.
    pub fn block(self: &Arc<Self>, size: usize, gpus: &[super::ffi::Agent]) -> Result<Block> {
        let class = size_class(size, self.classes.len());
        if let Some(addr) = class.and_then(|(i, _)| self.classes[i].take()) {
            return Ok(self.hold(addr, size, class));
        }
        let bytes = class.map_or(size, |(_, b)| b);
        let addr = self.hsa.pool_allocate(self.pool, bytes)?;
        if let Err(e) = self.hsa.allow_access(gpus, addr) {
            let _ = self.hsa.pool_free(addr);
            return Err(e);
        }
        Ok(self.hold(addr, size, class))
    }

    fn hold(self: &Arc<Self>, addr: usize, size: usize, class: Option<(usize, usize)>) -> Block {
        Block {
            cache: self.clone(),
            addr,
            size,
            class: class.map(|(i, _)| i),
        }
    }
}

impl Drop for BlockCache {
    fn drop(&mut self) {
        for class in &self.classes {
            for a in class.drain() {
                let _ = self.hsa.pool_free(a);
            }
        }
    }
}

/// A block of a `BlockCache`, held until the GPU has passed it: a kernel-argument
/// segment or a staging buffer. Back to its class (or freed) when dropped.
pub struct Block {
    cache: Arc<BlockCache>,
    addr: usize,
    /// The bytes asked for (the block may be larger: its class's size).
    size: usize,
    class: Option<usize>,
}

/// A kernel-argument segment.
pub type KernargSegment = Block;
/// Fine-grained host memory for staging a copy of pageable memory.
pub type Staging = Block;

impl Block {
    pub fn address(&self) -> usize {
        self.addr
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `addr` is host-accessible memory of at least `size` bytes held by this
        // block alone (fresh, or recycled after the GPU passed its last use).
        unsafe { std::slice::from_raw_parts_mut(self.addr as *mut u8, self.size) }
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts(self.addr as *const u8, self.size) }
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        let back = match self.class {
            Some(i) => self.cache.classes[i].put(self.addr),
            None => Some(self.addr),
        };
        if let Some(a) = back {
            if let Err(e) = self.cache.hsa.pool_free(a) {
                trace(|| format!("AMDGPU: freeing a kernarg or staging block: {e}"));
            }
        }
    }
}

/// Host memory page-locked for the GPUs for one copy; unlocked when dropped.
pub struct Locked {
    pub hsa: Arc<Hsa>,
    pub host: usize,
    pub agent_addr: usize,
}

impl Drop for Locked {
    fn drop(&mut self) {
        if let Err(e) = self.hsa.unlock(self.host) {
            trace(|| format!("AMDGPU: unlocking host memory: {e}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_powers_of_two_from_256_bytes() {
        let kernarg = |size| size_class(size, KERNARG_CLASSES);
        assert_eq!(kernarg(0), Some((0, 256)));
        assert_eq!(kernarg(256), Some((0, 256)));
        assert_eq!(kernarg(257), Some((1, 512)));
        assert_eq!(kernarg(4096), Some((4, 4096)));
        assert_eq!(kernarg(65536), Some((8, 65536)));
        assert_eq!(kernarg(65537), None);
        let staging = |size| size_class(size, STAGING_CLASSES);
        assert_eq!(staging(65537), Some((9, 131072)));
        assert_eq!(staging(1 << 20), Some((12, 1 << 20)));
        assert_eq!(staging((1 << 20) + 1), None);
    }
}
