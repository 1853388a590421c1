//! The OpenMP API functions programs call themselves (`omp_target_*`, device numbers,
//! host and shared memory, device UIDs, `ompx_dump_mapping_tables`): each runs in the
//! panic boundary.

pub mod associate;
pub mod device_api;
pub mod device_uid;
pub mod host_memory;
pub mod mapping_dump;
pub mod memcpy_async;
pub mod memcpy_rect;
pub mod memset;
