//! One NVIDIA GPU: its primary context, its facts, raw memory, synchronous copies and
//! fills, host memory registration and program loading.
//!
//! Every entry point first makes the device's primary context current on the calling
//! thread. The synchronous operations run on the context's legacy NULL stream and wait
//! for it where the driver would otherwise return early (device-to-device copies,
//! fills, and copies from pageable host memory, which return once the data is staged).

use super::context::PrimaryContext;
use super::driver::Driver;
use super::facts::DeviceFacts;
use super::ffi::{CuDevicePtr, CuStream, MEMHOSTREGISTER_DEVICEMAP, MEMHOSTREGISTER_PORTABLE};
use super::fill::{plan_fill, repeated, FillStep};
use super::placement::Placements;
use super::program::{CudaProgram, Module};
use crate::image::{select_for, DeviceTarget};
use crate::plugin::foundation::error::Result;
use crate::plugin::{self, AllocKind, DeviceInfo, DeviceType, InfoValue, Program};
use std::sync::Arc;

pub struct CudaDevice {
    context: Arc<PrimaryContext>,
    facts: Arc<DeviceFacts>,
    /// The device as image selection sees it (made once: its label is formatted).
    target: DeviceTarget,
    /// Memory placed at an address (`allocate_at`).
    placements: Placements,
}

impl CudaDevice {
    /// The device of driver ordinal `ordinal`: its facts read, its primary context
    /// retained.
    pub fn open(driver: Arc<Driver>, ordinal: i32) -> Result<CudaDevice> {
        let device = driver.device(ordinal)?;
        let facts = DeviceFacts::read(&driver, ordinal, device)?;
        let context = PrimaryContext::retain(driver, device)?;
        Ok(CudaDevice {
            context: Arc::new(context),
            target: DeviceTarget::cuda(facts.sm()).with_label(facts.label()),
            facts: Arc::new(facts),
            placements: Placements::default(),
        })
    }

    /// The primary context (make it current before calling the driver directly).
    pub fn context(&self) -> &Arc<PrimaryContext> {
        &self.context
    }

    pub fn driver(&self) -> &Arc<Driver> {
        self.context.driver()
    }

    pub fn facts(&self) -> &Arc<DeviceFacts> {
        &self.facts
    }

    /// The device as image selection sees it.
    pub fn target(&self) -> &DeviceTarget {
        &self.target
    }

    /// Waits for the legacy NULL stream (the synchronous operations' stream).
    fn wait(&self, what: &str) -> Result<()> {
        self.driver()
            .stream_synchronize(CuStream::NULL)
            .map_err(|e| e.context(what))
    }

    fn run_fill_step(&self, step: &FillStep, pattern: &[u8]) -> Result<()> {
        let driver = self.driver();
        match *step {
            FillStep::Set8 { dst, value, count } => driver.memset_d8(dst, value, count),
            FillStep::Set16 { dst, value, count } => driver.memset_d16(dst, value, count),
            FillStep::Set32 { dst, value, count } => driver.memset_d32(dst, value, count),
            FillStep::Upload { dst, size } => {
                // Staged by the driver before the call returns: the buffer may go.
                let seed = repeated(pattern, size);
                driver.memcpy(dst as usize, seed.as_ptr() as usize, size)
            }
            FillStep::Replicate { dst, src, size } => {
                driver.memcpy(dst as usize, src as usize, size)
            }
        }
    }
}

fn kind_name(kind: AllocKind) -> &'static str {
    match kind {
        AllocKind::Host => "pinned host",
        AllocKind::Device => "device",
        AllocKind::Managed => "managed",
    }
}

impl plugin::Device for CudaDevice {
    fn device_type(&self) -> DeviceType {
        DeviceType::Gpu
    }

    fn info(&self, key: DeviceInfo) -> Result<InfoValue> {
        match key {
            // A CUdevice is the driver's ordinal (an int), handed over pointer-sized.
            DeviceInfo::NativeHandle => Ok(InfoValue::Handle(self.context.device() as usize)),
            DeviceInfo::NativeContext => Ok(InfoValue::Handle(self.context.handle().0 as usize)),
            _ => self.facts.info(key),
        }
    }

    fn allocate(&self, size: usize, kind: AllocKind) -> Result<usize> {
        let _current = self.context.make_current()?;
        let driver = self.driver();
        let address = match kind {
            AllocKind::Device => driver.mem_alloc(size).map(|p| p as usize),
            AllocKind::Host => driver.mem_alloc_host(size),
            AllocKind::Managed => driver.mem_alloc_managed(size).map(|p| p as usize),
        };
        address.map_err(|e| {
            e.context(format!(
                "allocating {size} bytes of {} memory on {}",
                kind_name(kind),
                self.facts.label()
            ))
        })
    }

    fn allocate_at(&self, at: usize, size: usize, kind: AllocKind) -> Result<usize> {
        if kind != AllocKind::Device {
            return Err(crate::plugin::foundation::error::Error::unsupported(
                format!(
                    "only device memory can be placed at an address on {}, not {} memory",
                    self.facts.label(),
                    kind_name(kind)
                ),
            ));
        }
        let _current = self.context.make_current()?;
        self.placements
            .place(self.driver(), self.context.device(), at, size)
            .map(|()| at)
            .map_err(|e| {
                e.context(format!(
                    "placing {size} bytes at {at:#x} on {}",
                    self.facts.label()
                ))
            })
    }

    fn free_placed(&self, addr: usize, _size: usize, _kind: AllocKind) -> Result<()> {
        let _current = self.context.make_current()?;
        // Unmapping does not wait for the device: work still using the memory ends first.
        self.driver().context_synchronize()?;
        self.placements
            .remove(self.driver(), self.context.device(), addr)
    }

    fn free(&self, addr: usize, _size: usize, kind: AllocKind) -> Result<()> {
        let _current = self.context.make_current()?;
        let driver = self.driver();
        match kind {
            AllocKind::Device | AllocKind::Managed => driver.mem_free(addr as CuDevicePtr),
            AllocKind::Host => driver.mem_free_host(addr),
        }
    }

    fn copy_to_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        let _current = self.context.make_current()?;
        self.driver().memcpy(dst, src, size)?;
        self.wait("copying to the device")
    }

    fn copy_from_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        let _current = self.context.make_current()?;
        // Returns once the data is in host memory.
        self.driver().memcpy(dst, src, size)
    }

    fn copy_within_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        let _current = self.context.make_current()?;
        self.driver().memcpy(dst, src, size)?;
        self.wait("copying within the device")
    }

    /// Unified addressing names both GPUs' memory; the driver copies peer to peer where
    /// access is enabled (see `enable_peer_access`), else through the host itself.
    fn copy_to_peer(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        let _current = self.context.make_current()?;
        self.driver().memcpy(dst, src, size)?;
        self.wait("copying to another GPU")
    }

    fn fill(&self, dst: usize, pattern: &[u8], size: usize) -> Result<()> {
        let _current = self.context.make_current()?;
        for step in plan_fill(dst as CuDevicePtr, pattern, size) {
            self.run_fill_step(&step, pattern)?;
        }
        self.wait("filling device memory")
    }

    fn lock_host_memory(&self, addr: usize, size: usize) -> Result<usize> {
        let _current = self.context.make_current()?;
        let driver = self.driver();
        driver.host_register(
            addr,
            size,
            MEMHOSTREGISTER_PORTABLE | MEMHOSTREGISTER_DEVICEMAP,
        )?;
        // Under unified addressing (every 64-bit platform CUDA supports) the device uses
        // the host address itself; the driver says so where it can.
        Ok(driver
            .pointer_device_address(addr as CuDevicePtr)
            .map_or(addr, |a| a as usize))
    }

    fn unlock_host_memory(&self, addr: usize) -> Result<()> {
        let _current = self.context.make_current()?;
        self.driver().host_unregister(addr)
    }

    fn check_image(&self, image: &[u8]) -> Result<()> {
        select_for(image, self.target()).map(|_| ())
    }

    /// `load_program` chooses the image with the same `select_for`.
    fn load_checks_image(&self) -> bool {
        true
    }

    fn load_program(&self, image: &[u8]) -> Result<Arc<dyn Program>> {
        let selected = select_for(image, self.target())?;
        let module = Module::load(
            self.context.clone(),
            &self.facts,
            selected.bytes(image),
            &selected.description,
        )?;
        Ok(Arc::new(CudaProgram::new(module, self.facts.clone())))
    }
    /// A CUDA stream of the primary context (`stream`).
    fn create_stream(&self) -> Result<Arc<dyn plugin::Stream>> {
        Ok(Arc::new(super::stream::new_stream(self.context.clone())?))
    }
}
