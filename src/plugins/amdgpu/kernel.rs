//! A kernel of an AMDGPU program: its descriptor facts from the executable, its
//! arguments from the metadata, and the checks and sizes a launch needs. Launching is
//! the stream's (`stream.rs`); a synchronous launch is the generic one (`launch_now`:
//! a stream of the device, then a synchronize).

use super::device::DeviceShared;
use super::program::Loaded;
use crate::image::AmdgpuKernel as KernelMetadata;
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::{Kernel, KernelArgs, LaunchConfig};
use std::sync::Arc;

/// What the executable's kernel symbol says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelObject {
    pub kernel_object: u64,
    pub kernarg_size: u32,
    pub group_size: u32,
    pub private_size: u32,
    /// The kernel recurses or calls indirectly: its private size is a lower bound.
    pub dynamic_callstack: bool,
}

/// A kernel: its facts, shared.
pub struct AmdgpuKernel {
    facts: Arc<KernelFacts>,
}

struct KernelFacts {
    metadata: KernelMetadata,
    object: KernelObject,
    /// Where the explicit arguments end, per the metadata.
    explicit_size: usize,
    /// Keeps the executable loaded while the kernel exists.
    _loaded: Arc<Loaded>,
    device: Arc<DeviceShared>,
}

/// Bytes the explicit arguments span (the end of the last one).
pub fn explicit_size(metadata: &KernelMetadata) -> usize {
    metadata
        .explicit_args()
        .map(|a| (a.offset + a.size) as usize)
        .max()
        .unwrap_or(0)
}

/// Whether a C argument struct of `given` bytes matches arguments spanning `expected`
/// bytes: at least that many, and no more than the struct's trailing padding (at most
/// to the next 16 bytes, the largest alignment of a kernel argument; a kernel without
/// arguments accepts a small dummy buffer, as callers that always pass one send).
pub fn args_fit(given: usize, expected: usize) -> bool {
    given >= expected && given <= expected.next_multiple_of(16).max(16)
}

/// The work-group size that fills a compute unit for this kernel: its own limit, the
/// device's, and what the LDS allows at `shared_per_item` bytes per work-item, rounded
/// down to whole wavefronts where at least one fits.
pub fn optimal_group_size(
    kernel_max: u64,
    device_max: u32,
    lds: u64,
    shared_per_item: usize,
    wavefront: u32,
) -> usize {
    let mut n = u64::from(device_max);
    if kernel_max > 0 {
        n = n.min(kernel_max);
    }
    if shared_per_item > 0 {
        n = n.min(lds / shared_per_item as u64);
    }
    let w = u64::from(wavefront.max(1));
    if n >= w {
        n -= n % w;
    }
    n.max(1) as usize
}

impl AmdgpuKernel {
    pub fn new(
        metadata: KernelMetadata,
        object: KernelObject,
        loaded: Arc<Loaded>,
        device: Arc<DeviceShared>,
    ) -> AmdgpuKernel {
        AmdgpuKernel {
            facts: Arc::new(KernelFacts {
                explicit_size: explicit_size(&metadata),
                metadata,
                object,
                _loaded: loaded,
                device,
            }),
        }
    }

    pub fn metadata(&self) -> &KernelMetadata {
        &self.facts.metadata
    }

    pub fn object(&self) -> &KernelObject {
        &self.facts.object
    }

    pub fn device(&self) -> &Arc<DeviceShared> {
        &self.facts.device
    }
}

impl Kernel for AmdgpuKernel {
    fn name(&self) -> &str {
        &self.facts.metadata.name
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn check_args(&self, args: &KernelArgs) -> Result<()> {
        if args_fit(args.len(), self.facts.explicit_size) {
            return Ok(());
        }
        Err(Error::invalid_argument(format!(
            "kernel '{}' takes {} bytes of arguments (per its metadata: {} explicit \
             argument(s)); the launch gave {} bytes",
            self.facts.metadata.name,
            self.facts.explicit_size,
            self.facts.metadata.explicit_args().count(),
            args.len()
        )))
    }

    fn optimal_group_size(&self, shared_memory_per_item: usize) -> Result<usize> {
        let f = &self.facts.device.facts;
        Ok(optimal_group_size(
            self.facts.metadata.max_flat_workgroup_size,
            f.workgroup_max_size,
            f.lds_size
                .saturating_sub(u64::from(self.facts.object.group_size)),
            shared_memory_per_item,
            f.wavefront_size,
        ))
    }

    fn max_cooperative_groups(&self, _config: &LaunchConfig) -> Result<u32> {
        Err(Error::unsupported(
            "cooperative launches are not supported by the AMDGPU backend yet (they need a \
             cooperative HSA queue)",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_buffers_must_cover_the_explicit_arguments() {
        assert!(args_fit(12, 12));
        assert!(args_fit(16, 12), "trailing padding of a C struct");
        assert!(!args_fit(8, 12));
        assert!(!args_fit(32, 12));
        assert!(args_fit(0, 0));
        assert!(!args_fit(17, 0) && args_fit(16, 0));
        assert!(args_fit(28, 20) && !args_fit(33, 20));
    }

    #[test]
    fn group_sizes_fill_whole_wavefronts() {
        assert_eq!(optimal_group_size(256, 1024, 65536, 0, 64), 256);
        assert_eq!(optimal_group_size(0, 1024, 65536, 0, 64), 1024);
        assert_eq!(optimal_group_size(1024, 1024, 65536, 256, 64), 256);
        assert_eq!(optimal_group_size(1024, 1024, 65536, 1000, 64), 64);
        assert_eq!(optimal_group_size(1024, 1024, 65536, 4096, 32), 16);
        assert_eq!(optimal_group_size(1024, 1024, 0, 4, 64), 1);
    }
}
