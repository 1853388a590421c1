//! A device of a server rank, as the application sees it: its info is the server's
//! answer (cached at discovery), and each operation is one exchange with the server.

use super::address;
use super::program::{RemoteKernel, RemoteProgram};
use super::session::Session;
use super::stream::RemoteStream;
use super::wire::{Reply, Request};
use crate::plugin::{
    AllocKind, Device, DeviceInfo, DeviceType, InfoValue, LaunchConfig, Program, Stream,
};
use crate::runtime::error::{Error, ErrorCode, Result};
use std::sync::Arc;

/// How many reservations an allocation tries before it gives up.
const PLACEMENT_TRIES: usize = 8;

pub struct RemoteDevice {
    /// This device itself, for the streams it creates.
    pub this: std::sync::Weak<RemoteDevice>,
    pub session: Arc<Session>,
    pub rank: i32,
    /// The device's number on its server.
    pub index: u32,
    pub info: Vec<(u32, InfoValue)>,
    /// Allocations at addresses this process reserved (released with them).
    pub placed: parking_lot::Mutex<std::collections::HashSet<usize>>,
}

impl RemoteDevice {
    /// Runs `kernel` on the server and waits for it.
    pub fn launch(
        &self,
        kernel: &RemoteKernel,
        config: &LaunchConfig,
        arguments: Vec<u8>,
    ) -> Result<()> {
        let request = Request::Launch {
            device: self.index,
            kernel: kernel.handle,
            dimensions: config.dimensions,
            groups: config.num_groups,
            group_size: config.group_size,
            dynamic_shared: config.dyn_shared_memory as u64,
            arguments,
        };
        self.session
            .exchange(self.rank, &request, &[], &mut [])
            .map(|_| ())
    }

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

    /// Memory at an address this process reserved for it (see `address`): the server
    /// maps it there, or, where that address is taken on its side, the next reservation
    /// is tried; a server that cannot place memory (a GPU's) answers with its own address.
    fn allocate(&self, size: usize, kind: AllocKind) -> Result<usize> {
        let mut refused = Vec::new();
        let outcome = (|| {
            for _ in 0..PLACEMENT_TRIES {
                let at = address::reserve(size).ok_or_else(|| {
                    Error::new(
                        ErrorCode::OutOfResources,
                        format!("no address space left for {size} bytes of remote memory"),
                    )
                })?;
                let request = Request::Alloc {
                    device: self.index,
                    kind: kind as u32,
                    size: size as u64,
                    at: at as u64,
                };
                match self.session.exchange(self.rank, &request, &[], &mut []) {
                    Ok(reply) => {
                        let got = Self::value(reply, self.rank)? as usize;
                        if got == at {
                            self.placed.lock().insert(at);
                        } else {
                            // Placed elsewhere: the reservation is not needed.
                            address::release(at, size);
                        }
                        return Ok(got);
                    }
                    Err(e) if e.code == ErrorCode::InvalidValue => refused.push(at),
                    Err(e) => {
                        address::release(at, size);
                        return Err(e);
                    }
                }
            }
            Err(Error::new(
                ErrorCode::OutOfResources,
                format!(
                    "rank {}: no address free on both sides after {PLACEMENT_TRIES} tries",
                    self.rank
                ),
            ))
        })();
        // The addresses the server could not use were kept so as not to get them again.
        for at in refused {
            address::release(at, size);
        }
        outcome
    }

    fn free(&self, addr: usize, size: usize, kind: AllocKind) -> Result<()> {
        let request = Request::Free {
            device: self.index,
            kind: kind as u32,
            address: addr as u64,
            size: size as u64,
        };
        self.session.exchange(self.rank, &request, &[], &mut [])?;
        // The reservation behind a placed allocation goes with it (a server's own
        // address was never reserved here).
        if self.placed.lock().remove(&addr) {
            address::release(addr, size);
        }
        Ok(())
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
            .exchange(self.rank, &request, data, &mut [])
            .map(|_| ())
    }

    fn copy_within_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        let request = Request::CopyWithin {
            device: self.index,
            dst: dst as u64,
            src: src as u64,
            size: size as u64,
        };
        self.session
            .exchange(self.rank, &request, &[], &mut [])
            .map(|_| ())
    }

    fn fill(&self, dst: usize, pattern: &[u8], size: usize) -> Result<()> {
        let request = Request::Fill {
            device: self.index,
            address: dst as u64,
            size: size as u64,
            pattern: pattern.to_vec(),
        };
        self.session
            .exchange(self.rank, &request, &[], &mut [])
            .map(|_| ())
    }

    fn check_image(&self, image: &[u8]) -> Result<()> {
        let request = Request::CheckImage {
            device: self.index,
            size: image.len() as u64,
        };
        self.session
            .exchange(self.rank, &request, image, &mut [])
            .map(|_| ())
    }

    fn load_program(&self, image: &[u8]) -> Result<Arc<dyn Program>> {
        let request = Request::LoadProgram {
            device: self.index,
            size: image.len() as u64,
        };
        let reply = self.session.exchange(self.rank, &request, image, &mut [])?;
        let device = self
            .this
            .upgrade()
            .ok_or_else(|| Error::new(ErrorCode::InvalidDevice, "the remote device is gone"))?;
        Ok(Arc::new(RemoteProgram {
            device,
            handle: Self::value(reply, self.rank)?,
        }))
    }

    /// The application's memory needs no pinning for the transport (MPI copies it
    /// through its own buffers): registration keeps the address.
    fn lock_host_memory(&self, addr: usize, _size: usize) -> Result<usize> {
        Ok(addr)
    }

    fn unlock_host_memory(&self, _addr: usize) -> Result<()> {
        Ok(())
    }

    fn create_stream(&self) -> Result<Arc<dyn Stream>> {
        let this = self
            .this
            .upgrade()
            .ok_or_else(|| Error::new(ErrorCode::InvalidDevice, "the remote device is gone"))?;
        Ok(Arc::new(RemoteStream::new(this)?))
    }

    fn copy_from_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        let request = Request::Read {
            device: self.index,
            address: src as u64,
            size: size as u64,
        };
        // SAFETY: the runtime hands a host range of `size` writable bytes.
        let into = unsafe { std::slice::from_raw_parts_mut(dst as *mut u8, size) };
        self.session
            .exchange(self.rank, &request, &[], into)
            .map(|_| ())
    }
}
