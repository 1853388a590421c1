//! The entry points clang-compiled code and libomp call (`__tgt_*`, the kernel-language
//! `llvmLaunchKernel`, OMPT's connection): each runs in the panic boundary and hands
//! its work to the layers below.

pub mod device_info;
pub mod interface;
pub mod interop;
pub mod kernel_language;
pub mod legacy_target;
pub mod mapper_components;
pub mod record_replay;
pub mod runtime_hooks;
pub mod target_kernel;
