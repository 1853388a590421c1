//! The two calls a `declare mapper` function makes while `mapping::mapper` expands it.

use crate::mapping::mapper;
use crate::report::boundary::boundary;
use std::ffi::c_void;

/// How many components the mapper call behind `handle` has pushed so far.
///
/// # Safety
/// `handle` is the handle a mapper function was called with (or NULL).
#[no_mangle]
pub unsafe extern "C" fn __tgt_mapper_num_components(handle: *mut c_void) -> i64 {
    boundary("__tgt_mapper_num_components", || {
        // SAFETY: the caller's promise, passed on.
        unsafe { mapper::component_count(handle) }
    })
}

/// Adds one component to the mapper call behind `handle`.
///
/// # Safety
/// `handle` is the handle a mapper function was called with (or NULL).
#[no_mangle]
pub unsafe extern "C" fn __tgt_push_mapper_component(
    handle: *mut c_void,
    base: *mut c_void,
    begin: *mut c_void,
    size: i64,
    map_type: i64,
    name: *mut c_void,
) {
    boundary("__tgt_push_mapper_component", || {
        // SAFETY: the caller's promise, passed on.
        unsafe { mapper::push_component(handle, base, begin, size, map_type, name) }
    })
}
