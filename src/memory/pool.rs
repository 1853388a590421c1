//! Free lists and counters of one device: per allocation kind, one lock per size class.

use super::padded::Padded;
use super::size_class::SizeClasses;
use super::stats::PoolStats;
use crate::plugin::{AllocKind, Device};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// One size class of one (device, kind): its free blocks and counters, under one lock.
#[derive(Default)]
struct ClassState {
    free: Vec<usize>,
    hits: u64,
    misses: u64,
    backend_allocs: u64,
    backend_frees: u64,
    live: u64,
}

/// Counters for requests above the threshold (these take no lock).
#[derive(Default)]
struct DirectCounters {
    misses: AtomicU64,
    backend_allocs: AtomicU64,
    backend_frees: AtomicU64,
    live_blocks: AtomicU64,
    live_bytes: AtomicU64,
}

/// The pool of one (device, kind).
pub(crate) struct KindPool {
    classes: Box<[Padded<Mutex<ClassState>>]>,
    direct: Padded<DirectCounters>,
}

impl KindPool {
    fn new(classes: &SizeClasses) -> Self {
        KindPool {
            classes: (0..classes.count()).map(|_| Padded::default()).collect(),
            direct: Padded::default(),
        }
    }

    /// A cached block of `class`, counting a hit; or `None`, counting a miss.
    #[inline]
    pub(crate) fn take(&self, class: usize) -> Option<usize> {
        let mut state = self.classes[class].lock();
        match state.free.pop() {
            Some(addr) => {
                state.hits += 1;
                state.live += 1;
                Some(addr)
            }
            None => {
                state.misses += 1;
                None
            }
        }
    }

    /// Counts a block of `class` the backend just allocated and the caller now holds.
    pub(crate) fn note_backend_alloc(&self, class: usize) {
        let mut state = self.classes[class].lock();
        state.backend_allocs += 1;
        state.live += 1;
    }

    /// Takes back a live block of `class` onto the free list.
    #[inline]
    pub(crate) fn put(&self, class: usize, addr: usize) {
        let mut state = self.classes[class].lock();
        state.live -= 1;
        state.free.push(addr);
    }

    /// Forgets a live block of `class` that the caller returns to the backend itself.
    pub(crate) fn forget_live(&self, class: usize, freed: bool) {
        let mut state = self.classes[class].lock();
        state.live -= 1;
        state.backend_frees += u64::from(freed);
    }

    /// Empties the free list of `class`, returning its blocks.
    fn take_cached(&self, class: usize) -> Vec<usize> {
        std::mem::take(&mut self.classes[class].lock().free)
    }

    fn note_backend_frees(&self, class: usize, count: u64) {
        self.classes[class].lock().backend_frees += count;
    }

    pub(crate) fn direct_miss(&self) {
        self.direct.misses.fetch_add(1, Relaxed);
    }

    pub(crate) fn direct_allocated(&self, size: usize) {
        self.direct.backend_allocs.fetch_add(1, Relaxed);
        self.direct.live_blocks.fetch_add(1, Relaxed);
        self.direct.live_bytes.fetch_add(size as u64, Relaxed);
    }

    pub(crate) fn direct_released(&self, size: usize, freed: bool) {
        self.direct
            .backend_frees
            .fetch_add(u64::from(freed), Relaxed);
        self.direct.live_blocks.fetch_sub(1, Relaxed);
        self.direct.live_bytes.fetch_sub(size as u64, Relaxed);
    }

    fn stats(&self) -> PoolStats {
        let d = &self.direct;
        let mut s = PoolStats {
            misses: d.misses.load(Relaxed),
            backend_allocs: d.backend_allocs.load(Relaxed),
            backend_frees: d.backend_frees.load(Relaxed),
            blocks_live: d.live_blocks.load(Relaxed),
            bytes_live: d.live_bytes.load(Relaxed),
            ..PoolStats::default()
        };
        for (class, state) in self.classes.iter().enumerate() {
            let st = state.lock();
            let block = SizeClasses::block_size(class) as u64;
            s.hits += st.hits;
            s.misses += st.misses;
            s.backend_allocs += st.backend_allocs;
            s.backend_frees += st.backend_frees;
            s.blocks_live += st.live;
            s.bytes_live += st.live * block;
            s.blocks_cached += st.free.len() as u64;
            s.bytes_cached += st.free.len() as u64 * block;
        }
        s
    }
}

/// A device and its pools, one per allocation kind.
pub(crate) struct DevicePools {
    pub(crate) device: Arc<dyn Device>,
    kinds: [KindPool; 3],
    cache_releases: AtomicU64,
    oom_retries: AtomicU64,
}

impl DevicePools {
    pub(crate) fn new(device: Arc<dyn Device>, classes: &SizeClasses) -> Self {
        DevicePools {
            device,
            kinds: AllocKind::ALL.map(|_| KindPool::new(classes)),
            cache_releases: AtomicU64::new(0),
            oom_retries: AtomicU64::new(0),
        }
    }

    #[inline]
    pub(crate) fn kind(&self, kind: AllocKind) -> &KindPool {
        &self.kinds[kind as usize]
    }

    pub(crate) fn note_oom_retry(&self) {
        self.oom_retries.fetch_add(1, Relaxed);
    }

    /// Returns every cached block of this device to the backend. Blocks the backend
    /// refuses to free are dropped from the cache all the same.
    pub(crate) fn release_cache(&self) {
        for kind in AllocKind::ALL {
            let pool = self.kind(kind);
            for class in 0..pool.classes.len() {
                let blocks = pool.take_cached(class);
                if blocks.is_empty() {
                    continue;
                }
                let size = SizeClasses::block_size(class);
                let freed = blocks
                    .into_iter()
                    .filter(|&addr| self.device.free(addr, size, kind).is_ok())
                    .count();
                pool.note_backend_frees(class, freed as u64);
            }
        }
        self.cache_releases.fetch_add(1, Relaxed);
    }

    pub(crate) fn stats(&self) -> PoolStats {
        let mut s = PoolStats {
            cache_releases: self.cache_releases.load(Relaxed),
            oom_retries: self.oom_retries.load(Relaxed),
            ..PoolStats::default()
        };
        for pool in &self.kinds {
            s += pool.stats();
        }
        s
    }
}
