//! Device memory at an address the caller chooses (`olMemAllocAt`: a recorded launch's
//! memory replayed where it was), through the driver's virtual memory management, as
//! LLVM's CUDA plugin places record-replay memory: the address range is reserved with
//! the wanted address as the hint (a hint the driver may not honour: then the range is
//! taken and the call fails), physical memory is created, mapped over the range and
//! made readable and writable by the device.
//!
//! The granule runs are kept by `plugin::foundation::placed_runs`.

use super::driver::Driver;
use super::ffi::*;
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::foundation::placed_runs::{PlacedRuns, RunMapper};

/// The placements of one device.
#[derive(Default)]
pub struct Placements {
    runs: PlacedRuns,
}

/// What placed memory needs of the driver, or why it cannot be had.
struct Vmm<'a> {
    driver: &'a Driver,
    prop: CuMemAllocationProp,
    granule: usize,
}

impl<'a> Vmm<'a> {
    fn open(driver: &'a Driver, device: CuDevice) -> Result<Vmm<'a>> {
        let f = driver.functions();
        if f.mem_address_reserve.is_none()
            || f.mem_create.is_none()
            || f.mem_map.is_none()
            || f.mem_set_access.is_none()
            || f.mem_get_allocation_granularity.is_none()
            || f.mem_release.is_none()
            || f.mem_unmap.is_none()
            || f.mem_address_free.is_none()
        {
            return Err(Error::unsupported(
                "placing memory at an address needs the driver's virtual memory management \
                 (cuMemAddressReserve, cuMemCreate, cuMemMap: CUDA 10.2 or newer)",
            ));
        }
        if driver.device_attribute(
            device,
            device_attribute::VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
        )? == 0
        {
            return Err(Error::unsupported(
                "placing memory at an address needs virtual memory management, which this \
                 GPU does not support (CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED \
                 is 0)",
            ));
        }
        let prop = CuMemAllocationProp {
            kind: MEM_ALLOCATION_TYPE_PINNED,
            requested_handle_types: 0,
            location: CuMemLocation {
                kind: MEM_LOCATION_TYPE_DEVICE,
                id: device,
            },
            win32_handle_metadata: std::ptr::null_mut(),
            alloc_flags: [0; 8],
        };
        let mut granule = 0usize;
        let granularity = f.mem_get_allocation_granularity.expect("checked above");
        // SAFETY: writes one size_t; `prop` is a valid CUmemAllocationProp.
        let r = unsafe { granularity(&mut granule, &prop, MEM_ALLOC_GRANULARITY_MINIMUM) };
        driver.check("cuMemGetAllocationGranularity", r)?;
        if !granule.is_power_of_two() {
            return Err(Error::backend_failure(format!(
                "cuMemGetAllocationGranularity answered {granule}, not a power of two"
            )));
        }
        Ok(Vmm {
            driver,
            prop,
            granule,
        })
    }

    /// Reserves exactly `[start, start + len)`, or says that the range is taken.
    fn reserve(&self, start: usize, len: usize) -> Result<()> {
        let reserve = self
            .driver
            .functions()
            .mem_address_reserve
            .expect("checked");
        let mut got: CuDevicePtr = 0;
        // SAFETY: writes one CUdeviceptr; the size is a multiple of the granularity, the
        // alignment 0 is the default and the flags word must be 0.
        let r = unsafe { reserve(&mut got, len, 0, start as CuDevicePtr, 0) };
        self.driver.check("cuMemAddressReserve", r)?;
        if got as usize != start {
            self.free_range(got, len);
            return Err(Error::invalid_value(format!(
                "{len} bytes at {start:#x}: that address range is taken on the device (the \
                 driver offered {got:#x} instead)"
            )));
        }
        Ok(())
    }

    /// Backs the reserved range with new device memory the device may read and write.
    fn back(&self, start: usize, len: usize) -> Result<()> {
        let f = self.driver.functions();
        let mut handle: CuMemHandle = 0;
        // SAFETY: writes one handle; `prop` describes pinned memory of this device.
        let r = unsafe { (f.mem_create.expect("checked"))(&mut handle, len, &self.prop, 0) };
        self.driver.check("cuMemCreate", r)?;
        // SAFETY: maps the whole new allocation over the whole reserved range.
        let r = unsafe { (f.mem_map.expect("checked"))(start as CuDevicePtr, len, 0, handle, 0) };
        // The mapping keeps the memory; the handle is not needed once it is mapped.
        self.release(handle);
        self.driver.check("cuMemMap", r)?;
        let access = CuMemAccessDesc {
            location: self.prop.location,
            flags: MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: one descriptor for the range just mapped.
        let r =
            unsafe { (f.mem_set_access.expect("checked"))(start as CuDevicePtr, len, &access, 1) };
        if let Err(e) = self.driver.check("cuMemSetAccess", r) {
            self.unmap(start as CuDevicePtr, len);
            return Err(e);
        }
        Ok(())
    }

    fn release(&self, handle: CuMemHandle) {
        // SAFETY: a handle cuMemCreate made, released once.
        unsafe { (self.driver.functions().mem_release.expect("checked"))(handle) };
    }

    fn unmap(&self, start: CuDevicePtr, len: usize) {
        // SAFETY: the whole range one cuMemMap mapped.
        unsafe { (self.driver.functions().mem_unmap.expect("checked"))(start, len) };
    }

    fn free_range(&self, start: CuDevicePtr, len: usize) {
        // SAFETY: the whole range one cuMemAddressReserve returned.
        unsafe { (self.driver.functions().mem_address_free.expect("checked"))(start, len) };
    }
}

impl RunMapper for Vmm<'_> {
    fn granule(&self) -> usize {
        self.granule
    }

    fn map_run(&self, start: usize, len: usize) -> Result<()> {
        self.reserve(start, len)?;
        self.back(start, len)
            .inspect_err(|_| self.free_range(start as CuDevicePtr, len))
    }

    fn unmap_run(&self, start: usize, len: usize) -> Result<()> {
        let f = self.driver.functions();
        // SAFETY: a run `map_run` mapped, unmapped once.
        let unmapped = unsafe { (f.mem_unmap.expect("checked"))(start as CuDevicePtr, len) };
        // SAFETY: the run's reservation, given back once.
        let freed = unsafe { (f.mem_address_free.expect("checked"))(start as CuDevicePtr, len) };
        self.driver
            .check("cuMemUnmap", unmapped)
            .and_then(|()| self.driver.check("cuMemAddressFree", freed))
    }
}

impl Placements {
    /// `size` bytes of device memory at `at` on `device` (its context current).
    pub fn place(&self, driver: &Driver, device: CuDevice, at: usize, size: usize) -> Result<()> {
        self.runs.place(&Vmm::open(driver, device)?, at, size)
    }

    /// Ends the placement at `at` (the caller has synchronised the context).
    pub fn remove(&self, driver: &Driver, device: CuDevice, at: usize) -> Result<()> {
        self.runs.remove(&Vmm::open(driver, device)?, at)
    }
}
