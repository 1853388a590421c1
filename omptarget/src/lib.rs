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
//! - [`data`] — `target data` / `enter` / `exit` / `update` semantics over an argument list.
//! - [`kernel`] — `__tgt_target_kernel`.
//! - [`device_api`] — `omp_get_num_devices`, `omp_target_alloc`, ...
//! - [`device_uid`] — OpenMP 6.0's device UIDs (LLVM 22's exports).
//! - [`policy`] — `OMP_TARGET_OFFLOAD` and LLVM's fatal messages.
//! - [`not_implemented`] — the rest of LLVM 19's and 22's exports, failing loudly.

pub mod abi;
pub mod data;
pub mod device_api;
pub mod device_uid;
pub mod entries;
pub mod interface;
pub mod kernel;
pub mod mapping;
pub mod not_implemented;
pub mod ol;
pub mod policy;
pub mod registry;
