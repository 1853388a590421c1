//! A device of a server rank, as the application sees it: its info is the server's
//! answer (cached at discovery), and each operation is one exchange with the server.

use super::address;
use super::host_code;
use super::program::{RemoteKernel, RemoteProgram, ServerProgram};
use super::session::Session;
use super::stream::new_stream;
use super::wire::{Reply, Request, INLINE_LIMIT};
use crate::plugin::foundation::copy;
use crate::plugin::foundation::error::{Error, ErrorCode, Result};
use crate::plugin::foundation::flags::trace;
use crate::plugin::{
    AllocKind, Device, DeviceInfo, DeviceType, InfoValue, KernelArgs, LaunchConfig, Program, Stream,
};
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
    /// The application's objects sent to the server already (by load address).
    pub mirrored: parking_lot::Mutex<std::collections::HashSet<usize>>,
}

impl RemoteDevice {
    /// Runs `kernel` on the server: with `stream` 0 waits for it; otherwise queues it on
    /// that server stream and returns at once (a failure comes at the stream's `sync`).
    pub fn launch(
        &self,
        kernel: &RemoteKernel,
        config: &LaunchConfig,
        args: KernelArgs,
        stream: u64,
    ) -> Result<()> {
        let request = Request::Launch {
            stream,
            device: self.index,
            kernel: kernel.handle,
            dimensions: config.dimensions,
            groups: config.num_groups,
            group_size: config.group_size,
            dynamic_shared: config.dyn_shared_memory as u64,
            cooperative: config.cooperative,
            c_parameters: args.c_parameters,
            arguments: args.bytes.into_vec(),
        };
        if stream != 0 {
            return self.session.post(self.rank, &request);
        }
        self.session
            .exchange(self.rank, &request, &[], &mut [])
            .map(|_| ())
    }

    /// Waits for server stream `stream` (and forgets it when `end`): its first failure.
    pub fn sync_stream(&self, stream: u64, end: bool) -> Result<()> {
        let request = if end {
            Request::EndStream { stream }
        } else {
            Request::Sync { stream }
        };
        self.session
            .exchange(self.rank, &request, &[], &mut [])
            .map(|_| ())
    }

    /// Before a host-device program loads: the server maps the code and read-only data
    /// of the application's object that holds the image (see `host_code`), once per
    /// object. Without it the program still loads (only a kernel that calls through a
    /// host address would fault), so a failure is traced, not returned.
    fn mirror_host_code(&self, image: usize) {
        let mut base = 0;
        let mut new_object = |at: usize| {
            base = at;
            self.mirrored.lock().insert(at)
        };
        let Some(code) = host_code::of_object_holding(image, &mut new_object) else {
            return;
        };
        let bytes = code.encode();
        let request = Request::MirrorHostCode {
            device: self.index,
            size: bytes.len() as u64,
        };
        if let Err(e) = self.session.exchange(self.rank, &request, &bytes, &mut []) {
            trace(|| {
                format!(
                    "MPI: rank {}: the application's object at {base:#x} is not mirrored: {}",
                    self.rank, e.details
                )
            });
        }
    }

    fn owner(&self) -> address::Owner {
        address::Owner {
            rank: self.rank,
            device: self.index,
        }
    }

    /// The device whose memory `address` is: the remote device that placed it, else
    /// this one (a queue of this device may copy to and from other remote devices).
    fn holder(&self, address: usize) -> address::Owner {
        address::owner(address).unwrap_or(self.owner())
    }

    /// A copy between remote device memory on a queue of this device: within one
    /// device, or server to server where the sides are two servers'.
    fn copy_device_to_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        let (to, from) = (self.holder(dst), self.holder(src));
        if to != from {
            return self.copy_between(from, src, to, dst, size);
        }
        let request = Request::CopyWithin {
            device: to.device,
            dst: dst as u64,
            src: src as u64,
            size: size as u64,
        };
        self.session
            .exchange(to.rank, &request, &[], &mut [])
            .map(|_| ())
    }

    /// `size` bytes from `from`'s memory at `src` to `to`'s at `dst`, straight from one
    /// server to the other.
    fn copy_between(
        &self,
        from: address::Owner,
        src: usize,
        to: address::Owner,
        dst: usize,
        size: usize,
    ) -> Result<()> {
        if from.rank == to.rank {
            return Err(crate::plugin::unsupported(&format!(
                "a copy between two devices of one server (rank {})",
                from.rank
            )));
        }
        let send = Request::SendTo {
            device: from.device,
            address: src as u64,
            size: size as u64,
            peer: to.rank as u32,
        };
        let receive = Request::ReceiveFrom {
            device: to.device,
            address: dst as u64,
            size: size as u64,
            peer: from.rank as u32,
        };
        self.session
            .exchange_between((from.rank, &send), (to.rank, &receive))
    }

    fn free_on_server(&self, addr: usize, size: usize, kind: AllocKind) -> Result<()> {
        let request = Request::Free {
            device: self.index,
            kind: kind as u32,
            address: addr as u64,
            size: size as u64,
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

    /// Memory at an address no other memory of this process can have (see `address`):
    /// the server maps it at an address reserved here, or, where its device's memory
    /// cannot be placed (a GPU's), answers with its own address, which is then reserved
    /// here too. An address taken on the other side is tried again elsewhere.
    fn allocate(&self, size: usize, kind: AllocKind) -> Result<usize> {
        // Kept until the end so that the same addresses do not come back: reservations
        // the server could not use, and server allocations whose address is taken here.
        let mut taken_there = Vec::new();
        let mut taken_here = Vec::new();
        let outcome = (|| {
            for attempt in 0..PLACEMENT_TRIES {
                // The first try where the kernel picks; after a clash, far from it.
                let reserved = if attempt == 0 {
                    address::reserve(size)
                } else {
                    address::reserve_anywhere(size)
                };
                let at = reserved.ok_or_else(|| {
                    Error::new(
                        ErrorCode::OutOfResources,
                        format!("no address space left for {size} bytes of remote memory"),
                    )
                })?;
                // Memory the host reads and writes too: shared with a server on this
                // node (which maps the same object at the same address).
                let segment = matches!(kind, AllocKind::Host | AllocKind::Managed)
                    .then(|| address::SharedSegment::create(at, size))
                    .flatten();
                let request = Request::Alloc {
                    device: self.index,
                    kind: kind as u32,
                    size: size as u64,
                    at: at as u64,
                    shared: segment.as_ref().map_or_else(String::new, |s| s.name()),
                };
                let reply = self.session.exchange(self.rank, &request, &[], &mut []);
                if let Ok(Reply::Shared(got)) = reply {
                    if got as usize == at {
                        address::record(at, size, self.owner(), address::Reserved::Whole);
                        return Ok(at);
                    }
                }
                // Not shared (a server on another node, or not its host memory): the
                // range is a plain reservation again.
                if let Some(segment) = segment {
                    segment.withdraw(at, size);
                }
                let got = match reply {
                    Ok(reply) => Self::value(reply, self.rank)? as usize,
                    Err(e) if e.code == ErrorCode::InvalidValue => {
                        taken_there.push(at);
                        continue;
                    }
                    Err(e) => {
                        address::release(at, size);
                        return Err(e);
                    }
                };
                if got != at {
                    address::release(at, size);
                    if !address::reserve_at(got, size) {
                        taken_here.push(got);
                        continue;
                    }
                }
                let how = if got == at {
                    address::Reserved::Whole
                } else {
                    address::Reserved::AtServerAddress
                };
                address::record(got, size, self.owner(), how);
                return Ok(got);
            }
            Err(Error::new(
                ErrorCode::OutOfResources,
                format!(
                    "rank {}: no address free on both sides after {PLACEMENT_TRIES} tries",
                    self.rank
                ),
            ))
        })();
        for at in taken_there {
            address::release(at, size);
        }
        for got in taken_here {
            let _ = self.free_on_server(got, size, kind);
        }
        outcome
    }

    /// Memory at `at` on both sides: reserved here, then asked of the server there (a
    /// server whose device's memory is its host memory maps it at the address given).
    fn allocate_at(&self, at: usize, size: usize, kind: AllocKind) -> Result<usize> {
        if !address::reserve_at(at, size) {
            return Err(Error::invalid_value(format!(
                "{size} bytes at {at:#x}: that address range is taken in this process"
            )));
        }
        let request = Request::Alloc {
            device: self.index,
            kind: kind as u32,
            size: size as u64,
            at: at as u64,
            shared: String::new(),
        };
        let got = self
            .session
            .exchange(self.rank, &request, &[], &mut [])
            .and_then(|reply| Self::value(reply, self.rank));
        match got {
            Ok(got) if got as usize == at => {
                address::record(at, size, self.owner(), address::Reserved::Whole);
                Ok(at)
            }
            Ok(got) => {
                let _ = self.free_on_server(got as usize, size, kind);
                address::release(at, size);
                Err(Error::invalid_value(format!(
                    "rank {}: {size} bytes asked at {at:#x}, the server's memory is at {got:#x} \
                     (its device's memory cannot be placed, or the range is taken there)",
                    self.rank
                )))
            }
            Err(e) => {
                address::release(at, size);
                Err(e)
            }
        }
    }

    fn free(&self, addr: usize, size: usize, kind: AllocKind) -> Result<()> {
        self.free_on_server(addr, size, kind)?;
        // The reservation behind the allocation goes with it.
        address::forget(addr);
        Ok(())
    }

    fn copy_to_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        // SAFETY: the runtime hands a host range of `size` readable bytes.
        let data = unsafe { std::slice::from_raw_parts(src as *const u8, size) };
        let to = self.holder(dst);
        if size as u64 <= INLINE_LIMIT {
            let request = Request::WriteInline {
                device: to.device,
                address: dst as u64,
                data: copy::to_vec(data),
            };
            return self
                .session
                .exchange(to.rank, &request, &[], &mut [])
                .map(|_| ());
        }
        let request = Request::Write {
            device: to.device,
            address: dst as u64,
            size: size as u64,
        };
        self.session
            .exchange(to.rank, &request, data, &mut [])
            .map(|_| ())
    }

    /// Within one device, or (on a queue of this device) between two remote devices.
    fn copy_within_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        self.copy_device_to_device(dst, src, size)
    }

    /// Server to server, when `dst` is memory another server placed; otherwise (a
    /// server's GPU memory at its own address, or two devices of one server) the runtime
    /// stages the copy through the application.
    fn copy_to_peer(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        let to = address::owner(dst).ok_or_else(|| {
            crate::plugin::unsupported("a copy to remote memory not placed by this process")
        })?;
        self.copy_between(self.owner(), src, to, dst, size)
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
        if self.device_type() == DeviceType::Cpu {
            self.mirror_host_code(image.as_ptr() as usize);
        }
        let request = Request::LoadProgram {
            device: self.index,
            size: image.len() as u64,
        };
        let reply = self.session.exchange(self.rank, &request, image, &mut [])?;
        let device = self
            .this
            .upgrade()
            .ok_or_else(|| Error::new(ErrorCode::InvalidDevice, "the remote device is gone"))?;
        let handle = Self::value(reply, self.rank)?;
        let on_server = Arc::new(ServerProgram {
            device: device.clone(),
            handle,
        });
        Ok(Arc::new(RemoteProgram {
            device,
            handle,
            on_server,
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

    /// Refused once the device's server is lost, as every later operation on it is.
    fn create_stream(&self) -> Result<Arc<dyn Stream>> {
        self.session.check_alive(self.rank)?;
        let this = self
            .this
            .upgrade()
            .ok_or_else(|| Error::new(ErrorCode::InvalidDevice, "the remote device is gone"))?;
        Ok(Arc::new(new_stream(this)?))
    }

    fn copy_from_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        let from = self.holder(src);
        let request = Request::Read {
            device: from.device,
            address: src as u64,
            size: size as u64,
        };
        // SAFETY: the runtime hands a host range of `size` writable bytes.
        let into = unsafe { std::slice::from_raw_parts_mut(dst as *mut u8, size) };
        self.session
            .exchange(from.rank, &request, &[], into)
            .map(|_| ())
    }
}
