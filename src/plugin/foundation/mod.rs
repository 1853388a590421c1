//! What every layer stands on, from the C API down to each backend: errors, the mirrors of
//! C enumerations, the trace and validation switches, the worker pool, the loader of vendor
//! libraries, the page size, addresses far from any process's own, a hasher for our own
//! numbers, and byte copies that avoid memcpy's worst case. It imports nothing of this
//! crate, so any module may import it without a circle.

pub mod aligned_bytes;
pub mod c_enum;
pub mod copy;
pub mod error;
pub mod far_address;
pub mod flags;
pub mod helper_lag;
pub mod idle_core;
pub mod int_hash;
pub mod page;
pub mod panic_text;
pub mod parallel;
pub mod placed_runs;
pub mod vendor_library;
pub mod worker_pool;
