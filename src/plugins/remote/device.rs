//! A device of a server rank, as the application sees it: its info is the server's
//! answer (cached at discovery), and each operation is one exchange with the server.

use super::session::Session;
use super::wire::{Reply, Request};
use crate::plugin::{AllocKind, Device, DeviceInfo, DeviceType, InfoValue};
use crate::runtime::error::{Error, ErrorCode, Result};
use std::sync::Arc;

pub struct RemoteDevice {
    pub session: Arc<Session>,
    pub rank: i32,
    /// The device's number on its server.
    pub index: u32,
    pub info: Vec<(u32, InfoValue)>,
}

impl RemoteDevice {
    fn value(reply: Reply, rank: i32) -> Result<u64> {
        match reply {
            Reply::Value(v) => Ok(v),
            other => Err(Error::new(
                ErrorCode::BackendFailure,
                format!("rank {rank}: expected a value, got {other:?}"),
            )),
        }
    }
}

impl Device for RemoteDevice {
    /// A server's host is a CPU here: the application's host device is its own.
    fn device_type(&self) -> DeviceType {
        match self.info(DeviceInfo::Type) {
            Ok(InfoValue::U32(t)) if t == DeviceType::Gpu as u32 => DeviceType::Gpu,
            _ => DeviceType::Cpu,
        }
    }

    fn info(&self, key: DeviceInfo) -> Result<InfoValue> {
        let value = self
            .info
            .iter()
            .find(|(k, _)| *k == key as u32)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| crate::plugin::unsupported(&format!("device info {key:?}")))?;
        Ok(match (key, value) {
            (DeviceInfo::Type, InfoValue::U32(t)) if t == DeviceType::Host as u32 => {
                InfoValue::U32(DeviceType::Cpu as u32)
            }
            (_, v) => v,
        })
    }

    fn allocate(&self, size: usize, kind: AllocKind) -> Result<usize> {
        let request = Request::Alloc {
            device: self.index,
            kind: kind as u32,
            size: size as u64,
        };
        let (reply, _) = self.session.exchange(self.rank, &request, &[], 0)?;
        Ok(Self::value(reply, self.rank)? as usize)
    }

    fn free(&self, addr: usize, size: usize, kind: AllocKind) -> Result<()> {
        let request = Request::Free {
            device: self.index,
            kind: kind as u32,
            address: addr as u64,
            size: size as u64,
        };
        self.session
            .exchange(self.rank, &request, &[], 0)
            .map(|_| ())
    }

    fn copy_to_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        // SAFETY: the runtime hands a host range of `size` readable bytes.
        let data = unsafe { std::slice::from_raw_parts(src as *const u8, size) };
        let request = Request::Write {
            device: self.index,
            address: dst as u64,
            size: size as u64,
        };
        self.session
            .exchange(self.rank, &request, data, 0)
            .map(|_| ())
    }

    fn copy_from_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        let request = Request::Read {
            device: self.index,
            address: src as u64,
            size: size as u64,
        };
        let (_, data) = self
            .session
            .exchange(self.rank, &request, &[], size as u64)?;
        // SAFETY: the runtime hands a host range of `size` writable bytes; `data` has
        // exactly `size` bytes (the exchange checks every fragment).
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst as *mut u8, size) };
        Ok(())
    }
}
