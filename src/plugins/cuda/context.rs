//! A device's primary context: the one context per device that the CUDA runtime also
//! uses, so memory and modules are shared with CUDA code in the same process.
//!
//! Retained once per `CudaDevice` and released when the last holder (the device, its
//! programs, later its streams) drops it. Driver calls act on the context current on the
//! calling thread, so each entry point makes this one current first (`make_current`):
//! the threads calling in are the application's, and anything may have changed theirs.

use super::driver::Driver;
use super::ffi::{CuContext, CuDevice};
use crate::runtime::config::trace;
use crate::runtime::error::Result;
use std::sync::Arc;

pub struct PrimaryContext {
    driver: Arc<Driver>,
    device: CuDevice,
    context: CuContext,
}

impl PrimaryContext {
    /// Retains `device`'s primary context (creating it the first time; a few hundred
    /// milliseconds on a large GPU).
    pub fn retain(driver: Arc<Driver>, device: CuDevice) -> Result<PrimaryContext> {
        let context = driver.primary_ctx_retain(device)?;
        Ok(PrimaryContext {
            driver,
            device,
            context,
        })
    }

    pub fn driver(&self) -> &Arc<Driver> {
        &self.driver
    }

    pub fn device(&self) -> CuDevice {
        self.device
    }

    /// The `CUcontext` handle (for `cuMemcpyPeerAsync`, `cuCtxEnablePeerAccess`).
    pub fn handle(&self) -> CuContext {
        self.context
    }

    /// Makes this context current on the calling thread. Reading the current context is
    /// a thread-local read in the driver, cheaper than setting it each time.
    #[inline]
    pub fn make_current(&self) -> Result<()> {
        if self.driver.current_context()? != self.context {
            self.driver.set_current_context(self.context)?;
        }
        Ok(())
    }
}

impl Drop for PrimaryContext {
    fn drop(&mut self) {
        if let Err(e) = self.driver.primary_ctx_release(self.device) {
            trace(|| {
                format!(
                    "CUDA: releasing the primary context of device {}: {e}",
                    self.device
                )
            });
        }
    }
}
