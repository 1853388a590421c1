//! The AMDGPU platform: every GPU agent with kernel dispatch that the HSA runtime
//! (`libhsa-runtime64.so.1`, opened at run time) reports.
//!
//! - `hsa` opens the library and resolves the entry points; `calls` wraps them safely;
//!   `ffi` holds the C types and constants (checked against the headers by a test).
//! - `agents` finds the GPU and CPU agents and sorts their memory pools; `facts` reads
//!   a GPU's info and answers `olGetDeviceInfo`; `device` is the `plugin::Device`;
//!   `placement` puts device memory at an address (ROCm 6's virtual memory management).
//! - `program` and `kernel`: code objects in HSA executables, kernels by symbol.
//! - `queue` (AQL rings), `packet` (packet encoding), `kernarg` (argument segments),
//!   `signal` (pooled signals), `buffers` (kernarg, staging, locked memory),
//!   `copy_plan`, `host_step` and `stream`: the asynchronous streams and events.
//! - `fault`: failed packets and GPU memory faults become errors of the next sync.
//!
//! Without the library, or where `hsa_init` fails (no `/dev/kfd`), the platform has no
//! devices and `OFFLOAD_TRACE=1` says why; nothing here panics or fails `olInit`.

pub mod agents;
pub mod buffers;
pub mod calls;
pub mod copy_plan;
pub mod device;
pub mod facts;
pub mod fault;
pub mod ffi;
pub mod host_step;
pub mod hsa;
pub mod kernarg;
pub mod kernel;
pub mod packet;
mod placement;
pub mod program;
pub mod queue;
pub mod recycler;
pub mod signal;
pub mod stream;

pub use device::AmdgpuDevice;
pub use hsa::{Hsa, LIBRARY};

use crate::plugin::foundation::flags::trace;
use crate::plugin::{self, Backend};
use agents::Agents;
use std::path::PathBuf;
use std::sync::Arc;

pub struct AmdgpuPlugin {
    /// `None`: the process's runtime (`OFFLOAD_HSA_LIBRARY` or `libhsa-runtime64.so.1`).
    library: Option<PathBuf>,
}

impl AmdgpuPlugin {
    /// The platform of the process's HSA runtime, opened when devices are first asked for.
    pub fn new() -> AmdgpuPlugin {
        AmdgpuPlugin { library: None }
    }

    /// The platform of the runtime at `path`, opened for this plugin alone (for tests).
    pub fn with_library(path: impl Into<PathBuf>) -> AmdgpuPlugin {
        AmdgpuPlugin {
            library: Some(path.into()),
        }
    }

    pub fn hsa(&self) -> Result<Arc<Hsa>, String> {
        match &self.library {
            None => Hsa::global(),
            Some(path) => Hsa::open(path).map(Arc::new),
        }
    }

    /// The devices, or why there are none (a sentence for the trace).
    pub fn open_devices(&self) -> Result<Vec<AmdgpuDevice>, String> {
        let hsa = self.hsa()?;
        let agents = Agents::find(&hsa)?;
        let mut devices = Vec::with_capacity(agents.gpus.len());
        for ordinal in 0..agents.gpus.len() {
            match AmdgpuDevice::open(hsa.clone(), &agents, ordinal) {
                Ok(d) => devices.push(d),
                // One unusable GPU does not hide the others.
                Err(e) => trace(|| format!("AMDGPU: skipping GPU agent {ordinal}: {e}")),
            }
        }
        if devices.is_empty() {
            return Err("no GPU agent could be opened".into());
        }
        Ok(devices)
    }
}

impl Default for AmdgpuPlugin {
    fn default() -> Self {
        AmdgpuPlugin::new()
    }
}

/// The trace line of a platform without devices.
pub fn no_devices_message(reason: &str) -> String {
    plugin::no_devices_message("AMDGPU", reason)
}

impl plugin::Plugin for AmdgpuPlugin {
    fn backend(&self) -> Backend {
        Backend::Amdgpu
    }

    fn name(&self) -> String {
        String::from("AMDGPU")
    }

    fn vendor(&self) -> String {
        String::from("Advanced Micro Devices, Inc.")
    }

    /// The HSA version the runtime implements ("1.1"); "unknown" without one.
    fn version(&self) -> String {
        self.hsa()
            .map(|h| format!("{}.{}", h.version().0, h.version().1))
            .unwrap_or_else(|_| String::from("unknown"))
    }

    fn devices(&self) -> Vec<Arc<dyn plugin::Device>> {
        plugin::opened_devices("AMDGPU", self.open_devices())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::Plugin;

    #[test]
    fn a_missing_library_means_no_devices_and_says_why() {
        let plugin = AmdgpuPlugin::with_library("/nonexistent/libhsa-runtime64.so.1");
        assert!(plugin.devices().is_empty());
        let reason = plugin
            .open_devices()
            .err()
            .expect("no devices without a library");
        assert!(
            reason.contains("/nonexistent/libhsa-runtime64.so.1"),
            "{reason}"
        );
        assert_eq!(
            no_devices_message(&reason),
            format!("AMDGPU: no devices: {reason}")
        );
        assert_eq!(plugin.version(), "unknown");
        assert_eq!(plugin.backend(), Backend::Amdgpu);
        assert_eq!(plugin.name(), "AMDGPU");
    }
}
