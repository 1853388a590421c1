//! The CUDA platform: every NVIDIA GPU the driver (`libcuda.so.1`, opened at run time)
//! reports, each through its primary context.
//!
//! - `driver` opens the library and resolves the entry points; `calls` and
//!   `calls_exec` wrap them safely; `ffi` holds the C types and constants; `error` maps
//!   `CUresult` to our codes.
//! - `context` is a device's primary context; `facts` its readings and info answers;
//!   `device` the `plugin::Device`: memory, synchronous copies and fills (`fill` plans
//!   fills of any pattern), host registration, program loading; `placement` puts device
//!   memory at an address (virtual memory management) for `olMemAllocAt`.
//! - `program` and `kernel` are the loaded modules and their kernels; `launch` lays out
//!   the argument block a launch passes.
//! - `stream`: queues are CUDA streams, events CUDA events, host steps `cuLaunchHostFunc`.
//!
//! Without the library, without a GPU or with a driver too old, the platform has no
//! devices and `OFFLOAD_TRACE=1` says why; nothing here panics or fails `olInit`.

pub mod calls;
pub mod calls_exec;
pub mod context;
pub mod device;
pub mod driver;
pub mod error;
pub mod event;
pub mod facts;
pub mod ffi;
pub mod fill;
mod gate;
mod host_steps;
pub mod kernel;
pub mod launch;
mod placement;
pub mod program;
mod staging;
pub mod stream;

pub use context::PrimaryContext;
pub use device::CudaDevice;
pub use driver::{Driver, LIBRARY};
pub use kernel::CudaKernel;
pub use program::CudaProgram;

use crate::plugin::foundation::flags::trace;
use crate::plugin::{self, Backend};
use std::path::PathBuf;
use std::sync::Arc;

pub struct CudaPlugin {
    /// `None`: the process's driver (`OFFLOAD_CUDA_LIBRARY` or `libcuda.so.1`).
    library: Option<PathBuf>,
}

impl CudaPlugin {
    /// The platform of the process's driver, opened when devices are first asked for
    /// (so a program that selects other platforms never loads it).
    pub fn new() -> CudaPlugin {
        CudaPlugin { library: None }
    }

    /// The platform of the driver at `path`, opened for this plugin alone (for tests).
    pub fn with_library(path: impl Into<PathBuf>) -> CudaPlugin {
        CudaPlugin {
            library: Some(path.into()),
        }
    }

    /// The driver, or the reason there is none.
    pub fn driver(&self) -> Result<Arc<Driver>, String> {
        match &self.library {
            None => Driver::global(),
            Some(path) => Driver::open(path).map(Arc::new),
        }
    }

    /// The devices, or why there are none (a sentence for the trace).
    pub fn open_devices(&self) -> Result<Vec<CudaDevice>, String> {
        let driver = self.driver()?;
        let count = driver.device_count().map_err(|e| e.details.clone())?;
        if count == 0 {
            return Err("the driver reports no devices".into());
        }
        let mut devices = Vec::with_capacity(count as usize);
        for ordinal in 0..count {
            match CudaDevice::open(driver.clone(), ordinal) {
                Ok(device) => devices.push(device),
                // One unusable GPU (another process owns it exclusively, it fell off the
                // bus) does not hide the others.
                Err(e) => trace(|| format!("CUDA: skipping device {ordinal}: {e}")),
            }
        }
        enable_peer_access(&devices);
        Ok(devices)
    }
}

impl Default for CudaPlugin {
    fn default() -> Self {
        CudaPlugin::new()
    }
}

/// Lets every GPU reach every other's memory directly where the hardware can (NVLink or
/// PCIe peer to peer), once, when the devices are opened: copies between two GPUs then go
/// device to device instead of through host memory. Where it cannot, such copies still
/// work, staged by the driver.
fn enable_peer_access(devices: &[CudaDevice]) {
    for a in devices {
        for b in devices {
            if std::ptr::eq(a, b) {
                continue;
            }
            let (ca, cb) = (a.context(), b.context());
            let can = ca.driver().can_access_peer(ca.device(), cb.device());
            if !matches!(can, Ok(true)) {
                continue;
            }
            let enabled = ca
                .make_current()
                .and_then(|_current| ca.driver().enable_peer_access(cb.handle()));
            if let Err(e) = enabled {
                trace(|| {
                    format!(
                        "CUDA: peer access {:?} -> {:?}: {e}",
                        ca.device(),
                        cb.device()
                    )
                });
            }
        }
    }
}

/// The trace line of a platform without devices.
pub fn no_devices_message(reason: &str) -> String {
    plugin::no_devices_message("CUDA", reason)
}

impl plugin::Plugin for CudaPlugin {
    fn backend(&self) -> Backend {
        Backend::Cuda
    }

    fn name(&self) -> String {
        String::from("CUDA")
    }

    fn vendor(&self) -> String {
        String::from(facts::VENDOR)
    }

    /// The driver's CUDA version ("12.8"); "unknown" without a driver.
    fn version(&self) -> String {
        self.driver()
            .map(|d| facts::driver_version_string(d.version()))
            .unwrap_or_else(|_| String::from("unknown"))
    }

    fn devices(&self) -> Vec<Arc<dyn plugin::Device>> {
        plugin::opened_devices("CUDA", self.open_devices())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::Plugin;

    #[test]
    fn a_missing_library_means_no_devices_and_says_why() {
        let plugin = CudaPlugin::with_library("/nonexistent/libcuda.so.1");
        assert!(plugin.devices().is_empty());
        let reason = plugin
            .open_devices()
            .err()
            .expect("no devices without a library");
        assert!(reason.contains("/nonexistent/libcuda.so.1"), "{reason}");
        assert_eq!(
            no_devices_message(&reason),
            format!("CUDA: no devices: {reason}")
        );
        assert_eq!(plugin.version(), "unknown");
        assert_eq!(plugin.backend(), Backend::Cuda);
        assert_eq!(plugin.name(), "CUDA");
        assert_eq!(plugin.vendor(), "NVIDIA Corporation");
    }
}
