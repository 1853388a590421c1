//! The `interop` construct (`__tgt_interop_init/use/destroy`) and the interop property
//! queries. An interop object hands a foreign runtime's handles (a CUDA stream, an HSA
//! queue) to the program; liboffload's API has no such handles to give, so no device
//! here has interop objects: `init` yields `omp_interop_none`, as LLVM 19 does for a
//! device whose plugin cannot fill one (its host plugin). The `depend` clauses of the
//! construct are honoured all the same. The queries answer with the return codes LLVM
//! uses, and never read an object this library did not make.

use crate::boundary::boundary;
use crate::deps::{self, DependInfo};
use crate::policy::message;
use crate::registry;
use std::ffi::{c_char, c_int, c_void};

/// `omp_interop_rc_t`.
const OMP_IRC_EMPTY: c_int = -1;
const OMP_IRC_OUT_OF_RANGE: c_int = -2;
const OMP_IRC_OTHER: c_int = -6;

/// `omp_ipr_first`: the lowest property id (`omp_ipr_targetsync`); ids run up to -1.
const OMP_IPR_FIRST: c_int = -9;

/// `kmp_interop_type_tasksync`: the object carries a queue (`init(targetsync: ...)`).
const INTEROP_TYPE_TASKSYNC: i32 = 2;

/// `interop init(...)`: waits for the dependences, then answers `omp_interop_none`.
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
        let device = if device_id == -1 {
            registry::default_device()
        } else {
            i64::from(device_id)
        };
        if interop_type == INTEROP_TYPE_TASKSYNC {
            // SAFETY: clang's dependence list of `ndeps` entries.
            unsafe { deps::wait(loc, Some(gtid), ndeps, dep_list) };
        }
        message(&format!(
            "error: interop objects are not supported on device {device}: liboffload has no foreign-runtime handles; the object is omp_interop_none"
        ));
        if !interop_ptr.is_null() {
            // SAFETY: non-NULL: the program's omp_interop_t.
            unsafe { *interop_ptr = std::ptr::null_mut() };
        }
    })
}

/// `interop use(...)`: only its dependences remain to honour (no object exists).
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

/// `interop destroy(...)`: honours the dependences; the object becomes
/// `omp_interop_none` (this library made no object, so there is nothing to free).
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
        if !interop_ptr.is_null() {
            // SAFETY: non-NULL: the program's omp_interop_t.
            unsafe { *interop_ptr = std::ptr::null_mut() };
        }
    })
}

/// The return code of a property query: LLVM checks the id's range first; then an
/// `omp_interop_none` object is empty, and any other object is not one of ours.
fn query_code(interop: *const c_void, property_id: c_int) -> c_int {
    if !(OMP_IPR_FIRST..0).contains(&property_id) {
        OMP_IRC_OUT_OF_RANGE
    } else if interop.is_null() {
        OMP_IRC_EMPTY
    } else {
        OMP_IRC_OTHER
    }
}

/// # Safety
/// `err` is NULL or writable.
unsafe fn report(err: *mut c_int, code: c_int) {
    if !err.is_null() {
        // SAFETY: non-NULL: the caller's int.
        unsafe { *err = code };
    }
}

/// An integer property: none to give (0, the reason in `*err`).
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
        unsafe { report(err, query_code(interop, property_id)) };
        0
    })
}

/// A pointer property: none to give (NULL, the reason in `*err`).
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
        unsafe { report(err, query_code(interop, property_id)) };
        std::ptr::null_mut()
    })
}

/// A string property: none to give (NULL, the reason in `*err`).
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
        unsafe { report(err, query_code(interop, property_id)) };
        std::ptr::null()
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

// LLVM 22's OpenMP 6.0 interop entry points (exported by libomptarget.so.22.1). No device
// of ours has a foreign-runtime object, so, as LLVM's own library answers for such a
// device, there is never an interop object: `get` gives `omp_interop_none` and the calls
// on an object fail. (Their dependence lists are not waited for: with no object there is
// nothing for the dependences to order.)

/// `omp_interop_none`: no device here has a foreign-runtime object to hand out.
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
    boundary("__tgt_interop_use60", || crate::abi::OFFLOAD_FAIL)
}

/// Releasing an interop object: there is none (`OFFLOAD_FAIL`, as LLVM for NULL).
#[no_mangle]
pub extern "C" fn __tgt_interop_release(
    _loc: *mut c_void,
    _interop: *mut c_void,
    _ctx: *mut c_void,
    _deps: *mut c_void,
) -> c_int {
    boundary("__tgt_interop_release", || crate::abi::OFFLOAD_FAIL)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_is_checked_before_the_object() {
        let none = std::ptr::null();
        assert_eq!(query_code(none, 0), OMP_IRC_OUT_OF_RANGE);
        assert_eq!(query_code(none, -10), OMP_IRC_OUT_OF_RANGE);
        assert_eq!(query_code(none, -1), OMP_IRC_EMPTY);
        assert_eq!(query_code(none, -9), OMP_IRC_EMPTY);
        let foreign = 8 as *const c_void;
        assert_eq!(query_code(foreign, -3), OMP_IRC_OTHER);
    }
}
