//! The backends, one folder each.

pub mod amdgpu;
pub mod cuda;
pub mod global_ctors;
pub mod host;
pub mod remote;

use crate::plugin::Plugin;

/// Every backend this build knows. Each reports zero devices when its vendor library or
/// hardware is missing.
pub fn available() -> Vec<Box<dyn Plugin>> {
    vec![
        Box::new(host::HostPlugin),
        Box::new(cuda::CudaPlugin::new()),
        Box::new(amdgpu::AmdgpuPlugin::new()),
        Box::new(remote::RemotePlugin),
    ]
}
