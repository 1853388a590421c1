//! The kernarg segment of one launch, laid out as the kernel's metadata says.
//! (Interface fixed first; the builder is the next commit.)

use crate::image::AmdgpuKernel;
use crate::runtime::error::{Error, ErrorCode, Result};

/// The launch, as the hidden arguments describe it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernargLaunch {
    pub dimensions: u32,
    pub num_groups: [u32; 3],
    pub group_size: [u32; 3],
    pub dynamic_shared: u32,
}

/// The bytes to allocate for `kernel`'s segment.
pub fn kernarg_size(kernel: &AmdgpuKernel) -> usize {
    kernel.kernarg_segment_size as usize
}

/// The segment: `explicit` (the launch's argument buffer) then the hidden arguments.
pub fn build_kernarg(
    _kernel: &AmdgpuKernel,
    _explicit: &[u8],
    _launch: &KernargLaunch,
) -> Result<Vec<u8>> {
    Err(Error::new(
        ErrorCode::Unimplemented,
        "the kernarg builder is not built yet",
    ))
}
