//! Turning C arguments into runtime values: handles into objects, integers into enums,
//! out-pointers into references. Each failure names the argument and what was expected.

use crate::runtime::error::{Error, ErrorCode, Result};
use crate::runtime::handle_table::HandleTable;
use crate::runtime::{self, Device, Platform, Runtime};
use std::sync::Arc;

/// Runs `f` with the live runtime, or answers `OL_ERRC_UNINITIALIZED`.
pub(crate) fn with_runtime<R>(f: impl FnOnce(&Arc<Runtime>) -> Result<R>) -> Result<R> {
    runtime::with_current(f)
}

pub(crate) fn device<'a, T>(
    rt: &'a Runtime,
    handle: *mut T,
    name: &str,
) -> Result<&'a Arc<Device>> {
    if handle.is_null() {
        return Err(null_handle(name));
    }
    rt.device_by_handle(handle as usize).ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidDevice,
            format!(
                "{name} {handle:p} is not a device handle of this library (stale after olShutDown, or never returned by olIterateDevices)"
            ),
        )
    })
}

pub(crate) fn platform<'a, T>(
    rt: &'a Runtime,
    handle: *mut T,
    name: &str,
) -> Result<&'a Arc<Platform>> {
    if handle.is_null() {
        return Err(null_handle(name));
    }
    rt.platform_by_handle(handle as usize).ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidPlatform,
            format!(
                "{name} {handle:p} is not a platform handle of this library (stale after olShutDown, or never returned by olIteratePlatforms)"
            ),
        )
    })
}

/// Looks a user-owned handle (queue, event, program, symbol) up in its table of live
/// objects; a destroyed or made-up one gets `code`.
pub(crate) fn live<T, H>(
    table: &HandleTable<T>,
    handle: *mut H,
    name: &str,
    kind: &str,
    code: ErrorCode,
) -> Result<Arc<T>> {
    if handle.is_null() {
        return Err(null_handle(name));
    }
    table.get(handle as usize).ok_or_else(|| {
        Error::new(
            code,
            format!("{name} {handle:p} is not a live {kind} (destroyed already, or never created)"),
        )
    })
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
pub(crate) fn handle_given<T>(handle: *mut T, name: &str) -> Result<()> {
    if handle.is_null() {
        return Err(null_handle(name));
    }
    Ok(())
}

pub(crate) fn null_handle(name: &str) -> Error {
    Error::null_handle(format!("{name} is NULL; expected a valid handle"))
}

/// An out-pointer the function writes through.
pub(crate) fn out_ptr<'a, T>(ptr: *mut T, name: &str) -> Result<&'a mut T> {
    if ptr.is_null() {
        return Err(Error::null_pointer(format!(
            "{name} is NULL; expected a pointer to write the result to"
        )));
    }
    // SAFETY: non-NULL, and the C caller guarantees it points to a writable `T`.
    // Unaligned or dangling pointers are the caller's contract, as for any C API.
    Ok(unsafe { &mut *ptr })
}

pub(crate) fn non_null<T>(ptr: *const T, name: &str) -> Result<usize> {
    if ptr.is_null() {
        return Err(Error::null_pointer(format!(
            "{name} is NULL; expected a valid pointer"
        )));
    }
    Ok(ptr as usize)
}

/// An enumeration argument: `value` must convert to `E`; `expected` lists the valid ones.
pub(crate) fn enumeration<E: TryFrom<u32>>(value: u32, name: &str, expected: &str) -> Result<E> {
    E::try_from(value)
        .map_err(|_| Error::invalid_enumeration(format!("{name} is {value}; expected {expected}")))
}

/// A caller's iteration callback: `bool (*)(handle, void *user_data)`.
pub(crate) type IterateCallback<H> =
    Option<unsafe extern "C" fn(*mut H, *mut std::ffi::c_void) -> bool>;

/// The body of `olIteratePlatforms` / `olIterateDevices`: calls `callback` with each
/// handle until it returns false.
pub(crate) fn iterate<H>(
    function: &str,
    loc: *const crate::capi::types::ol_code_location_t,
    callback: IterateCallback<H>,
    user_data: *mut std::ffi::c_void,
    handles: impl FnOnce(&Runtime) -> Vec<usize>,
) -> crate::capi::types::ol_result_t {
    crate::capi::entry::call(
        function,
        loc,
        || {
            let f = callback.map_or(std::ptr::null(), |f| f as *const ());
            format!("Callback={f:p}, UserData={user_data:p}")
        },
        || {
            // The handles are collected first, so the callback may call into the library.
            let handles = with_runtime(|rt| Ok(handles(rt)))?;
            let callback = callback
                .ok_or_else(|| Error::null_pointer("Callback is NULL; expected a function"))?;
            for handle in handles {
                // SAFETY: a C function pointer the caller supplied, called with a live
                // handle and the caller's own `UserData`.
                if !unsafe { callback(handle as *mut H, user_data) } {
                    break;
                }
            }
            Ok(())
        },
    )
}
