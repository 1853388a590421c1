//! Counters the manager reports, per device or summed over all devices.

use std::fmt;
use std::ops::AddAssign;

/// A snapshot of the pool's counters. `hits`, `misses`, backend calls and releases
/// count since the manager was made; `*_cached` and `*_live` are current.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Allocations served from a free list.
    pub hits: u64,
    /// Allocations that went to the backend: pooled-class misses and requests above the
    /// threshold (including those the backend then refused).
    pub misses: u64,
    /// Blocks on free lists now, and their bytes.
    pub blocks_cached: u64,
    pub bytes_cached: u64,
    /// Allocations handed out and not yet freed, and their bytes (block bytes: pooled
    /// requests count their class size, others their requested size).
    pub blocks_live: u64,
    pub bytes_live: u64,
    /// Successful backend `allocate` and `free` calls.
    pub backend_allocs: u64,
    pub backend_frees: u64,
    /// Times the cache was released (explicitly, on out-of-memory, or at shutdown).
    pub cache_releases: u64,
    /// Allocations retried after the backend ran out of memory.
    pub oom_retries: u64,
}

impl PoolStats {
    /// Fraction of allocations served from the cache (0 when there were none).
    pub fn hit_rate(&self) -> f64 {
        let total = self.hits + self.misses;
        if total == 0 {
            0.0
        } else {
            self.hits as f64 / total as f64
        }
    }
}

impl AddAssign for PoolStats {
    fn add_assign(&mut self, o: PoolStats) {
        self.hits += o.hits;
        self.misses += o.misses;
        self.blocks_cached += o.blocks_cached;
        self.bytes_cached += o.bytes_cached;
        self.blocks_live += o.blocks_live;
        self.bytes_live += o.bytes_live;
        self.backend_allocs += o.backend_allocs;
        self.backend_frees += o.backend_frees;
        self.cache_releases += o.cache_releases;
        self.oom_retries += o.oom_retries;
    }
}

impl fmt::Display for PoolStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "memory pool: {} allocations, {} hits and {} misses ({:.1}% hit rate); \
             {} live blocks ({} bytes), {} cached blocks ({} bytes); \
             {} backend allocations and {} backend frees; \
             cache released {} times, {} out-of-memory retries.",
            self.hits + self.misses,
            self.hits,
            self.misses,
            self.hit_rate() * 100.0,
            self.blocks_live,
            self.bytes_live,
            self.blocks_cached,
            self.bytes_cached,
            self.backend_allocs,
            self.backend_frees,
            self.cache_releases,
            self.oom_retries,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sum_and_display() {
        let mut a = PoolStats {
            hits: 3,
            misses: 1,
            ..Default::default()
        };
        a += PoolStats {
            hits: 1,
            misses: 3,
            bytes_cached: 64,
            ..Default::default()
        };
        assert_eq!((a.hits, a.misses, a.bytes_cached), (4, 4, 64));
        assert_eq!(a.hit_rate(), 0.5);
        let text = a.to_string();
        assert!(
            text.contains("4 hits and 4 misses (50.0% hit rate)"),
            "{text}"
        );
        assert_eq!(PoolStats::default().hit_rate(), 0.0);
    }
}
