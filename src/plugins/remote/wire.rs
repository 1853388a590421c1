//! The messages between the application and a device server: each request and reply is
//! one byte string (a kind byte, then little-endian fields; strings and byte blocks are
//! length-prefixed with 64-bit lengths). Bulk data (copies, images) does not travel in
//! them but in the fragments that follow (see `fragments`). Decoding never panics: a
//! short or unknown message is an error naming what was wrong.

use crate::plugin::foundation::aligned_bytes::AlignedBytes;
use crate::plugin::foundation::copy;
use crate::plugin::InfoValue;

/// Transfers up to this size travel inside the request (a write) or the reply (a read):
/// one message each way, as small copies need, instead of a handshake per fragment.
pub const INLINE_LIMIT: u64 = 16 << 10;

/// One request of the application to a server.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// Which devices the server has, and everything about them. The application's
    /// process id and host name: a server on the same host ends when that process is
    /// gone without saying `Exit` (it crashed), rather than wait for it for ever.
    Hello {
        pid: u32,
        host: String,
    },
    /// `at`: the address the application reserved for it (0: anywhere); a server whose
    /// device is its own memory maps it there, so the address is the same on both sides
    /// and never another device's.
    /// `shared`: for memory the application's host reads and writes too (HOST and
    /// MANAGED), the name of a shared-memory object the application made and mapped at
    /// `at`; a server on the same node maps it there too, and the memory is one.
    Alloc {
        device: u32,
        kind: u32,
        size: u64,
        at: u64,
        shared: String,
    },
    Free {
        device: u32,
        kind: u32,
        address: u64,
        size: u64,
    },
    /// `size` bytes follow, in fragments, to be written at `address`.
    Write {
        device: u32,
        address: u64,
        size: u64,
    },
    /// `size` bytes at `address` are wanted, in fragments after the reply.
    Read {
        device: u32,
        address: u64,
        size: u64,
    },
    Fill {
        device: u32,
        address: u64,
        size: u64,
        pattern: Vec<u8>,
    },
    /// An image of `size` bytes follows, in fragments.
    LoadProgram {
        device: u32,
        size: u64,
    },
    DestroyProgram {
        program: u64,
    },
    /// A `HostCode` of `size` bytes follows, in fragments: the application's code and
    /// read-only data around a program's image, for `device` to see at the application's
    /// addresses (see `host_code`).
    MirrorHostCode {
        device: u32,
        size: u64,
    },
    Symbol {
        program: u64,
        kind: u32,
        name: String,
    },
    /// With `stream` 0 the server runs the kernel and answers when it ended; otherwise
    /// it queues it on that stream of its own and does not answer (a failure is kept
    /// for the stream's next `Sync`), so launches flow without a round trip each and the
    /// server serves other requests while the kernel runs.
    Launch {
        stream: u64,
        device: u32,
        kernel: u64,
        dimensions: u32,
        groups: [u32; 3],
        group_size: [u32; 3],
        dynamic_shared: u64,
        /// All groups resident at once (checked against `CooperativeGroups`).
        cooperative: bool,
        /// The arguments are the kernel's C parameters (`KernelArgs::c_parameters`).
        c_parameters: bool,
        arguments: Vec<u8>,
    },
    Exit,
    /// Whether `device` can run the image of `size` bytes that follows.
    CheckImage {
        device: u32,
        size: u64,
    },
    /// A copy within one device's memory.
    CopyWithin {
        device: u32,
        dst: u64,
        src: u64,
        size: u64,
    },
    /// Half of a copy between two servers: send `size` bytes at `address` straight to
    /// server `peer`, in fragments (the application's data never carries them).
    SendTo {
        device: u32,
        address: u64,
        size: u64,
        peer: u32,
    },
    /// The other half: receive `size` bytes from server `peer` into `address`.
    ReceiveFrom {
        device: u32,
        address: u64,
        size: u64,
        peer: u32,
    },
    /// Waits until everything queued on `stream` ended; answers its first failure.
    Sync {
        stream: u64,
    },
    /// As `Sync`, and the server forgets the stream (the application's queue is gone).
    EndStream {
        stream: u64,
    },
    /// How many groups of this shape a cooperative launch of `kernel` may have.
    CooperativeGroups {
        kernel: u64,
        dimensions: u32,
        groups: [u32; 3],
        group_size: [u32; 3],
        dynamic_shared: u64,
    },
    /// A write of at most `INLINE_LIMIT` bytes, the data in the request itself.
    WriteInline {
        device: u32,
        address: u64,
        data: Vec<u8>,
    },
}

impl Request {
    /// Whether the server answers this request (a queued launch it does not).
    pub fn is_answered(&self) -> bool {
        !matches!(self, Request::Launch { stream, .. } if *stream != 0)
    }

    /// Whether serving it may run device code (kernels, constructors, destructors),
    /// whose printed output goes back with the reply; copies and queries run none.
    pub fn may_run_device_code(&self) -> bool {
        matches!(
            self,
            Request::Launch { .. }
                | Request::Sync { .. }
                | Request::EndStream { .. }
                | Request::LoadProgram { .. }
                | Request::DestroyProgram { .. }
                | Request::Exit
        )
    }

    /// What it asks, in a few words, for error details ("a write of 64 bytes").
    pub fn describe(&self) -> String {
        match self {
            Request::Hello { .. } => "asking for its devices".into(),
            Request::Alloc { size, .. } => format!("an allocation of {size} bytes"),
            Request::Free { size, .. } => format!("freeing {size} bytes"),
            Request::Write { size, .. } => format!("a write of {size} bytes"),
            Request::WriteInline { data, .. } => format!("a write of {} bytes", data.len()),
            Request::Read { size, .. } => format!("a read of {size} bytes"),
            Request::Fill { size, .. } => format!("a fill of {size} bytes"),
            Request::LoadProgram { size, .. } => format!("loading a {size}-byte program"),
            Request::CheckImage { size, .. } => format!("checking a {size}-byte image"),
            Request::DestroyProgram { .. } => "destroying a program".into(),
            Request::MirrorHostCode { size, .. } => {
                format!("mirroring {size} bytes of the application's code")
            }
            Request::Symbol { name, .. } => format!("looking up '{name}'"),
            Request::Launch { .. } => "a kernel launch".into(),
            Request::Exit => "stopping".into(),
            Request::CopyWithin { size, .. } => format!("a copy of {size} bytes within a device"),
            Request::SendTo { size, peer, .. } => format!("sending {size} bytes to rank {peer}"),
            Request::ReceiveFrom { size, peer, .. } => {
                format!("receiving {size} bytes from rank {peer}")
            }
            Request::Sync { .. } | Request::EndStream { .. } => "waiting for a queue".into(),
            Request::CooperativeGroups { .. } => "asking a cooperative launch's limit".into(),
        }
    }
}

/// A server's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    Done,
    /// An address or a handle on the server.
    Value(u64),
    /// Two values (a global's address and size).
    Pair(u64, u64),
    /// A read of at most `INLINE_LIMIT` bytes: the data itself.
    Data(Vec<u8>),
    /// An allocation at this address that maps the application's shared-memory object.
    Shared(u64),
    /// `Hello`'s answer: each device's info, as (`ol_device_info_t`, value) pairs.
    Devices(Vec<Vec<(u32, InfoValue)>>),
    /// The operation failed: its `ol_errc_t` and the server's words.
    Error {
        code: u32,
        details: String,
    },
    /// What the server's device code printed to its standard output while the
    /// operation ran (kernels, constructors), for the application's own standard
    /// output, then the operation's reply itself (never another `Output`).
    Output {
        output: Vec<u8>,
        then: Box<Reply>,
    },
    /// The server is ending (device code faulted there): the application takes it for
    /// lost, with these words.
    Ended {
        details: String,
    },
}

/// Why a message could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError(pub String);

/// Messages are written into 64-byte aligned buffers (see `AlignedBytes`).
struct Writer(AlignedBytes);

impl Writer {
    fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.u64(v.len() as u64);
        self.0.extend_from_slice(v);
        self
    }
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], DecodeError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.data.len());
        let Some(end) = end else {
            return Err(DecodeError(format!(
                "message of {} bytes ends inside {what} (needs {n} more bytes at offset {})",
                self.data.len(),
                self.at
            )));
        };
        let slice = &self.data[self.at..end];
        self.at = end;
        Ok(slice)
    }
    fn u8(&mut self, what: &str) -> Result<u8, DecodeError> {
        Ok(self.take(1, what)?[0])
    }
    fn u32(&mut self, what: &str) -> Result<u32, DecodeError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }
    fn u64(&mut self, what: &str) -> Result<u64, DecodeError> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }
    fn bytes(&mut self, what: &str) -> Result<Vec<u8>, DecodeError> {
        let n = self.u64(what)?;
        let n = usize::try_from(n).map_err(|_| DecodeError(format!("{what} of {n} bytes")))?;
        Ok(copy::to_vec(self.take(n, what)?))
    }
    fn string(&mut self, what: &str) -> Result<String, DecodeError> {
        String::from_utf8(self.bytes(what)?)
            .map_err(|_| DecodeError(format!("{what} is not UTF-8")))
    }
    fn dims(&mut self, what: &str) -> Result<[u32; 3], DecodeError> {
        Ok([self.u32(what)?, self.u32(what)?, self.u32(what)?])
    }
    fn finish(&self) -> Result<(), DecodeError> {
        if self.at == self.data.len() {
            Ok(())
        } else {
            Err(DecodeError(format!(
                "{} bytes left over after the message",
                self.data.len() - self.at
            )))
        }
    }
}

impl Request {
    pub fn encode(&self) -> AlignedBytes {
        self.encode_after(AlignedBytes::new())
    }

    /// The request's bytes appended to `start`.
    fn encode_after(&self, start: AlignedBytes) -> AlignedBytes {
        let mut w = Writer(start);
        match self {
            Request::Hello { pid, host } => w.u8(0).u32(*pid).bytes(host.as_bytes()),
            Request::Alloc {
                device,
                kind,
                size,
                at,
                shared,
            } => w
                .u8(1)
                .u32(*device)
                .u32(*kind)
                .u64(*size)
                .u64(*at)
                .bytes(shared.as_bytes()),
            Request::Free {
                device,
                kind,
                address,
                size,
            } => w.u8(2).u32(*device).u32(*kind).u64(*address).u64(*size),
            Request::Write {
                device,
                address,
                size,
            } => w.u8(3).u32(*device).u64(*address).u64(*size),
            Request::Read {
                device,
                address,
                size,
            } => w.u8(4).u32(*device).u64(*address).u64(*size),
            Request::Fill {
                device,
                address,
                size,
                pattern,
            } => w.u8(5).u32(*device).u64(*address).u64(*size).bytes(pattern),
            Request::LoadProgram { device, size } => w.u8(6).u32(*device).u64(*size),
            Request::DestroyProgram { program } => w.u8(7).u64(*program),
            Request::Symbol {
                program,
                kind,
                name,
            } => w.u8(8).u64(*program).u32(*kind).bytes(name.as_bytes()),
            Request::Launch {
                stream,
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
                w.u8(9)
                    .u64(*stream)
                    .u32(*device)
                    .u64(*kernel)
                    .u32(*dimensions);
                for d in groups.iter().chain(group_size) {
                    w.u32(*d);
                }
                w.u64(*dynamic_shared)
                    .u8(u8::from(*cooperative) | u8::from(*c_parameters) << 1)
                    .bytes(arguments)
            }
            Request::Exit => w.u8(10),
            Request::CheckImage { device, size } => w.u8(11).u32(*device).u64(*size),
            Request::CopyWithin {
                device,
                dst,
                src,
                size,
            } => w.u8(12).u32(*device).u64(*dst).u64(*src).u64(*size),
            Request::SendTo {
                device,
                address,
                size,
                peer,
            } => w.u8(13).u32(*device).u64(*address).u64(*size).u32(*peer),
            Request::ReceiveFrom {
                device,
                address,
                size,
                peer,
            } => w.u8(14).u32(*device).u64(*address).u64(*size).u32(*peer),
            Request::Sync { stream } => w.u8(15).u64(*stream),
            Request::EndStream { stream } => w.u8(16).u64(*stream),
            Request::WriteInline {
                device,
                address,
                data,
            } => w.u8(17).u32(*device).u64(*address).bytes(data),
            Request::CooperativeGroups {
                kernel,
                dimensions,
                groups,
                group_size,
                dynamic_shared,
            } => {
                w.u8(18).u64(*kernel).u32(*dimensions);
                for d in groups.iter().chain(group_size) {
                    w.u32(*d);
                }
                w.u64(*dynamic_shared)
            }
            Request::MirrorHostCode { device, size } => w.u8(19).u32(*device).u64(*size),
        };
        w.0
    }

    pub fn decode(data: &[u8]) -> Result<Request, DecodeError> {
        let mut r = Reader { data, at: 0 };
        let request = match r.u8("the request kind")? {
            0 => Request::Hello {
                pid: r.u32("process id")?,
                host: r.string("host name")?,
            },
            1 => Request::Alloc {
                device: r.u32("device")?,
                kind: r.u32("allocation kind")?,
                size: r.u64("size")?,
                at: r.u64("address")?,
                shared: r.string("shared memory name")?,
            },
            2 => Request::Free {
                device: r.u32("device")?,
                kind: r.u32("allocation kind")?,
                address: r.u64("address")?,
                size: r.u64("size")?,
            },
            3 => Request::Write {
                device: r.u32("device")?,
                address: r.u64("address")?,
                size: r.u64("size")?,
            },
            4 => Request::Read {
                device: r.u32("device")?,
                address: r.u64("address")?,
                size: r.u64("size")?,
            },
            5 => Request::Fill {
                device: r.u32("device")?,
                address: r.u64("address")?,
                size: r.u64("size")?,
                pattern: r.bytes("fill pattern")?,
            },
            6 => Request::LoadProgram {
                device: r.u32("device")?,
                size: r.u64("image size")?,
            },
            7 => Request::DestroyProgram {
                program: r.u64("program")?,
            },
            8 => Request::Symbol {
                program: r.u64("program")?,
                kind: r.u32("symbol kind")?,
                name: r.string("symbol name")?,
            },
            9 => {
                let (stream, device, kernel) =
                    (r.u64("stream")?, r.u32("device")?, r.u64("kernel")?);
                let dimensions = r.u32("dimensions")?;
                let groups = r.dims("group counts")?;
                let group_size = r.dims("group size")?;
                let dynamic_shared = r.u64("dynamic shared memory")?;
                let flags = r.u8("launch flags")?;
                Request::Launch {
                    stream,
                    device,
                    kernel,
                    dimensions,
                    groups,
                    group_size,
                    dynamic_shared,
                    cooperative: flags & 1 != 0,
                    c_parameters: flags & 2 != 0,
                    arguments: r.bytes("kernel arguments")?,
                }
            }
            10 => Request::Exit,
            11 => Request::CheckImage {
                device: r.u32("device")?,
                size: r.u64("image size")?,
            },
            12 => Request::CopyWithin {
                device: r.u32("device")?,
                dst: r.u64("destination")?,
                src: r.u64("source")?,
                size: r.u64("size")?,
            },
            13 => Request::SendTo {
                device: r.u32("device")?,
                address: r.u64("address")?,
                size: r.u64("size")?,
                peer: r.u32("peer rank")?,
            },
            14 => Request::ReceiveFrom {
                device: r.u32("device")?,
                address: r.u64("address")?,
                size: r.u64("size")?,
                peer: r.u32("peer rank")?,
            },
            15 => Request::Sync {
                stream: r.u64("stream")?,
            },
            16 => Request::EndStream {
                stream: r.u64("stream")?,
            },
            17 => Request::WriteInline {
                device: r.u32("device")?,
                address: r.u64("address")?,
                data: r.bytes("data")?,
            },
            18 => Request::CooperativeGroups {
                kernel: r.u64("kernel")?,
                dimensions: r.u32("dimensions")?,
                groups: r.dims("group counts")?,
                group_size: r.dims("group size")?,
                dynamic_shared: r.u64("dynamic shared memory")?,
            },
            19 => Request::MirrorHostCode {
                device: r.u32("device")?,
                size: r.u64("host code size")?,
            },
            other => {
                return Err(DecodeError(format!(
                    "unknown request kind {other} (expected 0 to 19)"
                )))
            }
        };
        r.finish()?;
        Ok(request)
    }
}

/// The application's code and read-only data as a server maps them at the
/// application's addresses: host function pointers and vtables that reach a kernel
/// (see `host_code`) then work there as they do on the application's host device.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostCode {
    /// Ranges of the application's memory and their bytes.
    pub segments: Vec<HostSegment>,
    /// Pointers to other libraries' symbols in those ranges (or in the writable pages
    /// of the function-call table beside them), which the server sets to its own
    /// copies of the symbols.
    pub imports: Vec<HostImport>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct HostSegment {
    pub address: u64,
    pub executable: bool,
    /// The object's data (global variables as they were when sent): writable there.
    pub writable: bool,
    pub bytes: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct HostImport {
    /// Where the pointer lives.
    pub slot: u64,
    pub addend: i64,
    pub name: String,
}

impl HostCode {
    pub fn encode(&self) -> AlignedBytes {
        let mut w = Writer(AlignedBytes::new());
        w.u64(self.segments.len() as u64);
        for s in &self.segments {
            let flags = u8::from(s.executable) | u8::from(s.writable) << 1;
            w.u64(s.address).u8(flags).bytes(&s.bytes);
        }
        w.u64(self.imports.len() as u64);
        for i in &self.imports {
            w.u64(i.slot).u64(i.addend as u64).bytes(i.name.as_bytes());
        }
        w.0
    }

    pub fn decode(data: &[u8]) -> Result<HostCode, DecodeError> {
        let mut r = Reader { data, at: 0 };
        let mut code = HostCode::default();
        // Counts are checked against what is left (each item takes at least 9 bytes),
        // so a bad count cannot ask for a huge allocation.
        let count = |r: &mut Reader, what: &str| -> Result<usize, DecodeError> {
            let n = r.u64(what)?;
            let left = (r.data.len() - r.at) as u64;
            if n > left / 9 {
                return Err(DecodeError(format!("{n} {what} in {left} bytes")));
            }
            Ok(n as usize)
        };
        for _ in 0..count(&mut r, "segments")? {
            let address = r.u64("segment address")?;
            let flags = r.u8("segment flags")?;
            code.segments.push(HostSegment {
                address,
                executable: flags & 1 != 0,
                writable: flags & 2 != 0,
                bytes: r.bytes("segment bytes")?,
            });
        }
        for _ in 0..count(&mut r, "imports")? {
            code.imports.push(HostImport {
                slot: r.u64("import slot")?,
                addend: r.u64("import addend")? as i64,
                name: r.string("import name")?,
            });
        }
        r.finish()?;
        Ok(code)
    }
}

/// This host's name (empty where it has none): what `Hello` carries.
pub fn this_host() -> String {
    let mut name = [0u8; 256];
    // SAFETY: gethostname writes at most `name.len()` bytes into our buffer.
    if unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len()) } != 0 {
        return String::new();
    }
    String::from_utf8_lossy(crate::image::before_nul(&name)).into_owned()
}

/// A request as it travels: the tag of its exchange (which its data and reply carry),
/// then the request.
pub fn envelope(tag: i32, request: &Request) -> AlignedBytes {
    request.encode_after(AlignedBytes::from_slice(&tag.to_le_bytes()))
}

/// The tag and the request of an `envelope`.
pub fn open_envelope(data: &[u8]) -> Result<(i32, Request), DecodeError> {
    let Some((tag, request)) = data.split_first_chunk::<4>() else {
        return Err(DecodeError(format!(
            "a request of {} bytes has no room for its 4-byte tag",
            data.len()
        )));
    };
    Ok((i32::from_le_bytes(*tag), Request::decode(request)?))
}

fn encode_value(w: &mut Writer, v: &InfoValue) {
    match v {
        InfoValue::Str(s) => w.u8(0).bytes(s.as_bytes()),
        InfoValue::U32(x) => w.u8(1).u32(*x),
        InfoValue::U64(x) => w.u8(2).u64(*x),
        InfoValue::Usize(x) => w.u8(3).u64(*x as u64),
        InfoValue::Bool(b) => w.u8(4).u8(u8::from(*b)),
        InfoValue::Dims(d) => w.u8(5).u32(d[0]).u32(d[1]).u32(d[2]),
        InfoValue::Handle(x) => w.u8(6).u64(*x as u64),
    };
}

fn decode_value(r: &mut Reader) -> Result<InfoValue, DecodeError> {
    let to_usize = |x: u64| {
        usize::try_from(x).map_err(|_| DecodeError(format!("value {x} does not fit usize")))
    };
    Ok(match r.u8("info value kind")? {
        0 => InfoValue::Str(r.string("info string")?),
        1 => InfoValue::U32(r.u32("info value")?),
        2 => InfoValue::U64(r.u64("info value")?),
        3 => InfoValue::Usize(to_usize(r.u64("info value")?)?),
        4 => InfoValue::Bool(r.u8("info value")? != 0),
        5 => InfoValue::Dims(r.dims("info dimensions")?),
        6 => InfoValue::Handle(to_usize(r.u64("info handle")?)?),
        other => {
            return Err(DecodeError(format!(
                "unknown info value kind {other} (expected 0 to 6)"
            )))
        }
    })
}

impl Reply {
    pub fn encode(&self) -> AlignedBytes {
        let mut w = Writer(AlignedBytes::new());
        match self {
            Reply::Done => {
                w.u8(0);
            }
            Reply::Value(v) => {
                w.u8(1).u64(*v);
            }
            Reply::Devices(devices) => {
                w.u8(2).u64(devices.len() as u64);
                for device in devices {
                    w.u64(device.len() as u64);
                    for (key, value) in device {
                        w.u32(*key);
                        encode_value(&mut w, value);
                    }
                }
            }
            Reply::Error { code, details } => {
                w.u8(3).u32(*code).bytes(details.as_bytes());
            }
            Reply::Pair(a, b) => {
                w.u8(4).u64(*a).u64(*b);
            }
            Reply::Data(data) => {
                w.0.reserve_exact(1 + 8 + data.len());
                w.u8(5).bytes(data);
            }
            Reply::Shared(address) => {
                w.u8(6).u64(*address);
            }
            Reply::Output { output, then } => {
                w.u8(7).bytes(output);
                w.0.extend_from_slice(&then.encode());
            }
            Reply::Ended { details } => {
                w.u8(8).bytes(details.as_bytes());
            }
        }
        w.0
    }

    pub fn decode(data: &[u8]) -> Result<Reply, DecodeError> {
        let mut r = Reader { data, at: 0 };
        let reply = match r.u8("the reply kind")? {
            0 => Reply::Done,
            1 => Reply::Value(r.u64("value")?),
            2 => {
                let count = r.u64("device count")?;
                let mut devices = Vec::new();
                for _ in 0..count {
                    let keys = r.u64("info count")?;
                    let mut info = Vec::new();
                    for _ in 0..keys {
                        info.push((r.u32("info key")?, decode_value(&mut r)?));
                    }
                    devices.push(info);
                }
                Reply::Devices(devices)
            }
            3 => Reply::Error {
                code: r.u32("error code")?,
                details: r.string("error details")?,
            },
            4 => Reply::Pair(r.u64("first value")?, r.u64("second value")?),
            5 => Reply::Data(r.bytes("data")?),
            6 => Reply::Shared(r.u64("address")?),
            7 => {
                let output = r.bytes("device output")?;
                let then = Reply::decode(&data[r.at..])?;
                if matches!(then, Reply::Output { .. }) {
                    return Err(DecodeError("device output inside device output".into()));
                }
                r.at = data.len();
                Reply::Output {
                    output,
                    then: Box::new(then),
                }
            }
            8 => Reply::Ended {
                details: r.string("why the server ended")?,
            },
            other => {
                return Err(DecodeError(format!(
                    "unknown reply kind {other} (expected 0 to 8)"
                )))
            }
        };
        r.finish()?;
        Ok(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requests() -> Vec<Request> {
        vec![
            Request::Hello {
                pid: 4242,
                host: "node7".into(),
            },
            Request::Alloc {
                device: 1,
                kind: 2,
                size: 1 << 40,
                at: 0x7000_0000_0000,
                shared: "/offload-1-2".into(),
            },
            Request::Free {
                device: 0,
                kind: 1,
                address: 0xdead_beef,
                size: 64,
            },
            Request::Write {
                device: 3,
                address: 0x1000,
                size: (2 << 30) + 1,
            },
            Request::Read {
                device: 3,
                address: 0x2000,
                size: 7,
            },
            Request::Fill {
                device: 0,
                address: 8,
                size: 24,
                pattern: vec![1, 2, 3],
            },
            Request::LoadProgram {
                device: 2,
                size: 123_456,
            },
            Request::DestroyProgram { program: 77 },
            Request::MirrorHostCode {
                device: 1,
                size: 4096,
            },
            Request::Symbol {
                program: 77,
                kind: 0,
                name: "saxpy".into(),
            },
            Request::Launch {
                stream: 5,
                device: 1,
                kernel: 99,
                dimensions: 2,
                groups: [4, 2, 1],
                group_size: [64, 1, 1],
                dynamic_shared: 512,
                cooperative: true,
                c_parameters: true,
                arguments: vec![9; 24],
            },
            Request::Exit,
            Request::CheckImage {
                device: 0,
                size: 99,
            },
            Request::CopyWithin {
                device: 1,
                dst: 10,
                src: 20,
                size: 30,
            },
            Request::SendTo {
                device: 0,
                address: 0x7000_0000_0000,
                size: 3 << 30,
                peer: 2,
            },
            Request::ReceiveFrom {
                device: 1,
                address: 0x7100_0000_0000,
                size: 3 << 30,
                peer: 0,
            },
            Request::Sync { stream: 5 },
            Request::EndStream { stream: 5 },
            Request::WriteInline {
                device: 2,
                address: 0x4000,
                data: vec![7; 100],
            },
            Request::CooperativeGroups {
                kernel: 4,
                dimensions: 1,
                groups: [1, 1, 1],
                group_size: [32, 1, 1],
                dynamic_shared: 0,
            },
        ]
    }

    #[test]
    fn every_request_survives_the_wire() {
        for request in requests() {
            assert_eq!(Request::decode(&request.encode()), Ok(request.clone()));
        }
    }

    #[test]
    fn envelopes_carry_the_tag_and_refuse_a_short_message() {
        let request = Request::Sync { stream: 3 };
        let bytes = envelope(1 << 20, &request);
        assert_eq!(open_envelope(&bytes), Ok((1 << 20, request)));
        assert!(open_envelope(&bytes[..3])
            .unwrap_err()
            .0
            .contains("4-byte tag"));
        assert!(open_envelope(&bytes[..4]).is_err(), "a tag and no request");
    }

    #[test]
    fn every_reply_survives_the_wire() {
        let replies = vec![
            Reply::Done,
            Reply::Value(u64::MAX),
            Reply::Devices(vec![
                vec![
                    (1, InfoValue::Str("rank 1: AMD EPYC".into())),
                    (2, InfoValue::U32(7)),
                    (3, InfoValue::U64(1 << 33)),
                    (4, InfoValue::Usize(12)),
                    (5, InfoValue::Bool(true)),
                    (6, InfoValue::Dims([1, 2, 3])),
                    (7, InfoValue::Handle(0x1234)),
                ],
                vec![],
            ]),
            Reply::Error {
                code: 6,
                details: "out of memory".into(),
            },
            Reply::Pair(0x1000, 8),
            Reply::Data(vec![1, 2, 3]),
            Reply::Shared(0x7000_0000_0000),
            Reply::Output {
                output: b"hello from a kernel\n".to_vec(),
                then: Box::new(Reply::Pair(1, 2)),
            },
            Reply::Ended {
                details: "rank 0: device code faulted".into(),
            },
        ];
        for reply in replies {
            assert_eq!(Reply::decode(&reply.encode()), Ok(reply.clone()));
        }
    }

    #[test]
    fn truncated_unknown_and_padded_messages_are_errors() {
        for request in requests() {
            let bytes = request.encode();
            for cut in 0..bytes.len() {
                assert!(
                    Request::decode(&bytes[..cut]).is_err(),
                    "{request:?} cut at {cut}"
                );
            }
            let mut padded = bytes.to_vec();
            padded.push(0);
            assert!(Request::decode(&padded)
                .unwrap_err()
                .0
                .contains("left over"));
        }
        assert!(Request::decode(&[200])
            .unwrap_err()
            .0
            .contains("unknown request kind 200"));
        assert!(Reply::decode(&[9])
            .unwrap_err()
            .0
            .contains("unknown reply kind 9"));
        let nested = Reply::Output {
            output: vec![b'a'],
            then: Box::new(Reply::Output {
                output: vec![b'b'],
                then: Box::new(Reply::Done),
            }),
        };
        assert!(Reply::decode(&nested.encode())
            .unwrap_err()
            .0
            .contains("inside device output"));
        // A length that claims more than the message holds.
        let lie = [
            8u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 127,
        ];
        assert!(Request::decode(&lie).is_err());
    }

    #[test]
    fn host_code_survives_the_wire_and_refuses_lies() {
        let code = HostCode {
            segments: vec![
                HostSegment {
                    address: 0x5555_0000_0000,
                    executable: false,
                    writable: false,
                    bytes: vec![0x7f, b'E', b'L', b'F'],
                },
                HostSegment {
                    address: 0x5555_0000_1000,
                    executable: true,
                    writable: true,
                    bytes: vec![0xc3; 17],
                },
            ],
            imports: vec![HostImport {
                slot: 0x5555_0000_3fe0,
                addend: -8,
                name: "printf".into(),
            }],
        };
        let bytes = code.encode();
        assert_eq!(HostCode::decode(&bytes), Ok(code));
        for cut in 0..bytes.len() {
            assert!(HostCode::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let huge_count = u64::MAX.to_le_bytes();
        assert!(HostCode::decode(&huge_count)
            .unwrap_err()
            .0
            .contains("segments"));
    }
}
