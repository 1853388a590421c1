//! The transport as C functions: what liboffload's remote plugin calls through
//! libloading. Every function answers 0 on success or a `FailureKind` (-1 failed, -2 a
//! deadline ran out or the peer went silent, -3 a transfer's sender gave up midway),
//! the reason then being `offload_mpi_error()`'s text (per thread). A panic inside is a
//! failure (-1), never an unwinding across the C boundary.

use crate::abi;
use crate::aligned_bytes::AlignedBytes;
use crate::transport::{Failure, FailureKind, Transport, Wait};
use parking_lot::RwLock;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

pub use crate::abi::ABI_VERSION;

// Each function has the type liboffload calls it by (one definition, `abi`): a signature
// that drifts from it does not compile.
const _: abi::VersionFn = offload_mpi_abi_version;
const _: abi::ErrorFn = offload_mpi_error;
const _: abi::OpenFn = offload_mpi_open;
const _: abi::SendFn = offload_mpi_send;
const _: abi::ReceiveFn = offload_mpi_receive;
const _: abi::SendFragmentsFn = offload_mpi_send_fragments;
const _: abi::ReceiveFragmentsFn = offload_mpi_receive_fragments;
const _: abi::SilenceFn = offload_mpi_silence_us;
const _: abi::FreeFn = offload_mpi_free;
const _: abi::CloseFn = offload_mpi_close;

/// Calls share the transport (read lock); `offload_mpi_close` takes it away (write lock).
static TRANSPORT: RwLock<Option<Transport>> = RwLock::new(None);

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn fail(failure: Failure) -> c_int {
    let text = CString::new(failure.text.replace('\0', " ")).unwrap_or_default();
    // At process exit (an atexit handler stopping the servers) this thread's storage
    // may be gone already: the code still says what happened.
    let _ = LAST_ERROR.try_with(|e| *e.borrow_mut() = text);
    failure.kind as c_int
}

/// Runs `f` on the open transport: 0, or the failure's code.
fn call(f: impl FnOnce(&Transport) -> Result<(), Failure>) -> c_int {
    let outcome = match TRANSPORT.read().as_ref() {
        Some(t) => f(t),
        None => Err(Failure::failed(
            "the MPI transport is not open (offload_mpi_open first)",
        )),
    };
    match outcome {
        Ok(()) => abi::OK,
        Err(failure) => fail(failure),
    }
}

/// What `offload_mpi_error` answers when it fails itself.
const PANICKED: &std::ffi::CStr = c"(the MPI transport panicked while reporting an error)";

/// The panic boundary every function here runs its body in: a panic (a bug of ours)
/// becomes the failure `on_panic`, its text this thread's error, never an unwinding
/// into liboffload.
fn boundary<R>(name: &str, on_panic: R, body: impl FnOnce() -> R) -> R {
    let guarded = AssertUnwindSafe(|| {
        #[cfg(test)]
        tests::maybe_panic();
        body()
    });
    match catch_unwind(guarded) {
        Ok(result) => result,
        Err(panic) => {
            let text = crate::panic_text::panic_text(&panic);
            fail(Failure::failed(format!("{name} panicked: {text}")));
            on_panic
        }
    }
}

fn micros(us: i64) -> Option<Duration> {
    u64::try_from(us).ok().map(Duration::from_micros)
}

/// The version of this interface (`ABI_VERSION`).
#[no_mangle]
pub extern "C" fn offload_mpi_abi_version() -> u32 {
    boundary("offload_mpi_abi_version", 0, || ABI_VERSION)
}

/// The reason of this thread's last failure.
#[no_mangle]
pub extern "C" fn offload_mpi_error() -> *const c_char {
    boundary("offload_mpi_error", PANICKED.as_ptr(), || {
        LAST_ERROR
            .try_with(|e| e.borrow().as_ptr())
            .unwrap_or(c"(the reason is gone: this thread is exiting)".as_ptr())
    })
}

/// Initialises MPI (once) and reports this process's rank and the world's size;
/// `timeout_us`: how long a peer may make no progress and give no sign of life.
///
/// # Safety
/// `size` and `rank` point to writable ints.
#[no_mangle]
pub unsafe extern "C" fn offload_mpi_open(
    size: *mut c_int,
    rank: *mut c_int,
    timeout_us: i64,
) -> c_int {
    boundary("offload_mpi_open", abi::FAILED, || {
        if size.is_null() || rank.is_null() {
            return fail(Failure::failed("offload_mpi_open: NULL output"));
        }
        let opened = (|| {
            let mut slot = TRANSPORT.write();
            if slot.is_none() {
                let timeout = micros(timeout_us).unwrap_or(Duration::from_secs(5));
                *slot = Some(Transport::open(timeout)?);
            }
            let t = slot.as_ref().expect("opened above");
            Ok::<_, String>((t.size(), t.rank()))
        })();
        match opened {
            Ok((world, me)) => {
                // SAFETY: checked non-NULL; the caller's writable ints.
                unsafe {
                    *size = world;
                    *rank = me;
                }
                0
            }
            Err(e) => fail(Failure::failed(e)),
        }
    })
}

/// Sends `len` bytes at `data` to `dest` with `tag`: within `within_us` whatever the
/// peer says, or (negative) under the liveness rule.
///
/// # Safety
/// `data` holds `len` readable bytes (or `len` is 0).
#[no_mangle]
pub unsafe extern "C" fn offload_mpi_send(
    dest: c_int,
    tag: c_int,
    data: *const u8,
    len: u64,
    within_us: i64,
) -> c_int {
    boundary("offload_mpi_send", abi::FAILED, || {
        // SAFETY: the caller's promise.
        let bytes = unsafe { bytes_of(data, len) };
        call(|t| match micros(within_us) {
            Some(within) => t.send_within(dest, tag, bytes, within),
            None => t.send(dest, tag, bytes),
        })
    })
}

/// Receives the next message of `source` with `tag` within `timeout_us` (negative: until
/// the peer has been silent for the transport's timeout) into a buffer this library
/// allocates; `offload_mpi_free` gives it back.
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
    boundary("offload_mpi_receive", abi::FAILED, || {
        if out.is_null() || out_len.is_null() {
            return fail(Failure::failed("offload_mpi_receive: NULL output"));
        }
        let wait = micros(timeout_us).map_or(Wait::Live, Wait::Within);
        call(|t| {
            let (data, len) = t.receive(source, tag, wait)?.into_raw();
            // SAFETY: checked non-NULL; the caller's writable locations.
            unsafe {
                *out_len = len as u64;
                *out = data;
            }
            Ok(())
        })
    })
}

/// Sends the `len` bytes at `data` to `dest` with `tag` in fragments of `fragment`
/// bytes, all posted at once (under the liveness rule).
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
    boundary("offload_mpi_send_fragments", abi::FAILED, || {
        // SAFETY: the caller's promise.
        let bytes = unsafe { bytes_of(data, len) };
        call(|t| t.send_fragments(dest, tag, bytes, fragment as usize))
    })
}

/// Receives `len` bytes from `source` with `tag` into `buffer`, in fragments of
/// `fragment` bytes, all receives posted at once (under the liveness rule). A short
/// fragment (the sender gave up) is `GaveUp` (-3).
///
/// # Safety
/// `buffer` holds `len` writable bytes (or `len` is 0).
#[no_mangle]
pub unsafe extern "C" fn offload_mpi_receive_fragments(
    source: c_int,
    tag: c_int,
    buffer: *mut u8,
    len: u64,
    fragment: u64,
) -> c_int {
    boundary("offload_mpi_receive_fragments", abi::FAILED, || {
        if buffer.is_null() && len > 0 {
            return fail(Failure::failed(
                "offload_mpi_receive_fragments: NULL buffer",
            ));
        }
        let slice: &mut [u8] = if len == 0 {
            &mut []
        } else {
            // SAFETY: the caller's promise.
            unsafe { std::slice::from_raw_parts_mut(buffer, len as usize) }
        };
        call(|t| t.receive_fragments(source, tag, slice, fragment as usize))
    })
}

/// Microseconds since `rank` was last heard from (any message, a heartbeat), after
/// taking the heartbeats it sent; -1 when the transport is not open.
#[no_mangle]
pub extern "C" fn offload_mpi_silence_us(rank: c_int) -> i64 {
    boundary("offload_mpi_silence_us", -1, || {
        let mut silence = -1;
        let code = call(|t| {
            t.take_heartbeats(rank);
            silence = i64::try_from(t.silence(rank).as_micros()).unwrap_or(i64::MAX);
            Ok(())
        });
        if code == 0 {
            silence
        } else {
            -1
        }
    })
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
    boundary("offload_mpi_free", (), || {
        if !data.is_null() {
            // SAFETY: what `offload_mpi_receive` handed out, with its length.
            drop(unsafe { AlignedBytes::from_raw(data, len as usize) });
        }
    })
}

/// Finalises MPI within `within_us` (the plugin calls it at exit, after telling every
/// server to stop): 0 when finalised, -2 when MPI_Finalize did not return in time (it
/// may wait for a rank that is stopped; the caller then exits without it).
#[no_mangle]
pub extern "C" fn offload_mpi_close(within_us: i64) -> c_int {
    boundary("offload_mpi_close", abi::FAILED, || {
        let Some(transport) = TRANSPORT.write().take() else {
            return 0;
        };
        if transport.close(micros(within_us).unwrap_or(Duration::from_secs(5))) {
            0
        } else {
            fail(Failure {
                kind: FailureKind::Silent,
                text: "MPI_Finalize did not return in time (a rank stopped?)".into(),
                buffer_in_use: false,
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        /// Set by the test below on its own thread: the next boundary panics.
        static INJECT: Cell<bool> = const { Cell::new(false) };
    }

    pub(super) fn maybe_panic() {
        if INJECT.with(|i| i.replace(false)) {
            panic!("injected panic");
        }
    }

    #[test]
    fn a_panic_inside_is_a_failure_with_its_text() {
        INJECT.with(|i| i.set(true));
        // SAFETY: no data (length 0).
        let code = unsafe { offload_mpi_send(0, 0, std::ptr::null(), 0, -1) };
        assert_eq!(code, abi::FAILED);
        // SAFETY: this thread's error text, just written.
        let text = unsafe { std::ffi::CStr::from_ptr(offload_mpi_error()) };
        assert_eq!(
            text.to_str().unwrap(),
            "offload_mpi_send panicked: injected panic"
        );
        // Without the injection the same call fails for what it is.
        // SAFETY: as above.
        assert_eq!(
            unsafe { offload_mpi_send(0, 0, std::ptr::null(), 0, -1) },
            abi::FAILED
        );
        let text = unsafe { std::ffi::CStr::from_ptr(offload_mpi_error()) };
        assert!(text.to_str().unwrap().contains("not open"), "{text:?}");
    }

    /// Every function exported here runs its body inside `boundary`.
    #[test]
    fn every_exported_function_has_the_boundary() {
        let text = include_str!("ffi.rs");
        let lines: Vec<&str> = text.lines().collect();
        let mut exported = 0;
        for (i, line) in lines.iter().enumerate() {
            if line.trim() != "#[no_mangle]" {
                continue;
            }
            exported += 1;
            let body = lines[i..]
                .iter()
                .position(|l| l.trim_end().ends_with('{'))
                .and_then(|at| lines.get(i + at + 1));
            assert!(
                body.is_some_and(|l| l.trim_start().starts_with("boundary(")),
                "ffi.rs:{}: no boundary",
                i + 1
            );
        }
        assert_eq!(exported, 10);
    }
}
