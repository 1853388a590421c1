//! `offload-mpi-device`: serves every device of this process (the host, and GPUs when
//! present) to the application, the last rank of the MPI job:
//!
//! ```text
//! mpirun -np 2 offload-mpi-device : -np 1 ./app
//! ```
//!
//! It takes requests in order until the application says `Exit` (liboffload does at
//! exit), answering each on the tag of its exchange; a queue's sync that must wait for
//! kernels is answered by a thread of its own, so the server goes on meanwhile. Every
//! failure goes back as an error reply naming this rank.

mod app_watch;
mod fault;
mod host_code;
mod lifetime;
mod memory;
mod orphan;
mod output;
mod peer;
mod queues;
mod transfer;

use memory::{MemoryTable, Region};
use offload::plugin::foundation::copy;
use offload::plugin::foundation::error::ErrorCode;
use offload::plugin::{
    check_launch, launch_now, AllocKind, Backend, Device, DeviceInfo, DeviceType, Kernel,
    KernelArgs, LaunchConfig, LaunchLimits, Program, Stream, StreamOp, SymbolKind,
};
use offload::plugins::remote::wire::{self, Reply, Request, INLINE_LIMIT};
use offload_remote_mpi::in_flight::InFlight;
use offload_remote_mpi::transport::{Transport, HEARTBEAT, TAG_HEARTBEAT, TAG_REQUEST};
use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

struct Server {
    transport: Arc<Transport>,
    /// How many requests are being served (here or by a waiting thread): while any is,
    /// the heartbeat thread says the server is alive.
    busy: Arc<AtomicUsize>,
    /// The tag of the exchange being served: its data and reply carry it.
    tag: i32,
    /// Threads answering a queue's sync when its kernels ended (joined at exit).
    waiters: Vec<std::thread::JoinHandle<()>>,
    app: i32,
    devices: Vec<Arc<dyn Device>>,
    /// Loaded programs (with their device) and found kernels, by the handle the
    /// application holds.
    programs: HashMap<u64, (u32, Arc<dyn Program>)>,
    kernels: HashMap<u64, (u64, Arc<dyn Kernel>)>,
    next_handle: u64,
    /// A stream per queue of the application, for the launches it queues without
    /// waiting (launches it waits for run at once), and the first failure of each not
    /// yet reported (by `Sync`).
    queues: HashMap<u64, Arc<dyn Stream>>,
    queue_failures: HashMap<u64, (ErrorCode, String)>,
    /// Where transferred data lands, reused (touched once, not at every copy).
    staging: Vec<u8>,
    /// What memory was handed out, for transfers in place.
    memory: MemoryTable,
    /// Whether the host device's memory is placed at the application's address and
    /// read and written in place. `OFFLOAD_MPI_PLACE=0` makes the server treat it as it
    /// treats a GPU's memory (its own address, copies through the device a fragment at
    /// a time): the path the tests take to check that one.
    place: bool,
    /// The exchanges not answered yet, for the news of a fault (see `fault`).
    open_tags: Arc<fault::OpenTags>,
    /// The application's process where it is on this host, watched by the heartbeat
    /// thread (see `app_watch`); forgotten at `Exit`.
    app_process: Arc<parking_lot::Mutex<Option<app_watch::AppProcess>>>,
    /// Set at `Exit`: the application's silence from then on is no sign (see `orphan`).
    farewell: Arc<AtomicBool>,
    /// Whether the request being served may run device code: then what it printed goes
    /// with its reply.
    collect_output: bool,
    /// Serving the application's `Exit`: its reply takes all the output left.
    exiting: bool,
    /// This process's standard output, captured for the application (see `output`).
    capture: Option<Arc<output::Capture>>,
    /// The application's objects whose code is mapped here (by first address).
    mirrored: std::collections::HashSet<u64>,
    /// Replies posted and not known taken yet: the next request is served meanwhile.
    replies: InFlight,
}

/// The largest image a server takes (it is held whole in memory before it is loaded).
const MAX_IMAGE: u64 = 4 << 30;

/// How many requests in a row may fail to arrive before the server takes MPI for
/// broken and ends.
const MAX_UNREADABLE_REQUESTS: u32 = 100;

/// How many replies may be on their way (not known taken) before the server waits for
/// them.
const MAX_REPLIES_IN_FLIGHT: usize = 64;

/// How many failed launches of queues without a stream the server keeps for their
/// syncs.
const MAX_UNKNOWN_QUEUE_FAILURES: usize = 4096;

/// What follows a reply: nothing, or a read's data (`size` bytes of `device`'s memory
/// at `address`); or no reply now, a thread of its own answering later.
enum Outgoing {
    Nothing,
    Later,
    Memory {
        device: u32,
        address: u64,
        size: u64,
    },
}

/// A request's answer, and the bytes that follow it.
type Served = Result<(Reply, Outgoing), (ErrorCode, String)>;

fn main() -> ExitCode {
    let mut transport = match lifetime::open(offload::plugins::remote::settings::timeout()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("offload-mpi-device: {e}");
            return ExitCode::from(1);
        }
    };
    lifetime::arm_slow_hook(&mut transport);
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
    let busy = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let app_process = Arc::new(parking_lot::Mutex::new(None));
    let farewell = Arc::new(AtomicBool::new(false));
    let heartbeat = start_heartbeat(
        transport.clone(),
        app,
        busy.clone(),
        stop.clone(),
        (app_process.clone(), farewell.clone()),
    );
    let open_tags = Arc::new(fault::OpenTags::default());
    fault::watch(&transport, app, open_tags.clone());
    let mut server = Server {
        transport,
        busy,
        tag: 0,
        waiters: Vec::new(),
        app,
        devices,
        programs: HashMap::new(),
        kernels: HashMap::new(),
        next_handle: 1,
        queues: HashMap::new(),
        queue_failures: HashMap::new(),
        staging: Vec::new(),
        memory: MemoryTable::default(),
        place: std::env::var("OFFLOAD_MPI_PLACE").map_or(true, |v| v.trim() != "0"),
        app_process,
        farewell,
        open_tags,
        collect_output: false,
        exiting: false,
        capture: output::Capture::start().map(Arc::new),
        mirrored: Default::default(),
        replies: InFlight::default(),
    };
    let mut code = server.run();
    // The last replies are waited for (a server that failed leaves them to MPI).
    if code != 0 {
        server.replies = InFlight::default();
    } else if let Err(e) = server.transport.finish(app, &mut server.replies) {
        eprintln!("offload-mpi-device: the last replies were not taken: {e}");
        code = 1;
    }
    // MPI is finalised when the last reference to the transport goes: the heartbeat's
    // first, then the server's (within the timeout: a rank may be gone).
    stop.store(true, Ordering::Release);
    if let Some(handle) = heartbeat {
        let _ = handle.join();
    }
    let transport = server.transport.clone();
    drop(server);
    match Arc::try_unwrap(transport) {
        Ok(transport) => ExitCode::from(lifetime::close(transport, code) as u8),
        // A queue's waiter still holds it (stuck in a kernel): leave without MPI.
        Err(_) => lifetime::leave(code),
    }
}

/// While the server is busy, the application hears from it every `HEARTBEAT`, so that
/// a long kernel or transfer is not taken for a dead server; and at every beat the
/// application's process, where it is on this host, is looked at (`app_watch`), or
/// elsewhere its heartbeats are taken and its silence weighed (`orphan`). The thread
/// ends when `stop` is set (its reference to the transport must go before MPI is
/// finalised).
fn start_heartbeat(
    transport: Arc<Transport>,
    app: i32,
    busy: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    (app_process, farewell): (
        Arc<parking_lot::Mutex<Option<app_watch::AppProcess>>>,
        Arc<AtomicBool>,
    ),
) -> Option<std::thread::JoinHandle<()>> {
    let orphan = orphan::Orphan::new(offload::plugins::remote::settings::orphan_timeout());
    let beat = move || {
        let mut beating = true;
        while !stop.load(Ordering::Acquire) {
            std::thread::sleep(HEARTBEAT);
            if beating && busy.load(Ordering::Acquire) > 0 && !lifetime::is_slow() {
                beating = transport.send(app, TAG_HEARTBEAT, &[]).is_ok();
            }
            // The same beat looks at the application's process (on this host), or at
            // how long it has been silent (elsewhere).
            let watched = app_process.lock().map(|p| p.is_gone());
            if watched == Some(true) {
                eprintln!(
                    "offload-mpi-device: the application ended without stopping this server; ending"
                );
                lifetime::leave(3);
            }
            // The application's heartbeats are taken at every beat, wherever it runs: left
            // in MPI they would pile up, and every receive would search past them.
            transport.take_heartbeats(app);
            if watched.is_none() && !farewell.load(Ordering::Acquire) && !lifetime::is_slow() {
                if let Some(why) = orphan.check(transport.has_beaten(app), transport.silence(app)) {
                    eprintln!("offload-mpi-device (rank {}): {why}", transport.rank());
                    lifetime::leave(3);
                }
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
    fn run(&mut self) -> i32 {
        let mut unreadable = 0;
        loop {
            let next = self
                .transport
                .receive_sending(self.app, TAG_REQUEST, &mut self.replies);
            let bytes = match next {
                Ok(Ok(b)) => {
                    unreadable = 0;
                    b
                }
                // Earlier replies not taken.
                Err(e) => return self.app_gone(&e.text),
                // A request whose bytes never came: without them there is no tag to
                // answer on; the next request is served. MPI failing again and again
                // is the end.
                Ok(Err(e)) => {
                    eprintln!("offload-mpi-device: a request did not come whole: {e}");
                    unreadable += 1;
                    if unreadable >= MAX_UNREADABLE_REQUESTS {
                        return 1;
                    }
                    continue;
                }
            };
            let (tag, request) = match wire::open_envelope(&bytes) {
                Ok(opened) => opened,
                Err(e) if bytes.len() >= 4 => {
                    // Its tag is readable: the refusal goes where the answer would.
                    let tag = i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
                    let refused = (
                        ErrorCode::InvalidArgument,
                        format!("a request it cannot read: {}", e.0),
                    );
                    self.tag = tag;
                    let _ = self.answer(Err(refused));
                    continue;
                }
                Err(e) => {
                    // No tag, so no answer: noted where tracing is on (a flood of these
                    // must not flood the output).
                    offload::plugin::foundation::flags::trace(|| {
                        format!("offload-mpi-device: a request without a tag: {}", e.0)
                    });
                    continue;
                }
            };
            self.tag = tag;
            self.busy.fetch_add(1, Ordering::AcqRel);
            if !request.is_answered() {
                // A queued launch: no answer; its failure waits for the queue's sync.
                let queue = match request {
                    Request::Launch { stream, .. } => stream,
                    _ => 0,
                };
                if let Err(e) = self.serve(request) {
                    // Kept for the queue's sync; for queues this server never saw, only
                    // so many (numbers from a broken request must not grow it for ever).
                    if self.queues.contains_key(&queue)
                        || self.queue_failures.len() < MAX_UNKNOWN_QUEUE_FAILURES
                    {
                        self.queue_failures.entry(queue).or_insert(e);
                    }
                }
                self.busy.fetch_sub(1, Ordering::AcqRel);
                continue;
            }
            self.collect_output = request.may_run_device_code();
            let exit = request == Request::Exit;
            self.exiting = exit;
            if exit {
                // The application ends after this: no longer a sign of a crash.
                self.farewell.store(true, Ordering::Release);
                *self.app_process.lock() = None;
                // Queues' syncs still waiting are answered first.
                for waiter in self.waiters.drain(..) {
                    let _ = waiter.join();
                }
            }
            self.open_tags.open(tag);
            let served = self.serve(request);
            let sent = self.answer(served);
            self.open_tags.close(tag);
            self.busy.fetch_sub(1, Ordering::AcqRel);
            if let Err(e) = sent {
                return self.app_gone(&e);
            }
            self.waiters.retain(|w| !w.is_finished());
            if exit {
                return 0;
            }
        }
    }

    /// The end of serving when the application stopped taking answers (it gave this
    /// server up, or is gone): nothing will be asked of it any more. The exit status.
    fn app_gone(&self, why: &str) -> i32 {
        eprintln!(
            "offload-mpi-device (rank {}): the application did not take an answer: {why}",
            self.transport.rank()
        );
        1
    }

    /// Sends the answer to the exchange being served, and the data that follows it.
    fn answer(&mut self, served: Served) -> Result<(), String> {
        let (reply, outgoing) = served.unwrap_or_else(|(code, details)| {
            let details = format!("rank {}: {details}", self.transport.rank());
            let code = code as u32;
            (Reply::Error { code, details }, Outgoing::Nothing)
        });
        if matches!(outgoing, Outgoing::Later) {
            return Ok(());
        }
        let capture = self.capture.as_deref().filter(|_| self.collect_output);
        let everything = self.exiting;
        let reply = output::Capture::with_output(capture, reply, everything);
        self.transport
            .post(self.app, self.tag, reply.encode(), &mut self.replies)?;
        if self.replies.len() >= MAX_REPLIES_IN_FLIGHT {
            // An application that asks and does not take its answers is not let grow
            // this list for ever.
            self.transport.finish(self.app, &mut self.replies)?;
        }
        let Outgoing::Memory {
            device,
            address,
            size,
        } = outgoing
        else {
            return Ok(());
        };
        // A device that fails midway: the application hears so (a short fragment), and
        // its read fails; the server goes on.
        if let Err((_, e)) = self.send_memory(self.app, device, address, size) {
            eprintln!("offload-mpi-device: a read of {size} bytes failed midway: {e}");
            transfer::give_up(&self.transport, self.app, self.tag);
        }
        Ok(())
    }

    fn device(&self, index: u32) -> Result<&Arc<dyn Device>, (ErrorCode, String)> {
        self.devices.get(index as usize).ok_or((
            ErrorCode::InvalidDevice,
            format!("no device {index} (this server has {})", self.devices.len()),
        ))
    }

    fn handle(&mut self) -> u64 {
        self.next_handle += 1;
        self.next_handle
    }

    fn serve(&mut self, request: Request) -> Served {
        let failed = |e: offload::plugin::foundation::error::Error| (e.code, e.details.clone());
        match request {
            Request::Hello { pid, host } => {
                *self.app_process.lock() = app_watch::AppProcess::on_this_host(pid, &host);
                Ok((Reply::Devices(self.describe()), Outgoing::Nothing))
            }
            Request::Exit => Ok((Reply::Done, Outgoing::Nothing)),
            Request::Alloc {
                device,
                kind,
                size,
                at,
                shared,
            } => {
                let kind = AllocKind::try_from(kind).map_err(|k| {
                    (
                        ErrorCode::InvalidEnumeration,
                        format!("allocation kind {k}"),
                    )
                })?;
                if size == 0 {
                    // As the application's runtime refuses it (a device cannot allocate
                    // nothing).
                    return Err((ErrorCode::InvalidSize, "an allocation of 0 bytes".into()));
                }
                let own = self.own_memory(device)?;
                let placed = at != 0 && own;
                // The application's own shared memory, where this server is on its node
                // (its host name said so in Hello: a server on another host that happens
                // to see the same /dev/shm, as test hosts made of network namespaces do,
                // must not share memory a real cluster could not).
                let same_node = self.app_process.lock().is_some();
                let attached = (placed && same_node && !shared.is_empty())
                    .then(|| memory::attach(&shared, at as usize, size as usize).ok())
                    .flatten();
                let (address, reply) = match attached {
                    Some(address) => (address, Reply::Shared(address as u64)),
                    None => {
                        let address = if placed {
                            memory::place(at as usize, size as usize)?
                        } else {
                            self.device(device)?
                                .allocate(size as usize, kind)
                                .map_err(failed)?
                        };
                        (address, Reply::Value(address as u64))
                    }
                };
                let region = Region {
                    size: size as usize,
                    device,
                    own,
                    placed,
                    program: None,
                    kind: Some(kind),
                };
                self.memory.add(address, region);
                Ok((reply, Outgoing::Nothing))
            }
            // What is freed is what was handed out, as it was: the size and kind this
            // server recorded (the request's are the application's word for them).
            Request::Free {
                device, address, ..
            } => {
                let region = match self.memory.remove(device, address) {
                    Some(region) => region,
                    None => {
                        return Err((
                            ErrorCode::InvalidArgument,
                            format!(
                                "{address:#x} is no allocation of device {device} on this server"
                            ),
                        ))
                    }
                };
                if region.placed {
                    memory::unplace(address as usize, region.size);
                    return Ok((Reply::Done, Outgoing::Nothing));
                }
                let kind = region.kind.unwrap_or(AllocKind::Device);
                self.device(device)?
                    .free(address as usize, region.size, kind)
                    .map_err(failed)?;
                Ok((Reply::Done, Outgoing::Nothing))
            }
            Request::Write {
                device,
                address,
                size,
            } => {
                self.receive_memory(self.app, device, address, size)?;
                Ok((Reply::Done, Outgoing::Nothing))
            }
            Request::Read {
                device,
                address,
                size,
            } => {
                self.memory.check(device, address, size)?;
                let in_place = self.memory.own_range(device, address, size);
                if size <= INLINE_LIMIT {
                    // Small: the data goes inside the reply.
                    let mut data = vec![0u8; size as usize];
                    let len = data.len();
                    match in_place {
                        // SAFETY: `own_range` found these bytes inside memory this
                        // process allocated for the device; nothing writes it meanwhile.
                        Some(at) => copy::copy_slice(&mut data, unsafe {
                            std::slice::from_raw_parts(at as *const u8, len)
                        }),
                        None => self
                            .device(device)?
                            .copy_from_device(data.as_mut_ptr() as usize, address as usize, len)
                            .map_err(failed)?,
                    }
                    return Ok((Reply::Data(data), Outgoing::Nothing));
                }
                self.device(device)?;
                // The data follows the reply, in fragments (see `answer`).
                let memory = Outgoing::Memory {
                    device,
                    address,
                    size,
                };
                Ok((Reply::Done, memory))
            }
            Request::Fill {
                device,
                address,
                size,
                pattern,
            } => {
                self.memory.check(device, address, size)?;
                if pattern.is_empty() || size % pattern.len() as u64 != 0 {
                    return Err((
                        ErrorCode::InvalidSize,
                        format!(
                            "a fill of {size} bytes with a {}-byte pattern (a multiple of the pattern's size is needed)",
                            pattern.len()
                        ),
                    ));
                }
                self.device(device)?
                    .fill(address as usize, &pattern, size as usize)
                    .map_err(failed)?;
                Ok((Reply::Done, Outgoing::Nothing))
            }
            Request::CopyWithin {
                device,
                dst,
                src,
                size,
            } => {
                self.memory.check(device, dst, size)?;
                self.memory.check(device, src, size)?;
                self.device(device)?
                    .copy_within_device(dst as usize, src as usize, size as usize)
                    .map_err(failed)?;
                Ok((Reply::Done, Outgoing::Nothing))
            }
            Request::CheckImage { device, size } => {
                let mut image = self.receive_data(size)?;
                image.truncate(size as usize);
                self.device(device)?.check_image(&image).map_err(failed)?;
                Ok((Reply::Done, Outgoing::Nothing))
            }
            Request::LoadProgram { device, size } => {
                let mut image = self.receive_data(size)?;
                image.truncate(size as usize);
                let program = self.device(device)?.load_program(&image).map_err(failed)?;
                let handle = self.handle();
                self.programs.insert(handle, (device, program));
                Ok((Reply::Value(handle), Outgoing::Nothing))
            }
            Request::MirrorHostCode { device, size } => {
                let mut bytes = self.receive_data(size)?;
                bytes.truncate(size as usize);
                // Only a host device runs the application's CPU code.
                if !self.own_memory(device)? {
                    return Ok((Reply::Done, Outgoing::Nothing));
                }
                let code = wire::HostCode::decode(&bytes)
                    .map_err(|e| (ErrorCode::InvalidArgument, format!("host code: {}", e.0)))?;
                let first = code.segments.first().map_or(0, |s| s.address);
                if self.mirrored.insert(first) {
                    if let Err(e) = host_code::mirror(&code) {
                        self.mirrored.remove(&first);
                        return Err((ErrorCode::OutOfResources, e));
                    }
                }
                Ok((Reply::Done, Outgoing::Nothing))
            }
            Request::DestroyProgram { program } => {
                self.kernels.retain(|_, (p, _)| *p != program);
                self.memory.forget_program(program);
                self.programs
                    .remove(&program)
                    .ok_or((ErrorCode::InvalidArgument, format!("no program {program}")))?;
                Ok((Reply::Done, Outgoing::Nothing))
            }
            Request::Symbol {
                program,
                kind,
                name,
            } => self.symbol(program, kind, &name),
            Request::Launch {
                stream: queue,
                device,
                kernel,
                dimensions,
                groups,
                group_size,
                dynamic_shared,
                cooperative,
                c_parameters,
                arguments,
            } => {
                let (_, found) = self
                    .kernels
                    .get(&kernel)
                    .cloned()
                    .ok_or((ErrorCode::InvalidArgument, format!("no kernel {kernel}")))?;
                let config = LaunchConfig::new(
                    dimensions,
                    groups,
                    group_size,
                    dynamic_shared as usize,
                    cooperative,
                );
                let args = KernelArgs {
                    bytes: arguments.into(),
                    c_parameters,
                };
                // The one check the application's runtime makes too: a request is not
                // trusted, and streams run launches unchecked.
                let on = self.device(device)?;
                let limits = LaunchLimits::from_info(|key| on.info(key)).tighter(found.limits());
                check_launch(found.as_ref(), limits, &config, &args, &|| {
                    format!("kernel {kernel} on device {device}")
                })
                .map_err(failed)?;
                if queue == 0 {
                    // Waited for: run as the application's runtime runs a launch without
                    // a queue (the host device: on this thread, no worker to wake).
                    launch_now(on.as_ref(), &found, &config, &args).map_err(failed)?;
                    return Ok((Reply::Done, Outgoing::Nothing));
                }
                let op = StreamOp::Launch {
                    kernel: found,
                    config,
                    args,
                };
                let stream = self.queue(queue, device)?;
                stream.enqueue("olLaunchKernel", op, None).map_err(failed)?;
                Ok((Reply::Done, Outgoing::Nothing))
            }
            Request::WriteInline {
                device,
                address,
                data,
            } => {
                self.memory.check(device, address, data.len() as u64)?;
                match self.memory.own_range(device, address, data.len() as u64) {
                    // SAFETY: `own_range` found these bytes inside memory this process
                    // allocated for the device; nothing else touches it meanwhile.
                    Some(at) => unsafe {
                        copy::copy_bytes(at as *mut u8, data.as_ptr(), data.len())
                    },
                    None => self
                        .device(device)?
                        .copy_to_device(address as usize, data.as_ptr() as usize, data.len())
                        .map_err(failed)?,
                }
                Ok((Reply::Done, Outgoing::Nothing))
            }
            Request::CooperativeGroups {
                kernel,
                dimensions,
                groups,
                group_size,
                dynamic_shared,
            } => {
                let (_, found) = self
                    .kernels
                    .get(&kernel)
                    .ok_or((ErrorCode::InvalidArgument, format!("no kernel {kernel}")))?;
                let config = LaunchConfig::new(
                    dimensions,
                    groups,
                    group_size,
                    dynamic_shared as usize,
                    true,
                );
                let n = found.max_cooperative_groups(&config).map_err(failed)?;
                Ok((Reply::Value(u64::from(n)), Outgoing::Nothing))
            }
            Request::Sync { stream } => self.sync_queue(stream, false),
            Request::EndStream { stream } => self.sync_queue(stream, true),
            Request::SendTo {
                device,
                address,
                size,
                peer,
            } => {
                let peer = self.peer(peer)?;
                let sent = self
                    .memory
                    .check(device, address, size)
                    .and_then(|()| self.send_memory(peer, device, address, size));
                if sent.is_err() {
                    transfer::give_up(&self.transport, peer, self.tag);
                }
                sent?;
                Ok((Reply::Done, Outgoing::Nothing))
            }
            Request::ReceiveFrom {
                device,
                address,
                size,
                peer,
            } => {
                let peer = self.peer(peer)?;
                self.receive_memory(peer, device, address, size)?;
                Ok((Reply::Done, Outgoing::Nothing))
            }
        }
    }

    /// Whether `device`'s memory is this process's own (a host device's, unless
    /// `OFFLOAD_MPI_PLACE=0`).
    fn own_memory(&self, device: u32) -> Result<bool, (ErrorCode, String)> {
        let host = matches!(
            self.device(device)?.device_type(),
            DeviceType::Host | DeviceType::Cpu
        );
        Ok(host && self.place)
    }

    /// A program's symbol: with `kind` u32::MAX, which kind it is; a kernel's handle; a
    /// global's address and size.
    fn symbol(&mut self, program: u64, kind: u32, name: &str) -> Served {
        let found = self
            .programs
            .get(&program)
            .cloned()
            .ok_or((ErrorCode::InvalidArgument, format!("no program {program}")))?;
        let (device, found) = found;
        let failed = |e: offload::plugin::foundation::error::Error| (e.code, e.details.clone());
        if kind == u32::MAX {
            let kind = found.symbol_kind(name).ok_or((
                ErrorCode::NotFound,
                format!("the program has no symbol named '{name}'"),
            ))?;
            return Ok((Reply::Value(kind as u64), Outgoing::Nothing));
        }
        match SymbolKind::try_from(kind) {
            Ok(SymbolKind::Kernel) => {
                let kernel = found.kernel(name).map_err(failed)?;
                let handle = self.handle();
                self.kernels.insert(handle, (program, kernel));
                Ok((Reply::Value(handle), Outgoing::Nothing))
            }
            Ok(SymbolKind::GlobalVariable) => {
                let global = found.global(name).map_err(failed)?;
                let region = Region {
                    size: global.size,
                    device,
                    own: self.own_memory(device)?,
                    placed: false,
                    program: Some(program),
                    kind: None,
                };
                self.memory.add(global.address, region);
                Ok((
                    Reply::Pair(global.address as u64, global.size as u64),
                    Outgoing::Nothing,
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
                // A vendor handle means nothing outside this process.
                DeviceInfo::all()
                    .filter(|key| !key.is_native())
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
    /// least `size` bytes long; a write gives it back for the next one). Memory too short
    /// for it is an error, the data taken and dropped.
    fn receive_data(&mut self, size: u64) -> Result<Vec<u8>, (ErrorCode, String)> {
        if size > MAX_IMAGE {
            transfer::drain(&self.transport, self.app, self.tag, size);
            return Err((
                ErrorCode::InvalidSize,
                format!("an image of {size} bytes: this server takes images of at most {MAX_IMAGE} bytes"),
            ));
        }
        let mut data = self.take_staging();
        if let Err(e) = transfer::grow(&mut data, size) {
            self.keep_staging(data, false);
            transfer::drain(&self.transport, self.app, self.tag, size);
            return Err(e);
        }
        match transfer::receive(
            &self.transport,
            self.app,
            self.tag,
            &mut data[..size as usize],
        ) {
            Ok(()) => Ok(data),
            Err(e) => {
                self.keep_staging(data, e.buffer_in_use);
                Err((ErrorCode::BackendFailure, e.text))
            }
        }
    }
}
