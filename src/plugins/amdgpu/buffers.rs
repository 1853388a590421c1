//! Memory a stream operation holds until the GPU has passed it: kernel-argument
//! segments (kernarg pool, reused by size class) and staging buffers (fine-grained host
//! memory). Each is freed or recycled when dropped, so a stream's completion action is
//! dropping what the operation held once its signal is done.

use super::ffi::MemoryPool;
use super::hsa::Hsa;
use super::recycler::Recycler;
use crate::plugin::foundation::error::Result;
use crate::plugin::foundation::flags::trace;
use std::sync::Arc;

/// Kernarg segments from 256 bytes to 64 KiB are recycled; larger ones (rare: the HSA
/// limit is 4 KiB on older runtimes) are allocated each time.
const SMALLEST: usize = 256;
const CLASSES: usize = 9;
const KEEP_PER_CLASS: usize = 256;

/// The class index of a segment of `size` bytes and its bytes, `None` above 64 KiB.
pub fn kernarg_class(size: usize) -> Option<(usize, usize)> {
    let bytes = size.max(SMALLEST).next_power_of_two();
    let index = (bytes / SMALLEST).trailing_zeros() as usize;
    (index < CLASSES).then_some((index, bytes))
}

pub struct KernargCache {
    hsa: Arc<Hsa>,
    pool: MemoryPool,
    classes: Vec<Recycler<usize>>,
}

impl KernargCache {
    pub fn new(hsa: Arc<Hsa>, pool: MemoryPool) -> Arc<KernargCache> {
        Arc::new(KernargCache {
            hsa,
            pool,
            classes: (0..CLASSES)
                .map(|_| Recycler::new(KEEP_PER_CLASS))
                .collect(),
        })
    }

    /// A segment holding `bytes` (written now: kernarg memory is host-visible).
    pub fn segment(
        self: &Arc<Self>,
        bytes: &[u8],
        gpus: &[super::ffi::Agent],
    ) -> Result<KernargSegment> {
        let class = kernarg_class(bytes.len());
        let reused = class.and_then(|(i, _)| self.classes[i].take());
        let addr = match reused {
            Some(a) => a,
            None => {
                let size = class.map_or(bytes.len(), |(_, b)| b);
                let a = self.hsa.pool_allocate(self.pool, size)?;
                if let Err(e) = self.hsa.allow_access(gpus, a) {
                    let _ = self.hsa.pool_free(a);
                    return Err(e);
                }
                a
            }
        };
        // SAFETY: `addr` is host-accessible kernarg memory of at least `bytes.len()` bytes
        // (its class size), not in use by any dispatch (fresh, or returned after its
        // dispatch completed).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), addr as *mut u8, bytes.len()) };
        Ok(KernargSegment {
            cache: self.clone(),
            addr,
            class: class.map(|(i, _)| i),
        })
    }
}

impl Drop for KernargCache {
    fn drop(&mut self) {
        for class in &self.classes {
            for a in class.drain() {
                let _ = self.hsa.pool_free(a);
            }
        }
    }
}

pub struct KernargSegment {
    cache: Arc<KernargCache>,
    addr: usize,
    class: Option<usize>,
}

impl KernargSegment {
    pub fn address(&self) -> usize {
        self.addr
    }
}

impl Drop for KernargSegment {
    fn drop(&mut self) {
        let back = match self.class {
            Some(i) => self.cache.classes[i].put(self.addr),
            None => Some(self.addr),
        };
        if let Some(a) = back {
            let _ = self.cache.hsa.pool_free(a);
        }
    }
}

/// Fine-grained host memory for staging a copy of pageable memory.
pub struct Staging {
    hsa: Arc<Hsa>,
    addr: usize,
    size: usize,
}

impl Staging {
    pub fn new(
        hsa: Arc<Hsa>,
        pool: MemoryPool,
        size: usize,
        gpus: &[super::ffi::Agent],
    ) -> Result<Staging> {
        let addr = hsa.pool_allocate(pool, size)?;
        let staging = Staging { hsa, addr, size };
        staging.hsa.allow_access(gpus, addr)?;
        Ok(staging)
    }

    pub fn address(&self) -> usize {
        self.addr
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `addr` is host-accessible memory of `size` bytes owned by this buffer.
        unsafe { std::slice::from_raw_parts_mut(self.addr as *mut u8, self.size) }
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts(self.addr as *const u8, self.size) }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if let Err(e) = self.hsa.pool_free(self.addr) {
            trace(|| format!("AMDGPU: freeing a staging buffer: {e}"));
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
    fn kernarg_classes_are_powers_of_two_from_256_bytes() {
        assert_eq!(kernarg_class(0), Some((0, 256)));
        assert_eq!(kernarg_class(256), Some((0, 256)));
        assert_eq!(kernarg_class(257), Some((1, 512)));
        assert_eq!(kernarg_class(4096), Some((4, 4096)));
        assert_eq!(kernarg_class(65536), Some((8, 65536)));
        assert_eq!(kernarg_class(65537), None);
    }
}
