//! The AMDGPU platform: GPUs of the HSA runtime (`libhsa-runtime64.so.1`, opened at run
//! time). Work in progress (issue 12): the packet and kernel-argument builders first.

pub mod kernarg;
pub mod packet;
