//! liboffload: a Rust implementation of LLVM Offload.
//!
//! The C API lives in [`capi`] (and in `include/offload/liboffload.h`, generated from it);
//! [`runtime`] is the safe, backend-neutral core, also usable from Rust.

pub mod capi;
pub mod image;
pub mod memory;
pub mod plugin;
pub mod plugins;
pub mod record;
pub mod runtime;
