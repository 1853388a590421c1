//! Memory operations of the runtime: allocation through the shared memory manager,
//! synchronous copies and fills, queries and host-memory registration.

use crate::memory::AllocationInfo;
use crate::plugin::foundation::c_enum::c_enum;
use crate::plugin::foundation::error::{Error, ErrorCode, Result};
use crate::plugin::foundation::flags::validation_enabled;
use crate::plugin::{AllocKind, CopyDirection, InfoValue};
use crate::runtime::context::Runtime;
use crate::runtime::platform::Device;
use std::sync::Arc;

c_enum! {
    /// `ol_mem_info_t`, in the header's order.
    pub enum MemInfo {
        Device = 0,
        Base = 1,
        Size = 2,
        Type = 3,
    }
}

/// Staging size for copies between two devices that share no memory.
const STAGING_CHUNK: usize = 8 << 20;

impl Runtime {
    /// An allocation or registration is at least 1 byte.
    pub fn check_nonzero_size(size: usize) -> Result<()> {
        if size == 0 {
            return Err(Error::invalid_size("Size is 0; expected at least 1 byte"));
        }
        Ok(())
    }

    pub fn mem_alloc(&self, device: &Device, kind: AllocKind, size: usize) -> Result<usize> {
        Self::check_nonzero_size(size)?;
        self.memory.allocate(device.index, kind, size).map_err(|e| {
            e.context(format!(
                "olMemAlloc of {size} bytes on {}",
                device.describe()
            ))
        })
    }

    /// `size` bytes of `kind` memory on `device` at exactly `at` (a recorded launch's
    /// memory, replayed where it was); freed by `mem_free`.
    pub fn mem_alloc_at(
        &self,
        device: &Device,
        kind: AllocKind,
        size: usize,
        at: usize,
    ) -> Result<usize> {
        Self::check_nonzero_size(size)?;
        self.memory.allocate_at(device.index, kind, size, at)
    }

    /// Frees the allocation starting at `addr`; any other address is `InvalidArgument`
    /// (LLVM's code for it), nothing changes then.
    pub fn mem_free(&self, addr: usize) -> Result<()> {
        self.memory
            .free(addr)
            .map(|_| ())
            .map_err(|e| match e.code {
                ErrorCode::NotFound => e.with_code(ErrorCode::InvalidArgument),
                _ => e,
            })
    }

    /// The live allocation holding `ptr`, or `NotFound`.
    pub fn allocation_of(&self, ptr: usize) -> Result<AllocationInfo> {
        self.memory.find(ptr).ok_or_else(|| {
            Error::not_found(format!(
                "{ptr:#x} is not inside any live allocation made by olMemAlloc"
            ))
        })
    }

    /// One property of a live allocation (from `allocation_of`).
    pub fn mem_info(&self, a: &AllocationInfo, key: MemInfo) -> InfoValue {
        match key {
            MemInfo::Device => InfoValue::Handle(self.devices[a.device].handle()),
            MemInfo::Base => InfoValue::Handle(a.base),
            MemInfo::Size => InfoValue::Usize(a.size),
            MemInfo::Type => InfoValue::U32(a.kind as u32),
        }
    }

    /// The allocation `ptr` lies in, if any, looked up once for the call: unless
    /// validation is off (`OFFLOAD_DISABLE_VALIDATION`), `[ptr, ptr + size)` must fit it
    /// and `device` must be able to name it. A `queued` call keeps what it found, to see
    /// when the command runs that the allocation was not freed meanwhile; a synchronous
    /// one without validation needs no lookup (`None`).
    pub fn locate(
        &self,
        what: &str,
        ptr: usize,
        size: usize,
        device: &Device,
        queued: bool,
    ) -> Result<Option<AllocationInfo>> {
        if !validation_enabled() {
            return Ok(queued.then(|| self.memory.find(ptr)).flatten());
        }
        if ptr.checked_add(size).is_none() {
            return Err(Error::invalid_size(format!(
                "{what} {ptr:#x} + {size} bytes overflows the address space"
            )));
        }
        let Some(a) = self.memory.find(ptr) else {
            return Ok(None);
        };
        let offset = ptr - a.base;
        if size > a.size - offset {
            return Err(Error::invalid_size(format!(
                "{size} bytes at {what} {ptr:#x} overrun its allocation: {} bytes remain after offset {offset} of the {}-byte allocation at {:#x}",
                a.size - offset, a.size, a.base
            )));
        }
        let owner = &self.devices[a.device];
        let host_visible = a.kind != AllocKind::Device || owner.is_host();
        if owner.index != device.index && !(host_visible && device.is_host()) {
            return Err(Error::invalid_argument(format!(
                "{what} {ptr:#x} is {:?} memory of {}, but the call names {}",
                a.kind,
                owner.describe(),
                device.describe()
            )));
        }
        Ok(Some(a))
    }

    /// A synchronous copy between any two devices (host memory is named by the host device).
    pub fn mem_copy(
        &self,
        dst: usize,
        dst_device: &Arc<Device>,
        src: usize,
        src_device: &Arc<Device>,
        size: usize,
    ) -> Result<()> {
        if size == 0 {
            return Ok(());
        }
        let direction = CopyDirection::between(dst_device.is_host(), src_device.is_host())
            .of_ranges(dst, src, size);
        match direction {
            // The host device's own copy (split over its cores when large).
            CopyDirection::HostToHost => dst_device.imp.copy_within_device(dst, src, size),
            CopyDirection::HostToDevice => direction.copy_with(&*dst_device.imp, dst, src, size),
            CopyDirection::DeviceToHost => direction.copy_with(&*src_device.imp, dst, src, size),
            // (One side the host device: one memory of the other, see `of_ranges`.)
            CopyDirection::DeviceToDevice
                if dst_device.index == src_device.index || dst_device.is_host() =>
            {
                direction.copy_with(&*src_device.imp, dst, src, size)
            }
            CopyDirection::DeviceToDevice if src_device.is_host() => {
                direction.copy_with(&*dst_device.imp, dst, src, size)
            }
            CopyDirection::DeviceToDevice
                if dst_device.platform.index == src_device.platform.index =>
            {
                match src_device.imp.copy_to_peer(dst, src, size) {
                    Err(e) if e.code == ErrorCode::Unsupported => {
                        self.copy_through_host(dst, dst_device, src, src_device, size)
                    }
                    done => done,
                }
            }
            CopyDirection::DeviceToDevice => {
                self.copy_through_host(dst, dst_device, src, src_device, size)
            }
        }
    }

    fn copy_through_host(
        &self,
        dst: usize,
        dst_device: &Device,
        src: usize,
        src_device: &Device,
        size: usize,
    ) -> Result<()> {
        let chunk = size.min(STAGING_CHUNK);
        let host = self.host_device();
        let staging = self.memory.allocate(host.index, AllocKind::Host, chunk)?;
        let mut result = Ok(());
        let mut done = 0;
        while done < size && result.is_ok() {
            let n = chunk.min(size - done);
            result = src_device
                .imp
                .copy_from_device(staging, src + done, n)
                .and_then(|_| dst_device.imp.copy_to_device(dst + done, staging, n));
            done += n;
        }
        self.memory.free(staging)?;
        result
    }

    /// The device whose memory `ptr` is, for calls that name no device: the owner of the
    /// allocation holding it, else the host (plain host memory).
    pub fn device_of_pointer(&self, ptr: usize) -> &Arc<Device> {
        match self.memory.find(ptr) {
            Some(a) => &self.devices[a.device],
            None => self.host_device(),
        }
    }

    pub fn check_fill(pattern_size: usize, fill_size: usize) -> Result<()> {
        if pattern_size == 0 {
            return Err(Error::invalid_size(
                "PatternSize is 0; expected at least 1 byte",
            ));
        }
        if fill_size % pattern_size != 0 {
            return Err(Error::invalid_size(format!(
                "FillSize {fill_size} is not a multiple of PatternSize {pattern_size}"
            )));
        }
        Ok(())
    }

    pub fn mem_register(&self, device: &Device, ptr: usize, size: usize) -> Result<usize> {
        Self::check_nonzero_size(size)?;
        self.registrations.register(device.index, ptr, size, || {
            if device.is_host() {
                // Host memory is already the host device's memory: nothing to lock.
                Ok(ptr)
            } else {
                device.imp.lock_host_memory(ptr, size)
            }
        })
    }

    pub fn mem_unregister(&self, device: &Device, pinned: usize) -> Result<()> {
        if let Some(start) = self.registrations.unregister(device.index, pinned)? {
            if !device.is_host() {
                device.imp.unlock_host_memory(start)?;
            }
        }
        Ok(())
    }
}
