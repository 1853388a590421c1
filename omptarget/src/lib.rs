//! libomptarget on liboffload: LLVM's `libomptarget` ABI (the `__tgt_*` entry points
//! clang emits calls to, and the `omp_target_*` device API), implemented over
//! liboffload's C API alone, so an OpenMP offload binary built by clang runs unchanged
//! on liboffload's devices. One static archive, two shared libraries: CMake links
//! `libomptarget.so.19.1` (for clang 19's binaries) and `libomptarget.so.22.1` (clang
//! 22's) from it, each with a version script exporting exactly that LLVM's functions.
//!
//! - [`abi`] — the C structures and map-type flags clang and libomp pass in.
//! - [`entries`] — the host entry table, in clang 19's or clang 22's layout.
//! - [`ol`] — the calls into liboffload (every device operation goes through here).
//! - [`registry`] — registered binary descriptors and the OpenMP device list.
//! - [`mapping`] — the per-device mapping table (host range -> device memory, counts).
//! - [`data`] — `target data` / `enter` / `exit` semantics over an argument list.
//! - [`update`] — `target update`.
//! - [`mapper`] — `declare mapper` expansion.
//! - [`attach`] — clang 22's deferred pointer attachment.
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
//! - [`device_uid`] — OpenMP 6.0's device UIDs (LLVM 22's exports).
//! - [`policy`] — `OMP_TARGET_OFFLOAD` and LLVM's fatal messages; [`boundary`] — the
//!   panic boundary every exported function runs in.
//! - [`info`] — `LIBOMPTARGET_INFO`'s lines.
//! - [`profile`] — `LIBOMPTARGET_PROFILE`'s timeline.
//! - [`not_implemented`] — OMPT and LLVM 22's newest calls, failing loudly.

pub mod abi;
pub mod associate;
pub mod attach;
pub mod boundary;
pub mod data;
pub mod deps;
pub mod device_api;
pub mod device_info;
pub mod device_uid;
pub mod entries;
pub mod gpu_load;
pub mod host_memory;
pub mod info;
pub mod interface;
pub mod interop;
pub mod interop_object;
pub mod kernel;
pub mod kernel_env;
pub mod kernel_language;
pub mod kernel_params;
pub mod launch_plan;
pub mod legacy_target;
pub mod mapper;
pub mod mapping;
pub mod mapping_dump;
pub mod memcpy_async;
pub mod memcpy_rect;
pub mod memset;
pub mod not_implemented;
pub mod nowait;
pub mod ol;
pub mod policy;
pub mod profile;
pub mod record_replay;
pub mod registry;
pub mod requires;
pub mod update;
