//! The shared device memory manager.
//!
//! One [`MemoryManager`] serves every backend. It sits between `olMemAlloc`/`olMemFree`
//! and each device's raw [`Device::allocate`](crate::plugin::Device::allocate) /
//! [`Device::free`](crate::plugin::Device::free):
//!
//! * Requests up to the pool threshold ([`PoolConfig::threshold`], default 1 MiB) are
//!   rounded up to a power-of-two size class (64 B, 128 B, ..., threshold) and kept on a
//!   per-(device, kind, class) free list when freed, so repeated alloc/free of one size
//!   reaches the backend only once. Larger requests go straight to the backend, and
//!   straight back on free. Threshold 0 disables pooling.
//! * When the backend answers `OutOfResources`, the device's cache is released and the
//!   allocation retried once.
//! * Every live allocation is recorded (base, requested size, kind, device) in a global,
//!   sharded registry, so a free or an info query needs only an address; interior
//!   pointers are found through an ordered index of backend blocks.
//! * Hits, misses, bytes cached and live, backend calls and cache releases are counted
//!   per device; see [`PoolStats`].
//!
//! Locks: per (device, kind, size class) a few stripes (one per CPU, at most 8), each a
//! free list with its own lock, a thread using its home stripe; and 64 registry shards
//! chosen by a hash of the address. Each lock sits on its own cache line, so threads
//! allocating different sizes, or the same size, rarely wait for each other. Counters of
//! pooled classes are plain integers updated under the stripe lock. A cached alloc+free
//! pair costs about 36 ns (`cargo bench --bench memory_pool`).
//!
//! The manager has no `Drop`: the runtime calls [`MemoryManager::shutdown`] at teardown,
//! while the backends are still loaded.

#![forbid(unsafe_code)]

mod block_index;
mod config;
mod manager;
mod padded;
mod pool;
mod registry;
mod size_class;
mod stats;

pub use config::{
    PoolConfig, DEFAULT_THRESHOLD, LIBOMPTARGET_THRESHOLD_ENV, STATS_ENV, THRESHOLD_ENV,
};
pub use manager::MemoryManager;
pub use registry::AllocationInfo;
pub use size_class::{SizeClasses, MIN_BLOCK};
pub use stats::PoolStats;
