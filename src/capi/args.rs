//! Turning C arguments into runtime values: handles into objects, integers into enums,
//! out-pointers into references. Each failure names the argument and what was expected.

use crate::plugin::foundation::error::{Error, ErrorCode, Result};
use crate::runtime::handle_table::HandleTable;
use crate::runtime::{self, Device, Platform, Runtime};
use std::sync::Arc;

/// Runs `f` with the live runtime, or answers `OL_ERRC_UNINITIALIZED`.
pub(crate) fn with_runtime<R>(f: impl FnOnce(&Arc<Runtime>) -> Result<R>) -> Result<R> {
    runtime::with_current(f)
}

// The checks below run on every call: they are inlined, and the messages of their
// failures are built in `#[cold]` functions, out of the way of the fast path.

/// A handle the runtime hands out and keeps (a device's, a platform's): NULL, or one
/// `find` does not know, is refused with `unknown`'s message.
#[inline]
fn registered<'a, T, V>(
    handle: *mut T,
    name: &str,
    find: impl FnOnce(usize) -> Option<&'a V>,
    unknown: fn(usize, &str) -> Error,
) -> Result<&'a V> {
    if handle.is_null() {
        return Err(null_handle(name));
    }
    match find(handle as usize) {
        Some(value) => Ok(value),
        None => Err(unknown(handle as usize, name)),
    }
}

#[inline]
pub(crate) fn device<'a, T>(
    rt: &'a Runtime,
    handle: *mut T,
    name: &str,
) -> Result<&'a Arc<Device>> {
    registered(handle, name, |h| rt.device_by_handle(h), not_a_device)
}

#[cold]
fn not_a_device(handle: usize, name: &str) -> Error {
    Error::new(
        ErrorCode::InvalidDevice,
        format!(
            "{name} {handle:#x} is not a device handle of this library (stale after olShutDown, or never returned by olIterateDevices)"
        ),
    )
}

#[inline]
pub(crate) fn platform<'a, T>(
    rt: &'a Runtime,
    handle: *mut T,
    name: &str,
) -> Result<&'a Arc<Platform>> {
    registered(handle, name, |h| rt.platform_by_handle(h), not_a_platform)
}

#[cold]
fn not_a_platform(handle: usize, name: &str) -> Error {
    Error::new(
        ErrorCode::InvalidPlatform,
        format!(
            "{name} {handle:#x} is not a platform handle of this library (stale after olShutDown, or never returned by olIteratePlatforms)"
        ),
    )
}

/// Looks a user-owned handle (queue, event, program, symbol) up in its table of live
/// objects (through the thread's cache, as `with_live`); a destroyed or made-up one gets
/// `code`.
pub(crate) fn live<T: Send + Sync + 'static, H>(
    table: &HandleTable<T>,
    handle: *mut H,
    name: &str,
    kind: &str,
    code: ErrorCode,
) -> Result<Arc<T>> {
    with_live(table, handle, name, kind, code, |object| Ok(object.clone()))
}

/// Runs `f` with the live object a user-owned handle names, without taking a reference
/// on it (see `HandleTable::with_live`); a destroyed or made-up handle gets `code`.
pub(crate) fn with_live<T: Send + Sync + 'static, H, R>(
    table: &HandleTable<T>,
    handle: *mut H,
    name: &str,
    kind: &str,
    code: ErrorCode,
    f: impl FnOnce(&Arc<T>) -> Result<R>,
) -> Result<R> {
    if handle.is_null() {
        return Err(null_handle(name));
    }
    table.with_live(handle as usize, f).unwrap_or_else(|| {
        Err(Error::new(
            code,
            format!("{name} {handle:p} is not a live {kind} (destroyed already, or never created)"),
        ))
    })
}

/// LLVM checks every NULL handle before any NULL pointer, and both before anything else;
/// this is the first of the two checks (`device`, `live`, ... check liveness later).
#[inline]
pub(crate) fn handle_given<T>(handle: *mut T, name: &str) -> Result<()> {
    if handle.is_null() {
        return Err(null_handle(name));
    }
    Ok(())
}

#[cold]
pub(crate) fn null_handle(name: &str) -> Error {
    Error::null_handle(format!("{name} is NULL; expected a valid handle"))
}

/// An out-pointer the function writes through.
#[inline]
pub(crate) fn out_ptr<'a, T>(ptr: *mut T, name: &str) -> Result<&'a mut T> {
    if ptr.is_null() {
        return Err(null_out_pointer(name));
    }
    // SAFETY: non-NULL, and the C caller guarantees it points to a writable `T`.
    // Unaligned or dangling pointers are the caller's contract, as for any C API.
    Ok(unsafe { &mut *ptr })
}

#[cold]
fn null_out_pointer(name: &str) -> Error {
    Error::null_pointer(format!(
        "{name} is NULL; expected a pointer to write the result to"
    ))
}

#[inline]
pub(crate) fn non_null<T>(ptr: *const T, name: &str) -> Result<usize> {
    if ptr.is_null() {
        return Err(null_pointer(name));
    }
    Ok(ptr as usize)
}

#[cold]
fn null_pointer(name: &str) -> Error {
    Error::null_pointer(format!("{name} is NULL; expected a valid pointer"))
}

/// An enumeration argument: `value` must convert to `E`; `expected` lists the valid ones.
#[inline]
pub(crate) fn enumeration<E: TryFrom<u32>>(value: u32, name: &str, expected: &str) -> Result<E> {
    match E::try_from(value) {
        Ok(e) => Ok(e),
        Err(_) => Err(not_an_enumerator(value, name, expected)),
    }
}

#[cold]
fn not_an_enumerator(value: u32, name: &str, expected: &str) -> Error {
    Error::invalid_enumeration(format!("{name} is {value}; expected {expected}"))
}

/// A caller's iteration callback: `bool (*)(handle, void *user_data)`.
pub(crate) type IterateCallback<H> =
    Option<unsafe extern "C" fn(*mut H, *mut std::ffi::c_void) -> bool>;

/// The body of `olIteratePlatforms` / `olIterateDevices`: calls `callback` with each
/// handle (`handle_at(runtime, i)` for i = 0, 1, ...) until it returns false.
pub(crate) fn iterate<H>(
    function: &str,
    loc: *const crate::capi::types::ol_code_location_t,
    callback: IterateCallback<H>,
    user_data: *mut std::ffi::c_void,
    handle_at: impl Fn(&Runtime, usize) -> Option<usize>,
) -> crate::capi::types::ol_result_t {
    crate::capi::entry::call(
        function,
        loc,
        |_| {
            let f = callback.map_or(std::ptr::null(), |f| f as *const ());
            format!("Callback={f:p}, UserData={user_data:p}")
        },
        || {
            // Our own reference to the runtime, taken once: the callback may call into the
            // library, olShutDown included, and the list it walks stays valid.
            let rt = with_runtime(|rt| Ok(rt.clone()))?;
            let callback = callback
                .ok_or_else(|| Error::null_pointer("Callback is NULL; expected a function"))?;
            let mut i = 0;
            while let Some(handle) = handle_at(&rt, i) {
                // SAFETY: a C function pointer the caller supplied, called with a live
                // handle and the caller's own `UserData`.
                if !unsafe { callback(handle as *mut H, user_data) } {
                    break;
                }
                i += 1;
            }
            Ok(())
        },
    )
}
