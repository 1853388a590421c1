//! `offload-mpi-device`: serves every device of this process (the host, and GPUs when
//! present) to the application, the last rank of the MPI job:
//!
//! ```text
//! mpirun -np 2 offload-mpi-device : -np 1 ./app
//! ```
//!
//! It answers one request at a time until the application says `Exit` (liboffload does
//! at exit). Every failure goes back as an error reply naming this rank.

use offload::plugin::{
    AllocKind, Backend, Device, DeviceInfo, DeviceType, Kernel, KernelArgs, LaunchConfig, Program,
    Stream, StreamOp, SymbolKind,
};
use offload::plugins::remote::fragments::{self, DEFAULT_FRAGMENT};
use offload::plugins::remote::wire::{Reply, Request};
use offload::runtime::error::ErrorCode;
use offload_remote_mpi::transport::{
    Transport, HEARTBEAT, TAG_DATA, TAG_HEARTBEAT, TAG_REPLY, TAG_REQUEST,
};
use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

struct Server {
    transport: Arc<Transport>,
    /// Set while a request is being served: the heartbeat thread then says so.
    busy: Arc<AtomicBool>,
    app: i32,
    devices: Vec<Arc<dyn Device>>,
    /// Loaded programs and found kernels, by the handle the application holds.
    programs: HashMap<u64, Arc<dyn Program>>,
    kernels: HashMap<u64, (u64, Arc<dyn Kernel>)>,
    next_handle: u64,
    /// One stream per device, for what runs only on streams (launches).
    streams: HashMap<u32, Arc<dyn Stream>>,
    /// Where transferred data lands, reused (touched once, not at every copy).
    staging: Vec<u8>,
    /// Memory mapped at the application's addresses (`place`).
    placed: std::collections::HashSet<usize>,
}

/// A request's answer, and the bytes that follow it (a read's data).
type Served = Result<(Reply, Vec<u8>), (ErrorCode, String)>;

fn main() -> ExitCode {
    let transport = match Transport::open() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("offload-mpi-device: {e}");
            return ExitCode::from(1);
        }
    };
    let app = transport.size() - 1;
    if transport.rank() == app {
        eprintln!(
            "offload-mpi-device: this is the last rank, which belongs to the application; start it as: mpirun -np N offload-mpi-device : -np 1 ./app"
        );
        return ExitCode::from(2);
    }
    // Every local backend; never the remote one (this process serves, it is no client).
    let devices = offload::plugins::available()
        .into_iter()
        .filter(|p| p.backend() != Backend::Mpi)
        .flat_map(|p| p.devices())
        .collect();
    let transport = Arc::new(transport);
    let busy = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let heartbeat = start_heartbeat(transport.clone(), app, busy.clone(), stop.clone());
    let mut server = Server {
        transport,
        busy,
        app,
        devices,
        programs: HashMap::new(),
        kernels: HashMap::new(),
        next_handle: 1,
        streams: HashMap::new(),
        staging: Vec::new(),
        placed: std::collections::HashSet::new(),
    };
    let code = server.run();
    // MPI is finalised when the last reference to the transport goes: the heartbeat's
    // first, then the server's.
    stop.store(true, Ordering::Release);
    if let Some(handle) = heartbeat {
        let _ = handle.join();
    }
    drop(server);
    code
}

/// While the server is busy, the application hears from it every `HEARTBEAT`, so that
/// a long kernel or transfer is not taken for a dead server. The thread ends when `stop`
/// is set (its reference to the transport must go before MPI is finalised).
fn start_heartbeat(
    transport: Arc<Transport>,
    app: i32,
    busy: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
) -> Option<std::thread::JoinHandle<()>> {
    let beat = move || {
        while !stop.load(Ordering::Acquire) {
            std::thread::sleep(HEARTBEAT);
            if busy.load(Ordering::Acquire) && transport.send(app, TAG_HEARTBEAT, &[]).is_err() {
                return;
            }
        }
    };
    match std::thread::Builder::new()
        .name("offload-mpi-heartbeat".into())
        .spawn(beat)
    {
        Ok(handle) => Some(handle),
        Err(e) => {
            eprintln!(
                "offload-mpi-device: no heartbeat thread ({e}): long operations may time out"
            );
            None
        }
    }
}

impl Server {
    fn run(&mut self) -> ExitCode {
        loop {
            let bytes = match self.transport.receive(self.app, TAG_REQUEST, None) {
                Ok(b) => b,
                Err(e) => {
                    eprintln!("offload-mpi-device: {e}");
                    return ExitCode::from(1);
                }
            };
            self.busy.store(true, Ordering::Release);
            let (reply, exit) = match Request::decode(&bytes) {
                Ok(request) => {
                    let exit = request == Request::Exit;
                    (self.serve(request), exit)
                }
                Err(e) => (
                    Err((
                        ErrorCode::InvalidArgument,
                        format!("a request it cannot read: {}", e.0),
                    )),
                    false,
                ),
            };
            let (reply, data) = reply.unwrap_or_else(|(code, details)| {
                let details = format!("rank {}: {details}", self.transport.rank());
                let code = code as u32;
                (Reply::Error { code, details }, Vec::new())
            });
            let sent = self
                .transport
                .send(self.app, TAG_REPLY, &reply.encode())
                .and_then(|()| self.send_data(&data));
            self.busy.store(false, Ordering::Release);
            if data.capacity() > self.staging.capacity() {
                self.staging = data;
            }
            if let Err(e) = sent {
                eprintln!("offload-mpi-device: {e}");
                return ExitCode::from(1);
            }
            if exit {
                return ExitCode::SUCCESS;
            }
        }
    }

    fn device(&self, index: u32) -> Result<&Arc<dyn Device>, (ErrorCode, String)> {
        self.devices.get(index as usize).ok_or((
            ErrorCode::InvalidDevice,
            format!("no device {index} (this server has {})", self.devices.len()),
        ))
    }

    /// Maps `size` bytes of memory at `at`, the address the application reserved: this
    /// process's memory is what its host device uses, so the address is the device's
    /// on both sides. A taken address is `INVALID_VALUE` (the application tries another).
    fn place(&mut self, at: usize, size: usize) -> Result<usize, (ErrorCode, String)> {
        // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping; anonymous
        // read-write memory at `at`, or a failure.
        let got = unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                size.max(1),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                -1,
                0,
            )
        };
        if got == libc::MAP_FAILED || got as usize != at {
            if got != libc::MAP_FAILED {
                // An old kernel ignoring the flag placed it elsewhere: not usable.
                // SAFETY: the mapping just made, unused.
                unsafe { libc::munmap(got, size.max(1)) };
            }
            return Err((
                ErrorCode::InvalidValue,
                format!("address {at:#x} is taken here"),
            ));
        }
        self.placed.insert(at);
        Ok(at)
    }

    fn handle(&mut self) -> u64 {
        self.next_handle += 1;
        self.next_handle
    }

    fn stream(&mut self, device: u32) -> Result<Arc<dyn Stream>, (ErrorCode, String)> {
        if let Some(s) = self.streams.get(&device) {
            return Ok(s.clone());
        }
        let stream = self
            .device(device)?
            .create_stream()
            .map_err(|e| (e.code, e.details.clone()))?;
        self.streams.insert(device, stream.clone());
        Ok(stream)
    }

    fn serve(&mut self, request: Request) -> Served {
        let failed = |e: offload::runtime::error::Error| (e.code, e.details.clone());
        match request {
            Request::Hello => Ok((Reply::Devices(self.describe()), Vec::new())),
            Request::Exit => Ok((Reply::Done, Vec::new())),
            Request::Alloc {
                device,
                kind,
                size,
                at,
            } => {
                let kind = AllocKind::try_from(kind).map_err(|k| {
                    (
                        ErrorCode::InvalidEnumeration,
                        format!("allocation kind {k}"),
                    )
                })?;
                let own_memory = matches!(
                    self.device(device)?.device_type(),
                    DeviceType::Host | DeviceType::Cpu
                );
                let address = if at != 0 && own_memory {
                    self.place(at as usize, size as usize)?
                } else {
                    self.device(device)?
                        .allocate(size as usize, kind)
                        .map_err(failed)?
                };
                Ok((Reply::Value(address as u64), Vec::new()))
            }
            Request::Free {
                device,
                kind,
                address,
                size,
            } => {
                if self.placed.remove(&(address as usize)) {
                    // SAFETY: a mapping `place` made, of this size, which nothing uses now.
                    unsafe { libc::munmap(address as *mut libc::c_void, size as usize) };
                    return Ok((Reply::Done, Vec::new()));
                }
                let kind = AllocKind::try_from(kind).map_err(|k| {
                    (
                        ErrorCode::InvalidEnumeration,
                        format!("allocation kind {k}"),
                    )
                })?;
                self.device(device)?
                    .free(address as usize, size as usize, kind)
                    .map_err(failed)?;
                Ok((Reply::Done, Vec::new()))
            }
            Request::Write {
                device,
                address,
                size,
            } => {
                // The data follows whether or not the device exists: read it first.
                let staging = self.receive_data(size)?;
                let copied = self.device(device).and_then(|d| {
                    d.copy_to_device(address as usize, staging.as_ptr() as usize, size as usize)
                        .map_err(failed)
                });
                self.staging = staging;
                copied?;
                Ok((Reply::Done, Vec::new()))
            }
            Request::Read {
                device,
                address,
                size,
            } => {
                // Read into the staging buffer; `run` takes it back after sending.
                let mut data = std::mem::take(&mut self.staging);
                data.resize(size as usize, 0);
                self.device(device)?
                    .copy_from_device(data.as_mut_ptr() as usize, address as usize, data.len())
                    .map_err(failed)?;
                // The data follows the reply, so a failed read sends none.
                Ok((Reply::Done, data))
            }
            Request::Fill {
                device,
                address,
                size,
                pattern,
            } => {
                self.device(device)?
                    .fill(address as usize, &pattern, size as usize)
                    .map_err(failed)?;
                Ok((Reply::Done, Vec::new()))
            }
            Request::CopyWithin {
                device,
                dst,
                src,
                size,
            } => {
                self.device(device)?
                    .copy_within_device(dst as usize, src as usize, size as usize)
                    .map_err(failed)?;
                Ok((Reply::Done, Vec::new()))
            }
            Request::CheckImage { device, size } => {
                let mut image = self.receive_data(size)?;
                image.truncate(size as usize);
                self.device(device)?.check_image(&image).map_err(failed)?;
                Ok((Reply::Done, Vec::new()))
            }
            Request::LoadProgram { device, size } => {
                let mut image = self.receive_data(size)?;
                image.truncate(size as usize);
                let program = self.device(device)?.load_program(&image).map_err(failed)?;
                let handle = self.handle();
                self.programs.insert(handle, program);
                Ok((Reply::Value(handle), Vec::new()))
            }
            Request::DestroyProgram { program } => {
                self.kernels.retain(|_, (p, _)| *p != program);
                self.programs
                    .remove(&program)
                    .ok_or((ErrorCode::InvalidArgument, format!("no program {program}")))?;
                Ok((Reply::Done, Vec::new()))
            }
            Request::Symbol {
                program,
                kind,
                name,
            } => self.symbol(program, kind, &name),
            Request::Launch {
                device,
                kernel,
                dimensions,
                groups,
                group_size,
                dynamic_shared,
                arguments,
            } => {
                let (_, found) = self
                    .kernels
                    .get(&kernel)
                    .cloned()
                    .ok_or((ErrorCode::InvalidArgument, format!("no kernel {kernel}")))?;
                let op = StreamOp::Launch {
                    kernel: found,
                    config: LaunchConfig {
                        dimensions,
                        num_groups: groups,
                        group_size,
                        dyn_shared_memory: dynamic_shared as usize,
                        cooperative: false,
                    },
                    args: KernelArgs { bytes: arguments },
                };
                let stream = self.stream(device)?;
                stream.enqueue("olLaunchKernel", op, None).map_err(failed)?;
                stream.synchronize().map_err(failed)?;
                Ok((Reply::Done, Vec::new()))
            }
        }
    }

    /// A program's symbol: with `kind` u32::MAX, which kind it is; a kernel's handle; a
    /// global's address and size.
    fn symbol(&mut self, program: u64, kind: u32, name: &str) -> Served {
        let found = self
            .programs
            .get(&program)
            .cloned()
            .ok_or((ErrorCode::InvalidArgument, format!("no program {program}")))?;
        let failed = |e: offload::runtime::error::Error| (e.code, e.details.clone());
        if kind == u32::MAX {
            let kind = found.symbol_kind(name).ok_or((
                ErrorCode::NotFound,
                format!("the program has no symbol named '{name}'"),
            ))?;
            return Ok((Reply::Value(kind as u64), Vec::new()));
        }
        match SymbolKind::try_from(kind) {
            Ok(SymbolKind::Kernel) => {
                let kernel = found.kernel(name).map_err(failed)?;
                let handle = self.handle();
                self.kernels.insert(handle, (program, kernel));
                Ok((Reply::Value(handle), Vec::new()))
            }
            Ok(SymbolKind::GlobalVariable) => {
                let global = found.global(name).map_err(failed)?;
                Ok((
                    Reply::Pair(global.address as u64, global.size as u64),
                    Vec::new(),
                ))
            }
            Err(k) => Err((ErrorCode::InvalidEnumeration, format!("symbol kind {k}"))),
        }
    }

    /// Every device's info, with the name saying which rank serves it.
    fn describe(&self) -> Vec<Vec<(u32, offload::plugin::InfoValue)>> {
        let rank = self.transport.rank();
        self.devices
            .iter()
            .map(|d| {
                DeviceInfo::all()
                    .filter_map(|key| {
                        let value = d.info(key).ok()?;
                        let value = match (key, value) {
                            (DeviceInfo::Name, offload::plugin::InfoValue::Str(s)) => {
                                offload::plugin::InfoValue::Str(format!("rank {rank}: {s}"))
                            }
                            (_, v) => v,
                        };
                        Some((key as u32, value))
                    })
                    .collect()
            })
            .collect()
    }

    /// Receives `size` bytes of data into the staging buffer, which it hands over (at
    /// least `size` bytes long; a write gives it back for the next one).
    fn receive_data(&mut self, size: u64) -> Result<Vec<u8>, (ErrorCode, String)> {
        let mut data = std::mem::take(&mut self.staging);
        if data.len() < size as usize {
            data.resize(size as usize, 0);
        }
        for (offset, len) in fragments::pieces(size, DEFAULT_FRAGMENT) {
            let piece = &mut data[offset as usize..(offset + len) as usize];
            let got = self
                .transport
                .receive_into(self.app, TAG_DATA, None, piece)
                .map_err(|e| (ErrorCode::BackendFailure, e))?;
            if got as u64 != len {
                return Err((
                    ErrorCode::InvalidSize,
                    format!("a data fragment of {got} bytes, expected {len}"),
                ));
            }
        }
        Ok(data)
    }

    fn send_data(&self, data: &[u8]) -> Result<(), String> {
        for (offset, len) in fragments::pieces(data.len() as u64, DEFAULT_FRAGMENT) {
            let piece = &data[offset as usize..(offset + len) as usize];
            self.transport.send(self.app, TAG_DATA, piece)?;
        }
        Ok(())
    }
}
