//! The plugin interface: the traits every backend implements.
//!
//! A plugin enumerates devices; a device allocates raw memory, copies, answers info
//! queries, loads images and creates streams (`stream`), which run copies, fills, kernel
//! launches and host work asynchronously and record and wait for events. Every method a backend may lack has
//! a default that answers `Unsupported`, so a backend implements only what it can.
//! Bookkeeping shared by all backends (pooling, handle tables, validation) lives in
//! `runtime` and `memory`, not here.

pub mod arg_bytes;
pub mod device_stream;
pub mod foundation;
pub mod fp;
pub mod host_run_stream;
pub mod launch_check;
mod program;
mod stream;
mod types;

pub use launch_check::{check_grid, check_launch, LaunchLimits};
pub use program::{
    own_kernel, GlobalVariable, Kernel, KernelArgs, LaunchConfig, Program, SymbolKind,
};
pub use stream::{
    catch_panic, dispatch_op, keep_first_failure, launch_now, own_event, own_event_arc,
    run_host_work, CopyDirection, Guard, HostWork, OpHooks, Stream, StreamEvent, StreamOp,
};
pub use types::{AllocKind, Backend, DeviceInfo, DeviceType, InfoValue, EXTENSION_BASE};

use crate::plugin::foundation::error::{Error, Result};
use std::sync::Arc;

/// One backend: CUDA, AMDGPU, host, MPI, ...
pub trait Plugin: Send + Sync {
    fn backend(&self) -> Backend;
    /// The platform's NAME.
    fn name(&self) -> String;
    fn vendor(&self) -> String;
    fn version(&self) -> String;
    /// The devices found. Empty (never a panic) when the vendor library or hardware is
    /// missing; the plugin says why through `runtime::trace`.
    fn devices(&self) -> Vec<Arc<dyn Device>>;
}

/// One device of a plugin.
pub trait Device: Send + Sync {
    fn device_type(&self) -> DeviceType;

    /// Answers one info query. A value the backend cannot know is `Unsupported`.
    fn info(&self, key: DeviceInfo) -> Result<InfoValue> {
        Err(unsupported(&format!("device info {key:?}")))
    }

    /// Allocates `size` bytes aligned to at least 64 bytes. Out of memory is
    /// `OutOfResources`, so the memory manager can release its cache and retry.
    fn allocate(&self, size: usize, kind: AllocKind) -> Result<usize> {
        let _ = (size, kind);
        Err(unsupported("memory allocation"))
    }

    /// Allocates `size` bytes at exactly `at` (a recorded launch's memory, replayed where
    /// it was), or fails: `InvalidValue` when the range is taken. Freed by `free`.
    fn allocate_at(&self, at: usize, size: usize, kind: AllocKind) -> Result<usize> {
        let _ = (at, size, kind);
        Err(unsupported("placing memory at an address"))
    }

    /// Frees what `allocate_at` returned; `size` and `kind` are those it was given.
    fn free_placed(&self, addr: usize, size: usize, kind: AllocKind) -> Result<()> {
        self.free(addr, size, kind)
    }

    /// Frees what `allocate` returned; `size` and `kind` are those it was given.
    fn free(&self, addr: usize, size: usize, kind: AllocKind) -> Result<()> {
        let _ = (addr, size, kind);
        Err(unsupported("memory free"))
    }

    /// Copies `size` bytes from host memory at `src` to this device's memory at `dst`.
    fn copy_to_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        let _ = (dst, src, size);
        Err(unsupported("host-to-device copy"))
    }

    /// Copies `size` bytes from this device's memory at `src` to host memory at `dst`.
    fn copy_from_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        let _ = (dst, src, size);
        Err(unsupported("device-to-host copy"))
    }

    /// Copies within this device's memory.
    fn copy_within_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        let _ = (dst, src, size);
        Err(unsupported("device-to-device copy"))
    }

    /// Copies from this device's memory at `src` to the memory of another device of the
    /// same backend at `dst` directly; `Unsupported` where the backend cannot (the
    /// runtime then stages the copy through host memory).
    fn copy_to_peer(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        let _ = (dst, src, size);
        Err(unsupported("device-to-device copy between devices"))
    }

    /// Fills `size` bytes at `dst` (device memory) with repetitions of `pattern`.
    fn fill(&self, dst: usize, pattern: &[u8], size: usize) -> Result<()> {
        let _ = (dst, pattern, size);
        Err(unsupported("memory fill"))
    }

    /// Page-locks host memory for fast transfers; returns the address the device uses.
    fn lock_host_memory(&self, addr: usize, size: usize) -> Result<usize> {
        let _ = (addr, size);
        Err(unsupported("host memory registration"))
    }

    /// Undoes `lock_host_memory`.
    fn unlock_host_memory(&self, addr: usize) -> Result<()> {
        let _ = addr;
        Err(unsupported("host memory unregistration"))
    }

    /// Says whether this device can run `image`, and if not, why (a sentence naming both
    /// the image and the device).
    fn check_image(&self, image: &[u8]) -> Result<()> {
        let _ = image;
        Err(unsupported("loading device images"))
    }

    /// Loads `image` (already accepted by `check_image`, unless `load_checks_image`).
    /// The plugin keeps its own copy.
    fn load_program(&self, image: &[u8]) -> Result<Arc<dyn Program>> {
        let _ = image;
        Err(unsupported("loading device images"))
    }

    /// Whether `load_program` makes every check `check_image` makes, refusing an image
    /// with the same error: then a program is loaded without `check_image` first, and
    /// the image is read once (choosing a GPU image parses it).
    fn load_checks_image(&self) -> bool {
        false
    }

    /// A new in-order stream of asynchronous work on this device.
    fn create_stream(&self) -> Result<Arc<dyn Stream>> {
        Err(unsupported("streams"))
    }
}

/// What a vendor backend reports: the devices it opened, or none, with the reason in
/// `OFFLOAD_TRACE` ("CUDA: no devices: ...").
pub fn opened_devices<D: Device + 'static>(
    backend: &str,
    opened: std::result::Result<Vec<D>, String>,
) -> Vec<Arc<dyn Device>> {
    match opened {
        Ok(devices) => {
            crate::plugin::foundation::flags::trace(|| {
                format!("{backend}: {} device(s)", devices.len())
            });
            devices
                .into_iter()
                .map(|d| Arc::new(d) as Arc<dyn Device>)
                .collect()
        }
        Err(reason) => {
            crate::plugin::foundation::flags::trace(|| no_devices_message(backend, &reason));
            Vec::new()
        }
    }
}

/// The trace line of a backend with no devices.
pub fn no_devices_message(backend: &str, reason: &str) -> String {
    format!("{backend}: no devices: {reason}")
}

/// The error a default method answers.
pub fn unsupported(what: &str) -> Error {
    Error::unsupported(format!("{what} is not supported by this backend"))
}
