//! Safe wrappers of the driver calls: each calls one entry point of the table in
//! `driver.rs` and turns its `CUresult` into our `Result`, naming the call. This file
//! has devices, contexts, memory, copies and fills; `calls_exec.rs` has modules,
//! launches, occupancy, streams and events.
//!
//! This file, `calls_exec.rs` and `driver.rs` hold the backend's `unsafe` code.
//! Addresses are plain integers, as the plugin interface passes them: a device address
//! is checked by the driver itself (it answers `CUDA_ERROR_INVALID_VALUE` for one it did
//! not hand out), a host address is the caller's promise of `size` valid bytes (the
//! runtime has checked ranges against the allocations it knows, as for the host
//! backend). Calls that need a context expect the right one current on the calling
//! thread (`PrimaryContext`).

use super::driver::Driver;
use super::ffi::*;
use crate::plugin::foundation::error::Result;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::ptr::null_mut;

/// The text of a log buffer the driver filled (up to its NUL), trimmed.
pub fn log_text(buffer: &[u8]) -> String {
    String::from_utf8_lossy(crate::image::before_nul(buffer))
        .trim()
        .to_string()
}

impl Driver {
    // ---- devices and contexts ----------------------------------------------------------

    pub fn device_count(&self) -> Result<i32> {
        let mut n: c_int = 0;
        // SAFETY: writes one int to a valid location.
        let r = unsafe { (self.functions().device_get_count)(&mut n) };
        self.check("cuDeviceGetCount", r).map(|()| n)
    }

    pub fn device(&self, ordinal: i32) -> Result<CuDevice> {
        let mut device: CuDevice = 0;
        // SAFETY: writes one CUdevice to a valid location.
        let r = unsafe { (self.functions().device_get)(&mut device, ordinal) };
        self.check("cuDeviceGet", r).map(|()| device)
    }

    pub fn device_name(&self, device: CuDevice) -> Result<String> {
        let mut buffer = [0u8; 256];
        // SAFETY: the driver writes at most `len` bytes, NUL included, into `buffer`.
        let r = unsafe {
            (self.functions().device_get_name)(
                buffer.as_mut_ptr() as *mut c_char,
                buffer.len() as c_int,
                device,
            )
        };
        self.check("cuDeviceGetName", r)?;
        Ok(log_text(&buffer))
    }

    pub fn device_attribute(&self, device: CuDevice, attribute: c_int) -> Result<i32> {
        let mut value: c_int = 0;
        // SAFETY: writes one int to a valid location.
        let r = unsafe { (self.functions().device_get_attribute)(&mut value, attribute, device) };
        self.check("cuDeviceGetAttribute", r)
            .map(|()| value)
            .map_err(|e| e.context(format!("attribute {attribute}")))
    }

    pub fn device_total_mem(&self, device: CuDevice) -> Result<usize> {
        let mut bytes = 0usize;
        // SAFETY: writes one size_t to a valid location.
        let r = unsafe { (self.functions().device_total_mem)(&mut bytes, device) };
        self.check("cuDeviceTotalMem_v2", r).map(|()| bytes)
    }

    pub fn device_uuid(&self, device: CuDevice) -> Result<[u8; 16]> {
        let mut uuid = CuUuid::default();
        // SAFETY: writes one CUuuid (16 bytes) to a valid location.
        let r = unsafe { (self.functions().device_get_uuid)(&mut uuid, device) };
        self.check("cuDeviceGetUuid", r).map(|()| uuid.bytes)
    }

    pub fn can_access_peer(&self, device: CuDevice, peer: CuDevice) -> Result<bool> {
        let mut can: c_int = 0;
        // SAFETY: writes one int to a valid location.
        let r = unsafe { (self.functions().device_can_access_peer)(&mut can, device, peer) };
        self.check("cuDeviceCanAccessPeer", r).map(|()| can != 0)
    }

    pub fn primary_ctx_retain(&self, device: CuDevice) -> Result<CuContext> {
        let mut context = CuContext::NULL;
        // SAFETY: writes one CUcontext to a valid location.
        let r = unsafe { (self.functions().primary_ctx_retain)(&mut context, device) };
        self.check("cuDevicePrimaryCtxRetain", r).map(|()| context)
    }

    pub fn primary_ctx_release(&self, device: CuDevice) -> Result<()> {
        // SAFETY: takes a device ordinal; releasing more than was retained is an error
        // the driver reports, not undefined behaviour.
        let r = unsafe { (self.functions().primary_ctx_release)(device) };
        self.check("cuDevicePrimaryCtxRelease_v2", r)
    }

    /// Sets the primary context's flags (scheduling); `None` if the driver lacks the call.
    pub fn primary_ctx_set_flags(&self, device: CuDevice, flags: c_uint) -> Option<Result<()>> {
        let set = self.functions().primary_ctx_set_flags?;
        // SAFETY: takes a device ordinal and a flags word, which the driver checks.
        let r = unsafe { set(device, flags) };
        Some(self.check("cuDevicePrimaryCtxSetFlags", r))
    }

    /// Sets a limit (`CU_LIMIT_*`) of the current context; `None` if the driver lacks
    /// the call.
    pub fn set_limit(&self, limit: c_int, value: usize) -> Option<Result<()>> {
        let set = self.functions().ctx_set_limit?;
        // SAFETY: takes a limit's number and its value, which the driver checks.
        let r = unsafe { set(limit, value) };
        Some(self.check("cuCtxSetLimit", r))
    }

    pub fn current_context(&self) -> Result<CuContext> {
        let mut context = CuContext::NULL;
        // SAFETY: writes one CUcontext to a valid location.
        let r = unsafe { (self.functions().ctx_get_current)(&mut context) };
        self.check("cuCtxGetCurrent", r).map(|()| context)
    }

    pub fn set_current_context(&self, context: CuContext) -> Result<()> {
        // SAFETY: binds a context handle (or none) to this thread; a stale handle is an
        // error the driver reports.
        let r = unsafe { (self.functions().ctx_set_current)(context) };
        self.check("cuCtxSetCurrent", r)
    }

    pub fn context_synchronize(&self) -> Result<()> {
        // SAFETY: no arguments; waits for the current context.
        let r = unsafe { (self.functions().ctx_synchronize)() };
        self.check("cuCtxSynchronize", r)
    }

    /// Lets the current context reach `peer`'s memory; already enabled is success.
    pub fn enable_peer_access(&self, peer: CuContext) -> Result<()> {
        // SAFETY: takes a context handle and a flags word (0 is the only value defined).
        let r = unsafe { (self.functions().ctx_enable_peer_access)(peer, 0) };
        if r == result::PEER_ACCESS_ALREADY_ENABLED {
            return Ok(());
        }
        self.check("cuCtxEnablePeerAccess", r)
    }

    // ---- memory ------------------------------------------------------------------------

    pub fn mem_alloc(&self, size: usize) -> Result<CuDevicePtr> {
        let mut ptr: CuDevicePtr = 0;
        // SAFETY: writes one CUdeviceptr to a valid location.
        let r = unsafe { (self.functions().mem_alloc)(&mut ptr, size) };
        self.check("cuMemAlloc_v2", r).map(|()| ptr)
    }

    pub fn mem_free(&self, ptr: CuDevicePtr) -> Result<()> {
        // SAFETY: the driver checks that `ptr` is an allocation of its own.
        let r = unsafe { (self.functions().mem_free)(ptr) };
        self.check("cuMemFree_v2", r)
    }

    /// Page-locked host memory the device can reach (its address is the same on both).
    pub fn mem_alloc_host(&self, size: usize) -> Result<usize> {
        let mut ptr: *mut c_void = null_mut();
        // SAFETY: writes one pointer to a valid location.
        let r = unsafe { (self.functions().mem_alloc_host)(&mut ptr, size) };
        self.check("cuMemAllocHost_v2", r).map(|()| ptr as usize)
    }

    pub fn mem_free_host(&self, addr: usize) -> Result<()> {
        // SAFETY: the driver checks that `addr` is memory it allocated.
        let r = unsafe { (self.functions().mem_free_host)(addr as *mut c_void) };
        self.check("cuMemFreeHost", r)
    }

    /// Managed memory any stream of any device may use (`CU_MEM_ATTACH_GLOBAL`).
    pub fn mem_alloc_managed(&self, size: usize) -> Result<CuDevicePtr> {
        let mut ptr: CuDevicePtr = 0;
        // SAFETY: writes one CUdeviceptr to a valid location.
        let r = unsafe { (self.functions().mem_alloc_managed)(&mut ptr, size, MEM_ATTACH_GLOBAL) };
        self.check("cuMemAllocManaged", r).map(|()| ptr)
    }

    /// Page-locks `size` bytes of host memory at `addr` (`CU_MEMHOSTREGISTER_*` flags).
    pub fn host_register(&self, addr: usize, size: usize, flags: c_uint) -> Result<()> {
        // SAFETY: the driver pins the pages of a range the caller owns; it does not read
        // or write their contents.
        let r = unsafe { (self.functions().mem_host_register)(addr as *mut c_void, size, flags) };
        self.check("cuMemHostRegister_v2", r)
    }

    pub fn host_unregister(&self, addr: usize) -> Result<()> {
        // SAFETY: the driver checks that `addr` starts a range it registered.
        let r = unsafe { (self.functions().mem_host_unregister)(addr as *mut c_void) };
        self.check("cuMemHostUnregister", r)
    }

    /// A pointer attribute of at most 8 bytes, as the bytes the driver wrote.
    fn pointer_attribute(&self, attribute: c_int, ptr: CuDevicePtr) -> Result<[u8; 8]> {
        let (r, value) = self.read_pointer_attribute(attribute, ptr);
        self.check("cuPointerGetAttribute", r).map(|()| value)
    }

    /// The driver's result and the value, unchecked.
    fn read_pointer_attribute(&self, attribute: c_int, ptr: CuDevicePtr) -> (CuResult, [u8; 8]) {
        let mut value = [0u8; 8];
        // SAFETY: every attribute read through this is at most 8 bytes (an int, an
        // unsigned int, a pointer or a CUdeviceptr), written to an 8-byte buffer.
        let r = unsafe {
            (self.functions().pointer_get_attribute)(
                value.as_mut_ptr() as *mut c_void,
                attribute,
                ptr,
            )
        };
        (r, value)
    }

    /// The address the device uses for `ptr` (`CU_POINTER_ATTRIBUTE_DEVICE_POINTER`).
    pub fn pointer_device_address(&self, ptr: CuDevicePtr) -> Result<CuDevicePtr> {
        let v = self.pointer_attribute(pointer_attribute::DEVICE_POINTER, ptr)?;
        Ok(u64::from_ne_bytes(v))
    }

    /// Whether the driver knows `ptr` (device, pinned, registered or managed memory);
    /// pageable memory it does not know. No error is made of the answer (for pageable
    /// memory the driver refuses on every staged copy).
    pub fn knows_pointer(&self, ptr: CuDevicePtr) -> bool {
        self.read_pointer_attribute(pointer_attribute::MEMORY_TYPE, ptr)
            .0
            == 0
    }

    /// The ordinal of the device `ptr`'s memory belongs to.
    pub fn pointer_device_ordinal(&self, ptr: CuDevicePtr) -> Result<i32> {
        let v = self.pointer_attribute(pointer_attribute::DEVICE_ORDINAL, ptr)?;
        Ok(i32::from_ne_bytes([v[0], v[1], v[2], v[3]]))
    }

    // ---- copies and fills --------------------------------------------------------------

    /// A copy between any two addresses the driver knows by unified addressing (device,
    /// pinned, managed or pageable host memory). Synchronous except device-to-device.
    pub fn memcpy(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        // SAFETY: see the module comment on addresses.
        let r = unsafe { (self.functions().memcpy)(dst as CuDevicePtr, src as CuDevicePtr, size) };
        self.check("cuMemcpy", r)
    }

    pub fn memcpy_async(
        &self,
        dst: usize,
        src: usize,
        size: usize,
        stream: CuStream,
    ) -> Result<()> {
        // SAFETY: see the module comment on addresses; both ranges must stay valid until
        // the stream has run the copy (the caller's promise).
        let r = unsafe {
            (self.functions().memcpy_async)(dst as CuDevicePtr, src as CuDevicePtr, size, stream)
        };
        self.check("cuMemcpyAsync", r)
    }

    pub fn memcpy_htod(&self, dst: CuDevicePtr, src: usize, size: usize) -> Result<()> {
        // SAFETY: see the module comment on addresses.
        let r = unsafe { (self.functions().memcpy_htod)(dst, src as *const c_void, size) };
        self.check("cuMemcpyHtoD_v2", r)
    }

    pub fn memcpy_dtoh(&self, dst: usize, src: CuDevicePtr, size: usize) -> Result<()> {
        // SAFETY: see the module comment on addresses.
        let r = unsafe { (self.functions().memcpy_dtoh)(dst as *mut c_void, src, size) };
        self.check("cuMemcpyDtoH_v2", r)
    }

    pub fn memcpy_dtod(&self, dst: CuDevicePtr, src: CuDevicePtr, size: usize) -> Result<()> {
        // SAFETY: both are device addresses, which the driver checks.
        let r = unsafe { (self.functions().memcpy_dtod)(dst, src, size) };
        self.check("cuMemcpyDtoD_v2", r)
    }

    pub fn memcpy_htod_async(
        &self,
        dst: CuDevicePtr,
        src: usize,
        size: usize,
        stream: CuStream,
    ) -> Result<()> {
        // SAFETY: see the module comment on addresses; `src` must stay valid until the
        // stream has run the copy (the caller's promise).
        let r = unsafe {
            (self.functions().memcpy_htod_async)(dst, src as *const c_void, size, stream)
        };
        self.check("cuMemcpyHtoDAsync_v2", r)
    }

    pub fn memcpy_dtoh_async(
        &self,
        dst: usize,
        src: CuDevicePtr,
        size: usize,
        stream: CuStream,
    ) -> Result<()> {
        // SAFETY: as for memcpy_htod_async, for `dst`.
        let r =
            unsafe { (self.functions().memcpy_dtoh_async)(dst as *mut c_void, src, size, stream) };
        self.check("cuMemcpyDtoHAsync_v2", r)
    }

    pub fn memcpy_dtod_async(
        &self,
        dst: CuDevicePtr,
        src: CuDevicePtr,
        size: usize,
        stream: CuStream,
    ) -> Result<()> {
        // SAFETY: both are device addresses, which the driver checks.
        let r = unsafe { (self.functions().memcpy_dtod_async)(dst, src, size, stream) };
        self.check("cuMemcpyDtoDAsync_v2", r)
    }

    /// A copy from `src` in `src_context`'s device to `dst` in `dst_context`'s device.
    pub fn memcpy_peer_async(
        &self,
        dst: CuDevicePtr,
        dst_context: CuContext,
        src: CuDevicePtr,
        src_context: CuContext,
        size: usize,
        stream: CuStream,
    ) -> Result<()> {
        // SAFETY: device addresses and context handles, which the driver checks.
        let r = unsafe {
            (self.functions().memcpy_peer_async)(dst, dst_context, src, src_context, size, stream)
        };
        self.check("cuMemcpyPeerAsync", r)
    }

    /// Sets `count` bytes at `dst` to `value` (asynchronous for device memory).
    pub fn memset_d8(&self, dst: CuDevicePtr, value: u8, count: usize) -> Result<()> {
        // SAFETY: a device address, which the driver checks.
        let r = unsafe { (self.functions().memset_d8)(dst, value, count) };
        self.check("cuMemsetD8_v2", r)
    }

    /// Sets `count` 16-bit values at `dst` (2-byte aligned).
    pub fn memset_d16(&self, dst: CuDevicePtr, value: u16, count: usize) -> Result<()> {
        // SAFETY: a device address, which the driver checks (alignment included).
        let r = unsafe { (self.functions().memset_d16)(dst, value, count) };
        self.check("cuMemsetD16_v2", r)
    }

    /// Sets `count` 32-bit values at `dst` (4-byte aligned).
    pub fn memset_d32(&self, dst: CuDevicePtr, value: u32, count: usize) -> Result<()> {
        // SAFETY: a device address, which the driver checks (alignment included).
        let r = unsafe { (self.functions().memset_d32)(dst, value, count) };
        self.check("cuMemsetD32_v2", r)
    }

    pub fn memset_d8_async(
        &self,
        dst: CuDevicePtr,
        value: u8,
        count: usize,
        stream: CuStream,
    ) -> Result<()> {
        // SAFETY: a device address, which the driver checks.
        let r = unsafe { (self.functions().memset_d8_async)(dst, value, count, stream) };
        self.check("cuMemsetD8Async", r)
    }

    pub fn memset_d16_async(
        &self,
        dst: CuDevicePtr,
        value: u16,
        count: usize,
        stream: CuStream,
    ) -> Result<()> {
        // SAFETY: a device address, which the driver checks.
        let r = unsafe { (self.functions().memset_d16_async)(dst, value, count, stream) };
        self.check("cuMemsetD16Async", r)
    }

    pub fn memset_d32_async(
        &self,
        dst: CuDevicePtr,
        value: u32,
        count: usize,
        stream: CuStream,
    ) -> Result<()> {
        // SAFETY: a device address, which the driver checks.
        let r = unsafe { (self.functions().memset_d32_async)(dst, value, count, stream) };
        self.check("cuMemsetD32Async", r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_text_stops_at_the_nul() {
        let mut buffer = b"ptxas error : Unknown symbol 'x'\n".to_vec();
        buffer.extend([0, b'j', b'u', b'n', b'k']);
        assert_eq!(log_text(&buffer), "ptxas error : Unknown symbol 'x'");
        assert_eq!(log_text(&[0; 16]), "");
        assert_eq!(log_text(b"no nul"), "no nul");
    }
}
