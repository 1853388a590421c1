//! What every layer stands on, from the C API down to each backend: errors, the trace
//! and validation switches, the worker pool, and the loader of vendor libraries. It imports nothing of this crate, so
//! any module may import it without a circle.

pub mod error;
pub mod flags;
pub mod vendor_library;
pub mod worker_pool;
