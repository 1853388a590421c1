//! libomptarget on liboffload: LLVM 19's `libomptarget.so.19.1` ABI (the `__tgt_*`
//! entry points clang emits calls to, and the `omp_target_*` device API), implemented
//! over liboffload's C API alone, so an OpenMP offload binary built by clang runs
//! unchanged on liboffload's devices.
//!
//! - [`abi`] — the C structures and map-type flags clang and libomp pass in.
//! - [`ol`] — the calls into liboffload (every device operation goes through here).
//! - [`registry`] — registered binary descriptors and the OpenMP device list.
//! - [`mapping`] — the per-device mapping table (host range -> device memory, counts).
//! - [`data`] — `target data` / `enter` / `exit` semantics over an argument list.
//! - [`update`] — `target update`.
//! - [`mapper`] — `declare mapper` expansion.
//! - [`kernel`] — `__tgt_target_kernel`.
//! - [`device_api`] — `omp_get_num_devices`, `omp_target_alloc`, ...
//! - [`memcpy_rect`], [`memcpy_async`], [`memset`] — the other copies and fills.
//! - [`deps`] — waiting for OpenMP dependences through libomp.
//! - [`associate`] — `omp_target_associate_ptr` / `omp_target_disassociate_ptr`.
//! - [`host_memory`] — host and shared allocations, locking host memory.
//! - [`mapping_dump`], [`device_info`] — `ompx_dump_mapping_tables`, `__tgt_print_device_info`.
//! - [`interop`] — the `interop` construct and its property queries.
//! - [`legacy_target`] — the deprecated `__tgt_target*` region entry points.
//! - [`record_replay`] — kernel record and replay (refused).
//! - [`policy`] — `OMP_TARGET_OFFLOAD` and LLVM's fatal messages.
//! - [`not_implemented`] — the rest of LLVM 19's exports, failing loudly.

pub mod abi;
pub mod associate;
pub mod data;
pub mod deps;
pub mod device_api;
pub mod device_info;
pub mod host_memory;
pub mod info;
pub mod interface;
pub mod interop;
pub mod kernel;
pub mod legacy_target;
pub mod mapper;
pub mod mapping;
pub mod mapping_dump;
pub mod memcpy_async;
pub mod memcpy_rect;
pub mod memset;
pub mod not_implemented;
pub mod ol;
pub mod policy;
pub mod record_replay;
pub mod registry;
pub mod update;
