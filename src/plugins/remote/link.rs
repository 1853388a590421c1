//! The MPI transport library (`liboffload_remote_mpi.so`, the `remote-mpi` crate), opened
//! at run time only when the process was started by an MPI launcher: liboffload never
//! links libmpi itself, so programs that do not use remote devices do not need MPI.

use libloading::{Library, Symbol};
use std::ffi::{c_char, c_int, CStr};
use std::time::Duration;

type OpenFn = unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int;
type SendFn = unsafe extern "C" fn(c_int, c_int, *const u8, u64) -> c_int;
type ReceiveFn = unsafe extern "C" fn(c_int, c_int, i64, *mut *mut u8, *mut u64) -> c_int;
type FreeFn = unsafe extern "C" fn(*mut u8, u64);
type SendFragmentsFn = unsafe extern "C" fn(c_int, c_int, *const u8, u64, u64) -> c_int;
type ReceiveFragmentsFn = unsafe extern "C" fn(c_int, c_int, i64, *mut u8, u64, u64) -> c_int;
type CloseFn = extern "C" fn();
type ErrorFn = extern "C" fn() -> *const c_char;

/// The library's file name.
pub const LIBRARY: &str = "liboffload_remote_mpi.so";

pub struct Link {
    open: OpenFn,
    send: SendFn,
    receive: ReceiveFn,
    send_fragments: SendFragmentsFn,
    receive_fragments: ReceiveFragmentsFn,
    free: FreeFn,
    close: CloseFn,
    error: ErrorFn,
    _library: Library,
}

/// Where to look: `OFFLOAD_MPI_TRANSPORT` if set, then beside this library (where
/// `cmake --install` puts both), then the loader's own search.
fn candidates() -> Vec<String> {
    let mut paths = Vec::new();
    if let Ok(path) = std::env::var("OFFLOAD_MPI_TRANSPORT") {
        paths.push(path);
    }
    // SAFETY: Dl_info is plain data (pointers and integers): all zeros is a value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let here = candidates as *const () as *const libc::c_void;
    // SAFETY: dladdr only reads our own code address and fills `info`.
    if unsafe { libc::dladdr(here, &mut info) } != 0 && !info.dli_fname.is_null() {
        // SAFETY: the loader's NUL-terminated file name.
        let file = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy();
        if let Some(dir) = std::path::Path::new(file.as_ref()).parent() {
            paths.push(dir.join(LIBRARY).to_string_lossy().into_owned());
        }
    }
    paths.push(LIBRARY.to_string());
    paths
}

impl Link {
    pub fn load() -> Result<Link, String> {
        let mut tried = Vec::new();
        for path in candidates() {
            // SAFETY: loading our own transport library, whose initialisers only set up
            // Rust statics.
            match unsafe { Library::new(&path) } {
                Ok(library) => return Link::bind(library).map_err(|e| format!("{path}: {e}")),
                Err(e) => tried.push(format!("{path}: {e}")),
            }
        }
        Err(format!(
            "cannot open the MPI transport ({})",
            tried.join("; ")
        ))
    }

    fn bind(library: Library) -> Result<Link, String> {
        fn get<T: Copy>(library: &Library, name: &[u8]) -> Result<T, String> {
            // SAFETY: each caller below names a function of the transport with type T
            // (remote-mpi/src/ffi.rs); the pointer stays valid while `_library` lives.
            let symbol: Symbol<T> = unsafe { library.get(name) }
                .map_err(|e| format!("{}: {e}", String::from_utf8_lossy(name)))?;
            Ok(*symbol)
        }
        Ok(Link {
            open: get(&library, b"offload_mpi_open\0")?,
            send: get(&library, b"offload_mpi_send\0")?,
            receive: get(&library, b"offload_mpi_receive\0")?,
            send_fragments: get(&library, b"offload_mpi_send_fragments\0")?,
            receive_fragments: get(&library, b"offload_mpi_receive_fragments\0")?,
            free: get(&library, b"offload_mpi_free\0")?,
            close: get(&library, b"offload_mpi_close\0")?,
            error: get(&library, b"offload_mpi_error\0")?,
            _library: library,
        })
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

    /// Initialises MPI: (world size, this rank).
    pub fn open(&self) -> Result<(i32, i32), String> {
        let (mut size, mut rank) = (0, 0);
        // SAFETY: two writable ints.
        match unsafe { (self.open)(&mut size, &mut rank) } {
            0 => Ok((size, rank)),
            _ => Err(self.last_error()),
        }
    }

    pub fn send(&self, dest: i32, tag: i32, data: &[u8]) -> Result<(), String> {
        // SAFETY: `data` is a live slice of `len` bytes.
        match unsafe { (self.send)(dest, tag, data.as_ptr(), data.len() as u64) } {
            0 => Ok(()),
            _ => Err(self.last_error()),
        }
    }

    /// The next message of `source` with `tag`, or an error after `timeout`.
    pub fn receive(&self, source: i32, tag: i32, timeout: Duration) -> Result<Vec<u8>, String> {
        self.receive_or_time_out(source, tag, timeout)
            .map_err(|(_, text)| text)
    }

    /// As `receive`; the error says whether the deadline ran out (true) or MPI failed.
    pub fn receive_or_time_out(
        &self,
        source: i32,
        tag: i32,
        timeout: Duration,
    ) -> Result<Vec<u8>, (bool, String)> {
        let (mut data, mut len): (*mut u8, u64) = (std::ptr::null_mut(), 0);
        let micros = i64::try_from(timeout.as_micros()).unwrap_or(i64::MAX);
        // SAFETY: two writable locations; the buffer is given back below.
        match unsafe { (self.receive)(source, tag, micros, &mut data, &mut len) } {
            0 => {}
            code => return Err((code == -2, self.last_error())),
        }
        let bytes = if data.is_null() {
            Vec::new()
        } else {
            // SAFETY: the transport's buffer of `len` bytes, copied before it is freed.
            unsafe { std::slice::from_raw_parts(data, len as usize) }.to_vec()
        };
        // SAFETY: exactly what `receive` handed out.
        unsafe { (self.free)(data, len) };
        Ok(bytes)
    }

    /// Sends `data` in fragments of `fragment` bytes, all posted at once.
    pub fn send_fragments(
        &self,
        dest: i32,
        tag: i32,
        data: &[u8],
        fragment: u64,
    ) -> Result<(), String> {
        // SAFETY: `data` is a live slice of its length.
        let rc =
            unsafe { (self.send_fragments)(dest, tag, data.as_ptr(), data.len() as u64, fragment) };
        match rc {
            0 => Ok(()),
            _ => Err(self.last_error()),
        }
    }

    /// Receives `buffer.len()` bytes in fragments of `fragment` bytes, all receives
    /// posted at once, within `timeout`. The error says whether the sender gave up
    /// midway (true: it is still in step, its transfer failed) or MPI failed.
    pub fn receive_fragments(
        &self,
        source: i32,
        tag: i32,
        timeout: Duration,
        buffer: &mut [u8],
        fragment: u64,
    ) -> Result<(), (bool, String)> {
        let micros = i64::try_from(timeout.as_micros()).unwrap_or(i64::MAX);
        // SAFETY: `buffer` is a live mutable slice of its length.
        let rc = unsafe {
            (self.receive_fragments)(
                source,
                tag,
                micros,
                buffer.as_mut_ptr(),
                buffer.len() as u64,
                fragment,
            )
        };
        match rc {
            0 => Ok(()),
            code => Err((code == -3, self.last_error())),
        }
    }

    /// Finalises MPI.
    pub fn close(&self) {
        (self.close)();
    }
}
