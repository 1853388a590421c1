//! Device memory at an address the caller chooses (`olMemAllocAt`: a recorded launch's
//! memory replayed where it was), through ROCm 6.0's virtual memory management: the
//! address range reserved with the wanted address as the hint (another answer means the
//! range is taken), memory made from the device's coarse-grained pool, mapped over the
//! range, and made readable and writable by the GPU and its peers. A runtime older than
//! ROCm 6.0 lacks these entry points and says so. The granule runs are kept by
//! `plugin::foundation::placed_runs`.

use super::device::DeviceShared;
use super::ffi::*;
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::foundation::placed_runs::{PlacedRuns, RunMapper};
use std::ffi::c_void;

/// The placements of one device.
#[derive(Default)]
pub struct Placements {
    runs: PlacedRuns,
}

/// The runtime's virtual memory management, for one device.
struct Vmem<'a> {
    device: &'a DeviceShared,
    granule: usize,
}

impl<'a> Vmem<'a> {
    fn open(device: &'a DeviceShared) -> Result<Vmem<'a>> {
        let f = &device.hsa.f;
        if f.vmem_address_reserve.is_none()
            || f.vmem_address_free.is_none()
            || f.vmem_handle_create.is_none()
            || f.vmem_handle_release.is_none()
            || f.vmem_map.is_none()
            || f.vmem_unmap.is_none()
            || f.vmem_set_access.is_none()
        {
            return Err(Error::unsupported(
                "placing memory at an address needs the HSA runtime's virtual memory \
                 management (hsa_amd_vmem_address_reserve, hsa_amd_vmem_map: ROCm 6.0 or \
                 newer); this runtime lacks it",
            ));
        }
        let granule = device
            .hsa
            .pool_usize(device.coarse.pool, pool_info::RUNTIME_ALLOC_GRANULE)?;
        if !granule.is_power_of_two() {
            return Err(Error::backend_failure(format!(
                "the device pool's allocation granule is {granule}, not a power of two"
            )));
        }
        Ok(Vmem { device, granule })
    }

    fn check(&self, status: HsaStatus, call: &str) -> Result<()> {
        self.device.hsa.check(status, call)
    }

    fn free_range(&self, start: usize, len: usize) {
        let free = self.device.hsa.f.vmem_address_free.expect("checked");
        // SAFETY: the whole range one hsa_amd_vmem_address_reserve returned.
        unsafe { free(start as *mut c_void, len) };
    }

    /// Backs the reserved range with new memory of the device's pool, reachable by the
    /// device and its peers.
    fn back(&self, start: usize, len: usize) -> Result<()> {
        let f = &self.device.hsa.f;
        let mut handle = VmemHandle::default();
        // SAFETY: writes one handle; the pool is the device's, the size a multiple of its
        // granule, the flags word 0.
        let s = unsafe {
            (f.vmem_handle_create.expect("checked"))(
                self.device.coarse.pool,
                len,
                VMEM_MEMORY_TYPE_NONE,
                0,
                &mut handle,
            )
        };
        self.check(s, "hsa_amd_vmem_handle_create")?;
        // SAFETY: maps the whole new memory over the whole reserved range.
        let s = unsafe { (f.vmem_map.expect("checked"))(start as *mut c_void, len, 0, handle, 0) };
        // The mapping keeps the memory; the handle is not needed once it is mapped.
        // SAFETY: a handle just created, released once.
        unsafe { (f.vmem_handle_release.expect("checked"))(handle) };
        self.check(s, "hsa_amd_vmem_map")?;
        let access: Vec<MemoryAccessDesc> = std::iter::once(self.device.agent)
            .chain(self.device.peers.iter().copied())
            .map(|agent| MemoryAccessDesc {
                permissions: ACCESS_PERMISSION_RW,
                agent,
            })
            .collect();
        // SAFETY: the descriptors are valid for the call; the range is the one mapped.
        let s = unsafe {
            (f.vmem_set_access.expect("checked"))(
                start as *mut c_void,
                len,
                access.as_ptr(),
                access.len(),
            )
        };
        if let Err(e) = self.check(s, "hsa_amd_vmem_set_access") {
            // SAFETY: the range just mapped.
            unsafe { (f.vmem_unmap.expect("checked"))(start as *mut c_void, len) };
            return Err(e);
        }
        Ok(())
    }
}

impl RunMapper for Vmem<'_> {
    fn granule(&self) -> usize {
        self.granule
    }

    fn map_run(&self, start: usize, len: usize) -> Result<()> {
        let reserve = self.device.hsa.f.vmem_address_reserve.expect("checked");
        let mut got: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one pointer; the size is a multiple of the granule, flags 0.
        let s = unsafe { reserve(&mut got, len, start as u64, 0) };
        self.check(s, "hsa_amd_vmem_address_reserve")?;
        if got as usize != start {
            self.free_range(got as usize, len);
            return Err(Error::invalid_value(format!(
                "{len} bytes at {start:#x}: that address range is taken on the device (the \
                 runtime offered {got:p} instead)"
            )));
        }
        self.back(start, len)
            .inspect_err(|_| self.free_range(start, len))
    }

    fn unmap_run(&self, start: usize, len: usize) -> Result<()> {
        let f = &self.device.hsa.f;
        // SAFETY: a run `map_run` mapped, unmapped once.
        let unmapped = unsafe { (f.vmem_unmap.expect("checked"))(start as *mut c_void, len) };
        // SAFETY: the run's reservation, given back once.
        let freed = unsafe { (f.vmem_address_free.expect("checked"))(start as *mut c_void, len) };
        self.check(unmapped, "hsa_amd_vmem_unmap")
            .and_then(|()| self.check(freed, "hsa_amd_vmem_address_free"))
    }
}

impl Placements {
    /// `size` bytes of the device's memory at `at`.
    pub fn place(&self, device: &DeviceShared, at: usize, size: usize) -> Result<()> {
        self.runs.place(&Vmem::open(device)?, at, size)
    }

    /// Ends the placement at `at` (the caller has made sure the device is done with it).
    pub fn remove(&self, device: &DeviceShared, at: usize) -> Result<()> {
        self.runs.remove(&Vmem::open(device)?, at)
    }
}
