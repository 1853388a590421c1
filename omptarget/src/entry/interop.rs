//! The `interop` construct (`__tgt_interop_init/use/destroy`) and the interop property
//! queries. An interop object hands a foreign runtime's handles (a CUDA stream and
//! context, an HSA agent and queue) to the program. On a GPU `init` makes one from
//! liboffload's native handles (`interop_object.rs`); a device without them (the host
//! device, remote devices) gets `omp_interop_none`, as LLVM 19 does for its host plugin.
//! The `depend` clauses of the construct are honoured either way. The queries answer
//! with the return codes LLVM uses, and never read an object this library did not make.

use crate::abi::deps::{self, DependInfo};
use crate::devices::registry::{self, Target};
use crate::plugin::interop_object::{
    as_c_str, int_property, ptr_property, str_property, Answer, InteropObject,
    INTEROP_TYPE_TASKSYNC, OMP_IRC_OTHER,
};
use crate::report::boundary::boundary;
use crate::report::policy::message;
use std::ffi::{c_char, c_int, c_void};

/// `interop init(...)`: waits for the dependences (`targetsync`), then makes the object,
/// or answers `omp_interop_none` where the device has no native handles. For a number
/// that names no offload device LLVM 19 makes an object without handles, and so does this.
///
/// # Safety
/// `interop_ptr` is NULL or points to the program's `omp_interop_t`; `dep_list` holds
/// `ndeps` dependences.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __tgt_interop_init(
    loc: *mut c_void,
    gtid: i32,
    interop_ptr: *mut *mut c_void,
    interop_type: i32,
    device_id: i32,
    ndeps: i32,
    dep_list: *mut DependInfo,
    _have_nowait: i32,
) {
    boundary("__tgt_interop_init", || {
        let device_num = if device_id == -1 {
            registry::default_device()
        } else {
            i64::from(device_id)
        };
        if interop_type == INTEROP_TYPE_TASKSYNC {
            // SAFETY: clang's dependence list of `ndeps` entries.
            unsafe { deps::wait(loc, Some(gtid), ndeps, dep_list) };
        }
        let object = match registry::resolve(device_num) {
            Some(Target::Device(number)) => {
                let handle = registry::state().copy_devices(number).map(|d| d.device);
                match handle.map(|d| InteropObject::create(interop_type, device_num, d)) {
                    Some(Ok(object)) => object,
                    Some(Err(e)) => {
                        message(&format!(
                            "error: no interop object for device {device_num}: {e}; the object is omp_interop_none"
                        ));
                        std::ptr::null_mut()
                    }
                    None => std::ptr::null_mut(),
                }
            }
            // LLVM makes an object without handles for a number that names no offload
            // device (the initial device's included).
            _ => InteropObject::without_device(interop_type, device_num),
        };
        if !interop_ptr.is_null() {
            // SAFETY: non-NULL: the program's omp_interop_t.
            unsafe { *interop_ptr = object };
        }
    })
}

/// `interop use(...)`: honours the dependences (the object's queue needs nothing more).
///
/// # Safety
/// As `__tgt_interop_init`.
#[no_mangle]
pub unsafe extern "C" fn __tgt_interop_use(
    loc: *mut c_void,
    gtid: i32,
    _interop_ptr: *mut *mut c_void,
    _device_id: i32,
    ndeps: i32,
    dep_list: *mut DependInfo,
    _have_nowait: i32,
) {
    boundary("__tgt_interop_use", || {
        // SAFETY: clang's dependence list of `ndeps` entries.
        unsafe { deps::wait(loc, Some(gtid), ndeps, dep_list) };
    })
}

/// `interop destroy(...)`: honours the dependences, ends the object (its queue's work
/// done first), and the program's variable becomes `omp_interop_none`. An object made
/// for no device stays (LLVM only records that the device does not exist).
///
/// # Safety
/// As `__tgt_interop_init`.
#[no_mangle]
pub unsafe extern "C" fn __tgt_interop_destroy(
    loc: *mut c_void,
    gtid: i32,
    interop_ptr: *mut *mut c_void,
    _device_id: i32,
    ndeps: i32,
    dep_list: *mut DependInfo,
    _have_nowait: i32,
) {
    boundary("__tgt_interop_destroy", || {
        // SAFETY: clang's dependence list of `ndeps` entries.
        unsafe { deps::wait(loc, Some(gtid), ndeps, dep_list) };
        if interop_ptr.is_null() {
            return;
        }
        // SAFETY: non-NULL: the program's omp_interop_t.
        let object = unsafe { *interop_ptr };
        if InteropObject::kept_by_destroy(object) {
            return;
        }
        InteropObject::destroy(object);
        // SAFETY: as above.
        unsafe { *interop_ptr = std::ptr::null_mut() };
    })
}

/// # Safety
/// `err` is NULL or writable.
unsafe fn report<T>(err: *mut c_int, answer: Answer<T>) -> T {
    if !err.is_null() {
        // SAFETY: non-NULL: the caller's int.
        unsafe { *err = answer.code };
    }
    answer.value
}

/// An integer property (0 and the reason in `*err` where there is none).
///
/// # Safety
/// `err` is NULL or points to an int.
#[no_mangle]
pub unsafe extern "C" fn omp_get_interop_int(
    interop: *const c_void,
    property_id: c_int,
    err: *mut c_int,
) -> isize {
    boundary("omp_get_interop_int", || {
        // SAFETY: the caller's promise, passed on.
        unsafe { report(err, int_property(interop, property_id)) }
    })
}

/// A pointer property (NULL and the reason in `*err` where there is none).
///
/// # Safety
/// `err` is NULL or points to an int.
#[no_mangle]
pub unsafe extern "C" fn omp_get_interop_ptr(
    interop: *const c_void,
    property_id: c_int,
    err: *mut c_int,
) -> *mut c_void {
    boundary("omp_get_interop_ptr", || {
        // SAFETY: the caller's promise, passed on.
        unsafe { report(err, ptr_property(interop, property_id)) as *mut c_void }
    })
}

/// A string property (NULL and the reason in `*err` where there is none).
///
/// # Safety
/// `err` is NULL or points to an int.
#[no_mangle]
pub unsafe extern "C" fn omp_get_interop_str(
    interop: *const c_void,
    property_id: c_int,
    err: *mut c_int,
) -> *const c_char {
    boundary("omp_get_interop_str", || {
        // SAFETY: the caller's promise, passed on.
        as_c_str(unsafe { report(err, str_property(interop, property_id)) })
    })
}

/// A property's name: LLVM 19 answers NULL for every property; so does this library.
#[no_mangle]
pub extern "C" fn omp_get_interop_name(
    _interop: *const c_void,
    _property_id: c_int,
) -> *const c_char {
    boundary("omp_get_interop_name", std::ptr::null)
}

/// A property's type description: NULL, as LLVM 19 answers.
#[no_mangle]
pub extern "C" fn omp_get_interop_type_desc(
    _interop: *const c_void,
    _property_id: c_int,
) -> *const c_char {
    boundary("omp_get_interop_type_desc", std::ptr::null)
}

// LLVM 22's OpenMP 6.0 interop entry points (exported by libomptarget.so.22.1). They
// make no object yet (only LLVM 19's `__tgt_interop_init` does, on GPUs): clang-22
// builds nothing for a GPU here to check them against, and on the host device LLVM 22's
// own library answers the same way: `get` gives `omp_interop_none` and the calls on an
// object fail. (Their dependence lists are not waited for: with no object there is
// nothing for the dependences to order.)

/// `omp_interop_none`: this entry point makes no object (see above).
#[no_mangle]
pub extern "C" fn __tgt_interop_get(
    _loc: *mut c_void,
    _interop_type: i32,
    _device_num: i64,
    _num_prefers: i32,
    _prefers: *mut c_void,
    _ctx: *mut c_void,
    _deps: *mut c_void,
) -> *mut c_void {
    boundary("__tgt_interop_get", std::ptr::null_mut)
}

/// Using an interop object: there is none (`OFFLOAD_FAIL`, as LLVM for NULL).
#[no_mangle]
pub extern "C" fn __tgt_interop_use60(
    _loc: *mut c_void,
    _interop: *mut c_void,
    _ctx: *mut c_void,
    _deps: *mut c_void,
) -> c_int {
    boundary("__tgt_interop_use60", || crate::abi::types::OFFLOAD_FAIL)
}

/// Releasing an interop object: there is none (`OFFLOAD_FAIL`, as LLVM for NULL).
#[no_mangle]
pub extern "C" fn __tgt_interop_release(
    _loc: *mut c_void,
    _interop: *mut c_void,
    _ctx: *mut c_void,
    _deps: *mut c_void,
) -> c_int {
    boundary("__tgt_interop_release", || crate::abi::types::OFFLOAD_FAIL)
}

/// A completion callback needs an interop object: `omp_irc_other`, as LLVM for NULL.
#[no_mangle]
pub extern "C" fn ompx_interop_add_completion_callback(
    _interop: *mut c_void,
    _callback: *mut c_void,
    _data: *mut c_void,
) -> c_int {
    boundary("ompx_interop_add_completion_callback", || OMP_IRC_OTHER)
}
