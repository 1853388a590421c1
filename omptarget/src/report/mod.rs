//! What every layer reports through, in LLVM's words: `OMP_TARGET_OFFLOAD` and fatal
//! messages, `LIBOMPTARGET_INFO` lines, the `LIBOMPTARGET_PROFILE` timeline, and the
//! panic boundary every exported function runs in. Stands on the ABI alone.

pub mod boundary;
pub mod info;
pub mod policy;
pub mod profile;
