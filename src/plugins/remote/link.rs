//! The MPI transport library (`liboffload_remote_mpi.so`, the `remote-mpi` crate), opened
//! at run time only when the process was started by an MPI launcher: liboffload never
//! links libmpi itself, so programs that do not use remote devices do not need MPI.

use super::abi::{
    CloseFn, ErrorFn, FreeFn, OpenFn, ReceiveFn, ReceiveFragmentsFn, SendFn, SendFragmentsFn,
    SilenceFn, VersionFn, ABI_VERSION, GAVE_UP, LIBRARY, OK, SILENT,
};
use crate::plugin::foundation::copy;
use crate::plugin::foundation::vendor_library::VendorLibrary;
use std::ffi::{c_int, CStr};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A duration as the transport's C functions take it: microseconds.
fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// How a transport call failed, as the session needs to know it.
#[derive(Debug)]
pub enum LinkError {
    /// The peer went silent (no progress, no sign of life) or a deadline ran out.
    Silent(String),
    /// The sender of a transfer gave up midway: still in step, its side failed.
    GaveUp(String),
    /// MPI failed.
    Failed(String),
}

impl LinkError {
    pub fn text(self) -> String {
        match self {
            LinkError::Silent(t) | LinkError::GaveUp(t) | LinkError::Failed(t) => t,
        }
    }
}

pub struct Link {
    open: OpenFn,
    silence: SilenceFn,
    send: SendFn,
    receive: ReceiveFn,
    send_fragments: SendFragmentsFn,
    receive_fragments: ReceiveFragmentsFn,
    free: FreeFn,
    close: CloseFn,
    error: ErrorFn,
    _library: VendorLibrary,
}

/// Where to look: `OFFLOAD_MPI_TRANSPORT` if set, then beside this library (where
/// `cmake --install` puts both), then the loader's own search.
fn candidates() -> Vec<PathBuf> {
    let mut paths = Vec::new();
    if let Some(path) = std::env::var_os("OFFLOAD_MPI_TRANSPORT") {
        paths.push(PathBuf::from(path));
    }
    // SAFETY: Dl_info is plain data (pointers and integers): all zeros is a value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let here = candidates as *const () as *const libc::c_void;
    // SAFETY: dladdr only reads our own code address and fills `info`.
    if unsafe { libc::dladdr(here, &mut info) } != 0 && !info.dli_fname.is_null() {
        // SAFETY: the loader's NUL-terminated file name.
        let file = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy();
        if let Some(dir) = Path::new(file.as_ref()).parent() {
            paths.push(dir.join(LIBRARY));
        }
    }
    paths.push(PathBuf::from(LIBRARY));
    paths
}

/// What a library that lacks an entry point is.
const NOT_OURS: &str = "not the transport of this liboffload; install both from one build";

impl Link {
    pub fn load() -> Result<Link, String> {
        // SAFETY: our own transport library, whose initialisers only set up Rust
        // statics.
        let library = unsafe { VendorLibrary::open_first(&candidates()) }
            .map_err(|tried| format!("cannot open the MPI transport ({tried})"))?;
        // SAFETY: each type is the one `abi` gives the symbol (remote-mpi/src/ffi.rs
        // checks its functions against them); the library is never closed.
        unsafe {
            let version: VersionFn = library.require(&["offload_mpi_abi_version"], NOT_OURS)?;
            if version() != ABI_VERSION {
                return Err(format!(
                    "{}: the MPI transport has interface version {}, liboffload needs {ABI_VERSION} (install both from one build)",
                    library.path().display(),
                    version()
                ));
            }
            Ok(Link {
                open: library.require(&["offload_mpi_open"], NOT_OURS)?,
                silence: library.require(&["offload_mpi_silence_us"], NOT_OURS)?,
                send: library.require(&["offload_mpi_send"], NOT_OURS)?,
                receive: library.require(&["offload_mpi_receive"], NOT_OURS)?,
                send_fragments: library.require(&["offload_mpi_send_fragments"], NOT_OURS)?,
                receive_fragments: library.require(&["offload_mpi_receive_fragments"], NOT_OURS)?,
                free: library.require(&["offload_mpi_free"], NOT_OURS)?,
                close: library.require(&["offload_mpi_close"], NOT_OURS)?,
                error: library.require(&["offload_mpi_error"], NOT_OURS)?,
                _library: library,
            })
        }
    }

    fn last_error(&self) -> String {
        let text = (self.error)();
        if text.is_null() {
            return "unknown MPI transport error".into();
        }
        // SAFETY: the transport's thread-local C string, valid until its next failure.
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    }

    fn outcome(&self, code: c_int) -> Result<(), LinkError> {
        match code {
            OK => Ok(()),
            SILENT => Err(LinkError::Silent(self.last_error())),
            GAVE_UP => Err(LinkError::GaveUp(self.last_error())),
            _ => Err(LinkError::Failed(self.last_error())),
        }
    }

    /// Initialises MPI: (world size, this rank). `timeout`: how long a peer may make no
    /// progress and give no sign of life before a transfer with it fails.
    pub fn open(&self, timeout: Duration) -> Result<(i32, i32), String> {
        let (mut size, mut rank) = (0, 0);
        // SAFETY: two writable ints.
        let code = unsafe { (self.open)(&mut size, &mut rank, micros(timeout)) };
        self.outcome(code).map_err(LinkError::text)?;
        Ok((size, rank))
    }

    /// Sends `data`: under the liveness rule, or (`within`) giving up after that long.
    pub fn send(
        &self,
        dest: i32,
        tag: i32,
        data: &[u8],
        within: Option<Duration>,
    ) -> Result<(), LinkError> {
        let micros = within.map_or(-1, micros);
        // SAFETY: `data` is a live slice of `len` bytes.
        self.outcome(unsafe { (self.send)(dest, tag, data.as_ptr(), data.len() as u64, micros) })
    }

    /// The next message of `source` with `tag`; `None`: until `source` has been silent
    /// for the timeout, else within that long.
    pub fn receive(
        &self,
        source: i32,
        tag: i32,
        within: Option<Duration>,
    ) -> Result<Vec<u8>, LinkError> {
        let (mut data, mut len): (*mut u8, u64) = (std::ptr::null_mut(), 0);
        let micros = within.map_or(-1, micros);
        // SAFETY: two writable locations; the buffer is given back below.
        let code = unsafe { (self.receive)(source, tag, micros, &mut data, &mut len) };
        self.outcome(code)?;
        let bytes = if data.is_null() {
            Vec::new()
        } else {
            // SAFETY: the transport's buffer of `len` bytes, copied before it is freed.
            copy::to_vec(unsafe { std::slice::from_raw_parts(data, len as usize) })
        };
        // SAFETY: exactly what `receive` handed out.
        unsafe { (self.free)(data, len) };
        Ok(bytes)
    }

    /// Sends `data` in fragments of `fragment` bytes, all posted at once (under the
    /// liveness rule).
    pub fn send_fragments(
        &self,
        dest: i32,
        tag: i32,
        data: &[u8],
        fragment: u64,
    ) -> Result<(), LinkError> {
        // SAFETY: `data` is a live slice of its length.
        let code =
            unsafe { (self.send_fragments)(dest, tag, data.as_ptr(), data.len() as u64, fragment) };
        self.outcome(code)
    }

    /// Receives `buffer.len()` bytes in fragments of `fragment` bytes, all receives
    /// posted at once (under the liveness rule).
    pub fn receive_fragments(
        &self,
        source: i32,
        tag: i32,
        buffer: &mut [u8],
        fragment: u64,
    ) -> Result<(), LinkError> {
        // SAFETY: `buffer` is a live mutable slice of its length.
        let code = unsafe {
            (self.receive_fragments)(
                source,
                tag,
                buffer.as_mut_ptr(),
                buffer.len() as u64,
                fragment,
            )
        };
        self.outcome(code)
    }

    /// How long `rank` has said nothing (its heartbeats taken first).
    pub fn silence(&self, rank: i32) -> Duration {
        Duration::from_micros(u64::try_from((self.silence)(rank)).unwrap_or(u64::MAX))
    }

    /// Finalises MPI within `within`: false when MPI_Finalize did not return in time.
    pub fn close(&self, within: Duration) -> bool {
        (self.close)(micros(within)) == 0
    }
}
