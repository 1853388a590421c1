//! The transport as C functions: what liboffload's remote plugin calls through
//! libloading. Every function answers 0 on success, -2 when a receive's deadline ran
//! out, -3 when a transfer's sender gave up midway, and -1 on any other failure, the
//! reason then being `offload_mpi_error()`'s text (per thread).

use crate::transport::{Transport, GAVE_UP, TIMED_OUT};
use parking_lot::RwLock;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::time::Duration;

/// Calls share the transport (read lock); `offload_mpi_close` takes it away (write lock).
static TRANSPORT: RwLock<Option<Transport>> = RwLock::new(None);

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn fail(text: String) -> c_int {
    let code = if text.contains(TIMED_OUT) {
        -2
    } else if text.contains(GAVE_UP) {
        -3
    } else {
        -1
    };
    let text = CString::new(text.replace('\0', " ")).unwrap_or_default();
    // At process exit (an atexit handler stopping the servers) this thread's storage
    // may be gone already: the code still says what happened.
    let _ = LAST_ERROR.try_with(|e| *e.borrow_mut() = text);
    code
}

fn with_transport<T>(f: impl FnOnce(&Transport) -> Result<T, String>) -> Result<T, String> {
    match TRANSPORT.read().as_ref() {
        Some(t) => f(t),
        None => Err("the MPI transport is not open (offload_mpi_open first)".to_string()),
    }
}

/// The reason of this thread's last failure.
#[no_mangle]
pub extern "C" fn offload_mpi_error() -> *const c_char {
    LAST_ERROR
        .try_with(|e| e.borrow().as_ptr())
        .unwrap_or(c"(the reason is gone: this thread is exiting)".as_ptr())
}

/// Initialises MPI (once) and reports this process's rank and the world's size.
///
/// # Safety
/// `size` and `rank` point to writable ints.
#[no_mangle]
pub unsafe extern "C" fn offload_mpi_open(size: *mut c_int, rank: *mut c_int) -> c_int {
    if size.is_null() || rank.is_null() {
        return fail("offload_mpi_open: NULL output".into());
    }
    let mut slot = TRANSPORT.write();
    if slot.is_none() {
        match Transport::open() {
            Ok(t) => *slot = Some(t),
            Err(e) => return fail(e),
        }
    }
    let t = slot.as_ref().expect("opened above");
    // SAFETY: checked non-NULL; the caller's writable ints.
    unsafe {
        *size = t.size();
        *rank = t.rank();
    }
    0
}

/// Sends `len` bytes at `data` to `dest` with `tag`.
///
/// # Safety
/// `data` holds `len` readable bytes (or `len` is 0).
#[no_mangle]
pub unsafe extern "C" fn offload_mpi_send(
    dest: c_int,
    tag: c_int,
    data: *const u8,
    len: u64,
) -> c_int {
    // SAFETY: the caller's promise.
    let bytes = unsafe { bytes_of(data, len) };
    match with_transport(|t| t.send(dest, tag, bytes)) {
        Ok(()) => 0,
        Err(e) => fail(e),
    }
}

/// Receives the next message of `source` with `tag` within `timeout_us` (negative: no
/// limit) into a buffer this library allocates; `offload_mpi_free` gives it back.
///
/// # Safety
/// `out` and `out_len` point to writable locations.
#[no_mangle]
pub unsafe extern "C" fn offload_mpi_receive(
    source: c_int,
    tag: c_int,
    timeout_us: i64,
    out: *mut *mut u8,
    out_len: *mut u64,
) -> c_int {
    if out.is_null() || out_len.is_null() {
        return fail("offload_mpi_receive: NULL output".into());
    }
    let timeout = u64::try_from(timeout_us).ok().map(Duration::from_micros);
    match with_transport(|t| t.receive(source, tag, timeout)) {
        Ok(data) => {
            let data = data.into_boxed_slice();
            let len = data.len() as u64;
            // SAFETY: checked non-NULL; the caller's writable locations.
            unsafe {
                *out_len = len;
                *out = Box::into_raw(data).cast::<u8>();
            }
            0
        }
        Err(e) => fail(e),
    }
}

/// Sends the `len` bytes at `data` to `dest` with `tag` in fragments of `fragment`
/// bytes, all posted at once.
///
/// # Safety
/// `data` holds `len` readable bytes (or `len` is 0).
#[no_mangle]
pub unsafe extern "C" fn offload_mpi_send_fragments(
    dest: c_int,
    tag: c_int,
    data: *const u8,
    len: u64,
    fragment: u64,
) -> c_int {
    // SAFETY: the caller's promise.
    let bytes = unsafe { bytes_of(data, len) };
    match with_transport(|t| t.send_fragments(dest, tag, bytes, fragment as usize)) {
        Ok(()) => 0,
        Err(e) => fail(e),
    }
}

/// Receives `len` bytes from `source` with `tag` into `buffer`, in fragments of
/// `fragment` bytes, all receives posted at once, within `timeout_us` (negative: no
/// limit). A short fragment (the sender gave up) is a failure.
///
/// # Safety
/// `buffer` holds `len` writable bytes (or `len` is 0).
#[no_mangle]
pub unsafe extern "C" fn offload_mpi_receive_fragments(
    source: c_int,
    tag: c_int,
    timeout_us: i64,
    buffer: *mut u8,
    len: u64,
    fragment: u64,
) -> c_int {
    if buffer.is_null() && len > 0 {
        return fail("offload_mpi_receive_fragments: NULL buffer".into());
    }
    let timeout = u64::try_from(timeout_us).ok().map(Duration::from_micros);
    let slice: &mut [u8] = if len == 0 {
        &mut []
    } else {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(buffer, len as usize) }
    };
    match with_transport(|t| t.receive_fragments(source, tag, timeout, slice, fragment as usize)) {
        Ok(()) => 0,
        Err(e) => fail(e),
    }
}

/// `len` bytes at `data` as a slice (empty for 0 or NULL).
///
/// # Safety
/// `data` holds `len` readable bytes unless `len` is 0 or `data` NULL.
unsafe fn bytes_of<'a>(data: *const u8, len: u64) -> &'a [u8] {
    if len == 0 || data.is_null() {
        &[]
    } else {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts(data, len as usize) }
    }
}

/// Gives back a buffer `offload_mpi_receive` returned.
///
/// # Safety
/// `data` and `len` are exactly what `offload_mpi_receive` wrote, not freed yet.
#[no_mangle]
pub unsafe extern "C" fn offload_mpi_free(data: *mut u8, len: u64) {
    if !data.is_null() {
        // SAFETY: rebuilt from the box `offload_mpi_receive` leaked, same length.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(data, len as usize)) });
    }
}

/// Finalises MPI (the plugin calls it at exit, after telling every server to stop).
#[no_mangle]
pub extern "C" fn offload_mpi_close() {
    drop(TRANSPORT.write().take());
}
