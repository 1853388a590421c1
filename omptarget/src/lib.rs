//! libomptarget on liboffload: LLVM's `libomptarget` ABI (the `__tgt_*` entry points
//! clang emits calls to, and the `omp_target_*` device API), implemented over
//! liboffload's C API alone, so an OpenMP offload binary built by clang runs unchanged
//! on liboffload's devices. One static archive, two shared libraries: CMake links
//! `libomptarget.so.19.1` (for clang 19's binaries) and `libomptarget.so.22.1` (clang
//! 22's) from it, each with a version script exporting exactly that LLVM's functions.
//!
//! Layers, from the bottom up; a folder names only folders below it (checked by
//! `tests/architecture_layers.rs` at the workspace root, drawn in docs/ARCHITECTURE.md):
//! - [`abi`] — the C structures, entry tables and libomp calls.
//! - [`report`] — policy and fatal messages, `LIBOMPTARGET_INFO`, profile, the panic boundary.
//! - [`plugin`] — the `ol*` calls, GPU image loading, kernel environments.
//! - [`mapping`] — the mapping table and data movement.
//! - [`devices`] — registered binaries and the OpenMP device list.
//! - [`launch`] — target regions, launch sizes, `nowait`.
//! - [`entry`], [`omp_api`] — the exported functions.

pub mod abi;
pub mod devices;
pub mod entry;
pub mod launch;
pub mod mapping;
pub mod omp_api;
pub mod ompt;
pub mod plugin;
pub mod report;
