//! Free lists and counters of one device: per allocation kind and size class, a few
//! *stripes*, each a free list with its own lock.
//!
//! A thread uses its home stripe (threads are numbered round-robin on first use), so
//! threads allocating the same size mostly take different locks; a thread whose stripe
//! is empty takes a block from another stripe before asking the backend, so blocks freed
//! by one thread are reused by others. Counters are per stripe and summed when read
//! (`live` may wrap in one stripe when a block is freed by another thread: the sum is
//! exact).

use super::padded::Padded;
use super::size_class::SizeClasses;
use super::stats::PoolStats;
use crate::plugin::{AllocKind, Device};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

/// Most stripes per class.
const MAX_STRIPES: usize = 8;

/// Stripes per class: the number of CPUs rounded up to a power of two, at most
/// [`MAX_STRIPES`].
pub(crate) fn default_stripes() -> usize {
    // Asked once per process: the standard library reads the scheduler affinity and the
    // cgroup's CPU quota from /proc and /sys each time (a good part of `olInit`).
    static STRIPES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *STRIPES.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(4, |n| n.get())
            .next_power_of_two()
            .min(MAX_STRIPES)
    })
}

/// This thread's number, for choosing its home stripe.
#[inline]
fn thread_number() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static NUMBER: usize = NEXT.fetch_add(1, Relaxed);
    }
    NUMBER.with(|n| *n)
}

/// Entries of a free list's first buffer (512 bytes: far more than a cache line).
const FREE_LIST_START_CAPACITY: usize = 64;

/// One stripe of a size class of one (device, kind): free blocks and counters, under one
/// lock.
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
    /// `stripes` entries per class, class-major.
    slots: Box<[Padded<Mutex<ClassState>>]>,
    /// A power of two.
    stripes: usize,
    direct: Padded<DirectCounters>,
}

impl KindPool {
    fn new(classes: &SizeClasses, stripes: usize) -> Self {
        assert!(stripes.is_power_of_two());
        KindPool {
            slots: (0..classes.count() * stripes)
                .map(|_| Padded::default())
                .collect(),
            stripes,
            direct: Padded::default(),
        }
    }

    /// The stripes of `class`, and the index of this thread's home stripe among them.
    #[inline]
    fn stripes_of(&self, class: usize) -> (&[Padded<Mutex<ClassState>>], usize) {
        let first = class * self.stripes;
        let stripes = &self.slots[first..first + self.stripes];
        (stripes, thread_number() & (self.stripes - 1))
    }

    /// A cached block of `class`, counting a hit; or `None`, counting a miss.
    #[inline]
    pub(crate) fn take(&self, class: usize) -> Option<usize> {
        let (stripes, home) = self.stripes_of(class);
        {
            let mut state = stripes[home].lock();
            if let Some(addr) = state.free.pop() {
                state.hits += 1;
                state.live = state.live.wrapping_add(1);
                return Some(addr);
            }
        }
        // Home is empty: take from another stripe before going to the backend.
        for other in (1..stripes.len()).map(|i| (home + i) % stripes.len()) {
            let mut state = stripes[other].lock();
            if let Some(addr) = state.free.pop() {
                state.hits += 1;
                state.live = state.live.wrapping_add(1);
                return Some(addr);
            }
        }
        stripes[home].lock().misses += 1;
        None
    }

    /// Counts a block of `class` the backend just allocated and the caller now holds.
    pub(crate) fn note_backend_alloc(&self, class: usize) {
        let (stripes, home) = self.stripes_of(class);
        let mut state = stripes[home].lock();
        state.backend_allocs += 1;
        state.live = state.live.wrapping_add(1);
    }

    /// Takes back a live block of `class` onto this thread's free list.
    #[inline]
    pub(crate) fn put(&self, class: usize, addr: usize) {
        let (stripes, home) = self.stripes_of(class);
        let mut state = stripes[home].lock();
        state.live = state.live.wrapping_sub(1);
        if state.free.capacity() == 0 {
            // A roomy first buffer: free lists of neighbouring stripes are used by different
            // threads, and small buffers from malloc would share cache lines between them.
            state.free.reserve(FREE_LIST_START_CAPACITY);
        }
        state.free.push(addr);
    }

    /// Forgets a live block of `class` that the caller returns to the backend itself.
    pub(crate) fn forget_live(&self, class: usize, freed: bool) {
        let (stripes, home) = self.stripes_of(class);
        let mut state = stripes[home].lock();
        state.live = state.live.wrapping_sub(1);
        state.backend_frees += u64::from(freed);
    }

    /// Empties the free lists of `class`, returning their blocks.
    fn take_cached(&self, class: usize) -> Vec<usize> {
        let (stripes, _) = self.stripes_of(class);
        let mut all = Vec::new();
        for stripe in stripes {
            all.append(&mut stripe.lock().free);
        }
        all
    }

    fn note_backend_frees(&self, class: usize, count: u64) {
        let (stripes, home) = self.stripes_of(class);
        stripes[home].lock().backend_frees += count;
    }

    fn classes(&self) -> usize {
        self.slots.len() / self.stripes
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
        for (slot, state) in self.slots.iter().enumerate() {
            let block = SizeClasses::block_size(slot / self.stripes) as u64;
            let st = state.lock();
            s.hits += st.hits;
            s.misses += st.misses;
            s.backend_allocs += st.backend_allocs;
            s.backend_frees += st.backend_frees;
            // Per-stripe `live` may have wrapped; the wrapping sum is exact.
            s.blocks_live = s.blocks_live.wrapping_add(st.live);
            s.bytes_live = s.bytes_live.wrapping_add(st.live.wrapping_mul(block));
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
    pub(crate) fn new(device: Arc<dyn Device>, classes: &SizeClasses, stripes: usize) -> Self {
        DevicePools {
            device,
            kinds: AllocKind::ALL.map(|_| KindPool::new(classes, stripes)),
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

    /// Returns every cached block of this device to the backend. `unlist` is told of each
    /// class's blocks before the backend frees them: once freed, the backend may hand an
    /// address out again at once, to another thread that lists it anew. Blocks the backend
    /// refuses to free are dropped all the same.
    pub(crate) fn release_cache(&self, unlist: impl Fn(&[usize])) {
        for kind in AllocKind::ALL {
            let pool = self.kind(kind);
            for class in 0..pool.classes() {
                let blocks = pool.take_cached(class);
                if blocks.is_empty() {
                    continue;
                }
                let size = SizeClasses::block_size(class);
                unlist(&blocks);
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
