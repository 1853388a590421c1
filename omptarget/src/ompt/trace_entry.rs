//! The tracing functions a tool finds through the lookup `device_initialize` hands it
//! (`ompt_set_trace_ompt`, `ompt_start_trace`, ...), with OMPT's signatures and answers.
//! A device handle that is not one this library gave is refused (the failure answer of
//! each function), as is a missing callback; nothing a tool passes can crash the program.

use crate::ompt::trace_device::{from_handle, kind_of, TraceDevice, RECORD_BYTES};
use crate::ompt::types::{
    record_kind, set_result, BufferCompleteFn, BufferRequestFn, DeviceTime, InterfaceFn, Record,
};
use std::ffi::{c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The function a tool asks for by `name`, `None` for one this library does not offer.
pub fn lookup(name: &CStr) -> Option<InterfaceFn> {
    // SAFETY (each cast): a function pointer handed out as OMPT's generic type; the
    // tool casts it back to the type the name documents, which is this function's.
    let f: *const () = match name.to_bytes() {
        b"ompt_set_trace_ompt" => set_trace_ompt as *const (),
        b"ompt_start_trace" => start_trace as *const (),
        b"ompt_pause_trace" => pause_trace as *const (),
        b"ompt_flush_trace" => flush_trace as *const (),
        b"ompt_stop_trace" => stop_trace as *const (),
        b"ompt_advance_buffer_cursor" => advance_buffer_cursor as *const (),
        b"ompt_get_record_type" => get_record_type as *const (),
        b"ompt_get_record_ompt" => get_record_ompt as *const (),
        b"ompt_get_device_time" => get_device_time as *const (),
        b"ompt_translate_time" => translate_time as *const (),
        _ => return None,
    };
    // SAFETY: `f` is one of the functions above, a non-NULL function pointer.
    Some(unsafe { std::mem::transmute::<*const (), InterfaceFn>(f) })
}

/// `f` on the device `handle` names, `fail` for a handle that is not one, or a panic.
fn on_device<R>(handle: *mut c_void, fail: R, f: impl FnOnce(&'static TraceDevice) -> R) -> R {
    match from_handle(handle) {
        Some(device) => catch_unwind(AssertUnwindSafe(|| f(device))).unwrap_or(fail),
        None => fail,
    }
}

/// `int ompt_set_trace_ompt(ompt_device_t *, unsigned int enable, unsigned int etype)`:
/// `ompt_set_always` for the device events (every one of them for `etype` 0),
/// `ompt_set_never` for events no device records, `ompt_set_error` for a bad device.
unsafe extern "C" fn set_trace_ompt(device: *mut c_void, enable: u32, etype: u32) -> c_int {
    on_device(device, set_result::ERROR, |d| {
        match kind_of(c_int::try_from(etype).unwrap_or(-1)) {
            Some(kinds) => {
                d.enable(kinds, enable != 0);
                set_result::ALWAYS
            }
            None => set_result::NEVER,
        }
    })
}

/// `int ompt_start_trace(ompt_device_t *, request, complete)`: 1 when tracing started.
unsafe extern "C" fn start_trace(
    device: *mut c_void,
    request: Option<BufferRequestFn>,
    complete: Option<BufferCompleteFn>,
) -> c_int {
    let (Some(request), Some(complete)) = (request, complete) else {
        return 0;
    };
    on_device(device, 0, |d| {
        d.start(request, complete);
        1
    })
}

/// `int ompt_pause_trace(ompt_device_t *, int begin_pause)`.
unsafe extern "C" fn pause_trace(device: *mut c_void, begin_pause: c_int) -> c_int {
    on_device(device, 0, |d| c_int::from(d.pause(begin_pause != 0)))
}

/// `int ompt_flush_trace(ompt_device_t *)`.
unsafe extern "C" fn flush_trace(device: *mut c_void) -> c_int {
    on_device(device, 0, |d| c_int::from(d.flush()))
}

/// `int ompt_stop_trace(ompt_device_t *)`.
unsafe extern "C" fn stop_trace(device: *mut c_void) -> c_int {
    on_device(device, 0, |d| c_int::from(d.stop()))
}

/// `int ompt_advance_buffer_cursor(ompt_device_t *, ompt_buffer_t *, size_t size,
/// ompt_buffer_cursor_t current, ompt_buffer_cursor_t *next)`: a cursor is a record's
/// address; `size` is the byte count the complete callback gave. 0, and a NULL cursor,
/// past the last record. (The device may be NULL: tools pass none here.)
unsafe extern "C" fn advance_buffer_cursor(
    _device: *mut c_void,
    buffer: *mut c_void,
    size: usize,
    current: u64,
    next: *mut u64,
) -> c_int {
    let start = buffer as u64;
    let end = start.saturating_add(size as u64);
    let following = current.saturating_add(RECORD_BYTES as u64);
    let more = !buffer.is_null()
        && current >= start
        && (current - start) % RECORD_BYTES as u64 == 0
        && following.saturating_add(RECORD_BYTES as u64) <= end;
    if !next.is_null() {
        // SAFETY: the tool's place for the next cursor.
        unsafe { next.write(if more { following } else { 0 }) };
    }
    c_int::from(more)
}

/// `ompt_record_t ompt_get_record_type(ompt_buffer_t *, ompt_buffer_cursor_t)`.
unsafe extern "C" fn get_record_type(buffer: *mut c_void, current: u64) -> c_int {
    if buffer.is_null() || current == 0 {
        record_kind::INVALID
    } else {
        record_kind::OMPT
    }
}

/// `ompt_record_ompt_t *ompt_get_record_ompt(ompt_buffer_t *, ompt_buffer_cursor_t)`:
/// the record at the cursor, NULL for none.
unsafe extern "C" fn get_record_ompt(buffer: *mut c_void, current: u64) -> *mut Record {
    if buffer.is_null() {
        return std::ptr::null_mut();
    }
    current as usize as *mut Record
}

/// `ompt_device_time_t ompt_get_device_time(ompt_device_t *)`: 0 for a bad device.
unsafe extern "C" fn get_device_time(device: *mut c_void) -> DeviceTime {
    on_device(device, 0, |d| d.now())
}

/// `double ompt_translate_time(ompt_device_t *, ompt_device_time_t)`: the time on
/// `omp_get_wtime`'s clock; 0 for a bad device.
unsafe extern "C" fn translate_time(device: *mut c_void, time: DeviceTime) -> f64 {
    on_device(device, 0.0, |d| d.translate(time))
}
