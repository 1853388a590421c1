//! What LLVM's plugins do, done through liboffload's C API: the `ol*` calls (every
//! device operation of the crate), loading a GPU image (device environment, kernel
//! environments), the queues kept per device, and interop handles.

pub mod device_memory;
pub mod gpu_limits;
pub mod gpu_load;
pub mod interop_object;
pub mod kernel_env;
pub mod ol;
pub mod queue_pool;
pub mod rr_region;
